// Package crawlpipe is the node scheduler's per-URI crawl pipeline: what a
// fetch worker runs for one queue entry, and the collection settings it
// runs it with. It is the room of internal/nodesched that follows one URI
// from the frontier to an Outcome: robots.txt through the collection's
// cache, politeness pacing per site and IP, the fetch (access.go: cookies,
// credentials, proxies, logins, post_payload), sitemaps and RSS channels
// (extras.go, sitemaps.go), use_javascript rendering (javascript.go), link
// extraction and screening (pipeline.go, pagelinks.go), the focused crawl
// and mirrors (options.go), the checksums and near-duplicate keys, and the
// WARC capture.
//
// # The interface to the rest
//
// What the node scheduler asks of the pipeline (the protocol machine and
// its driver, internal/nodesched):
//
//   - Compile(collection, Env) -> *Settings: a collection's effective
//     configuration compiled once per CMD_ADM_CONF_ADD/UPDATE (collection.go,
//     with the frontier configuration, frontierconf.go and wqlevels.go, and
//     the storage and reporting options the machine applies, storage.go and
//     reported.go). Env is all the outside world the compile needs: the
//     dialer (DNS through the multinode scheduler), the shared transport,
//     the clock, the node's key and WARC writers.
//   - Pipeline.Process(ctx, *Job) -> *Outcome: one crawl step. A Job is
//     the frontier entry (frontier.Fetch), its decoded EntryMeta, the stored
//     record and the Settings it was served with; the Outcome is what the
//     machine commits (status, document, checksum, links screened and
//     ready for routing, robots.txt news, what was skipped and why).
//     Process never writes the store and never talks to a peer: the machine
//     commits the outcome.
//   - Screen and ScreenReason: the same URI screening for start URIs and
//     for entries the multinode scheduler sends.
//
// What the pipeline asks of the rest: nothing but what a Job carries. It
// reads the crawl store only through Job.Store, a Store (URI, Document,
// Meta: the stored body of a 304 or of a re-extracted entry, the adaptive
// ranking's URI and sitemap records), and never writes it; the frontier,
// the duplicate servers and the multinode scheduler stay on the machine's
// side. The package imports no role package (internal/lint).
//
// # EntryMeta in a frontier entry's Extra
//
// The node scheduler keeps EntryMeta in the opaque Extra of a frontier
// entry, all integers unsigned varints:
//
//	version  byte    1
//	redirs   uvarint consecutive redirects that led to the URI (< 2^20)
//	flags    uvarint (optional) metaFeedItem 1, metaOffLang 2,
//	                 metaFeedChannel 4 (< 256)
//	offlang  uvarint (present when flags has metaOffLang) documents in
//	                 none of the focused languages on the path (< 2^20)
//
// A value that does not parse decodes as the zero EntryMeta.
//
// Errors keep the "nodesched:" prefix of the messages operators and tests
// have always seen: the pipeline is the node scheduler's, not a protocol
// role of its own.
package crawlpipe
