// Package warc writes what trawl crawls as web archive files: WARC/1.1
// (ISO 28500), the format of Heritrix, Nutch, StormCrawler, Zeno and
// wget, which pywb and ReplayWeb.page replay.
//
// # The library
//
// Records are built, digested, gzipped and rotated by
// github.com/nlnwa/gowarc/v3 (the National Library of Norway's WARC
// library, used by its Veidemann crawler). github.com/internetarchive/gowarc
// (Zeno's) was the other candidate, but its API is an HTTP client that
// records the traffic it makes itself: trawl has its own fetcher
// (internal/fetch: politeness, cut_off, logins, proxies), so it needs a
// library that writes records it is handed. nlnwa/gowarc does exactly
// that: a record builder that computes WARC-Block-Digest and
// WARC-Payload-Digest (SHA-1, base32 as the WARC 1.1 annex recommends),
// and a file writer that opens every file with a warcinfo record, gzips
// every record as its own gzip member (so a reader can seek to any
// record), names files through a generator, writes them as NAME.open and
// renames them when closed, and starts a new file before a record would
// take the current one past a size. The Internet Archive module was also
// not obtainable from the Go module proxy here.
//
// # What is written
//
// For every HTTP exchange of a crawl step (each redirect the fetcher
// followed, then the final response), in one file and in this order:
//
//   - a response record: the status line and header block, then the body
//     as received (see internal/fetch capture.go for what "as received"
//     means: net/http parses the header, so it is written back in canonical
//     form; the body keeps its content coding, without the chunked transfer
//     coding, and Transfer-Encoding is left out of the header). A body cut
//     at cut_off, or not read because the response was refused (type,
//     headers, size), gets WARC-Truncated: length. Its header keeps the
//     server's Content-Length: pywb's identity replay (id_) sends that
//     header with the shorter body, so a browser waits for the rest (a
//     parser-blocking script holds the page up); its normal, rewriting
//     replay sends the body chunked and the page loads;
//   - or a revisit record instead, with only the header block: profile
//     server-not-modified for a 304 answer to a conditional request, and
//     identical-payload-digest for a 2xx body whose SHA-1 equals that of a
//     response written earlier by the same writer (WARC-Refers-To,
//     WARC-Refers-To-Target-URI and WARC-Refers-To-Date name it). The
//     writer remembers up to Options.MaxDigests payloads (a million by
//     default, some 100 MB), in memory: after a restart the first copy of
//     a payload is written whole again;
//   - a request record (WARC-Concurrent-To the response): the request line,
//     Host and the header fields trawl sent, written back the same way;
//   - for the final exchange, a metadata record (application/warc-fields):
//     fetchTimeMs, ip, collection, and one outlink field per link the step
//     followed.
//
// robots.txt downloads are not archived (they are not documents of the
// collection); nor are the requests of use_javascript rendering and form
// logins.
//
// # Files
//
// Files are named PREFIX-TIME-SERIAL-NODE.warc.gz: the prefix
// (warc/file_prefix, default "trawl"), the UTC time the file was opened
// (14 digits), a serial number (5 digits, continuing after the files of
// the same prefix and node already in the directory) and the node
// scheduler's name, so that the nodes of a multi-machine crawl can share
// a directory. A file is closed before a record would take it past the
// size (warc/max_size, default 1 GiB); a record is never split, so a
// record larger than the size gets a file of its own.
//
// # Digests and gzip
//
// The Writer computes WARC-Block-Digest and WARC-Payload-Digest itself
// (SHA-1, base32), one pass over the bytes each, and has gowarc neither
// validate nor copy the blocks (its validation would hash them again);
// gowarc digests only the warcinfo records it builds. Records are gzipped
// at gzip.BestSpeed: on the demo web the archive was 2% larger than at
// the default level (16.01 against 15.68 MB for 6,784 pages).
//
// gowarc's record builders all write one unsynchronized package-level
// switch of github.com/google/uuid (EnableRandPool), so the package
// serializes its use of gowarc (gowarcMu): the Writers of a process take
// turns, which costs nothing with one Writer, the usual case.
//
// # Off the event loop
//
// A Writer has one goroutine (Run) and a bounded queue (Options.Queue,
// 256 captures). The node scheduler's fetch workers hand their captures to
// it (Add) after the fetch, off the event loop; a full queue makes them
// wait, which slows the crawl rather than losing records. A write error is
// logged and counted (Stats.Errors); the crawl goes on. When the crawl
// stops, the writer writes what is queued and closes its file. Without
// WARC the fetcher copies nothing: the capture is asked for per request
// (fetch.Request.Capture).
//
// # Switching it on
//
// Per collection, with trawl's extension of the configuration (a section
// MS-FSCCFG does not define, which trawl config check accepts):
//
//	<section name="warc">
//	  <attrib name="enable" type="boolean"> yes </attrib>
//	  <attrib name="dir" type="string"> warc </attrib>
//	  <attrib name="file_prefix" type="string"> trawl </attrib>
//	  <attrib name="max_size" type="integer"> 1024 </attrib>
//	</section>
//
// or for every collection of a run with trawl run --warc DIR.
//
// # Export
//
// trawl export warc writes the documents of a crawl store as WARC, for a
// crawl that ran without it (Export): one response record per stored
// document (the stored HTTP header, or one made of the stored status and
// type, then the stored body) and a metadata record naming the
// collection; no request record, the store does not keep requests. The
// store keeps bodies decoded, so Content-Encoding and Transfer-Encoding
// leave the header and Content-Length is the body's: the payload digests
// are those of the crawl-time WARC when the server sent no content coding
// (accept_compression no, or a server that does not compress), the
// digests of the decoded bodies otherwise. Duplicates, whose bodies the
// store drops (store_dupes no), are not exported.
//
// trawl export also writes the CDXJ index of the files it wrote
// (WriteCDXJ): one line per response and revisit record, "SURT TIMESTAMP
// JSON", sorted, with url, mime, status, digest, length, offset and
// filename, as pywb's and cdxj-indexer's; the SURT keeps a non-default
// port and drops a leading www.
package warc
