// Package opensearch feeds crawled documents into an OpenSearch cluster
// instead of (or besides) the embedded index, and searches it: the
// feeding destination `trawl run --index opensearch://HOST:PORT/INDEX`
// and `trawl search --index opensearch://HOST:PORT/INDEX`.
//
// # Address
//
//	opensearch://HOST:PORT[,HOST:PORT...]/INDEX    (http)
//	opensearchs://HOST:PORT[,HOST:PORT...]/INDEX   (https)
//
// Several hosts are nodes of one cluster: the client spreads requests over
// them and retries another when one is down. INDEX is an OpenSearch index
// name (lower case, no spaces, no '/', '\', '*', '?', '"', '<', '>', '|',
// ',', '#', ':'; not starting with '_', '-' or '+').
//
// # Index and mapping
//
// Before it feeds, a session installs the index template "trawl-INDEX"
// (pattern INDEX, so that an index deleted by hand comes back with the
// mapping), creates INDEX when it is missing, and puts the mapping on it
// (which merges into an existing index, or fails with OpenSearch's
// "mapper [f] cannot be changed from type [a] to [b]" when the index was
// made with another mapping: a mapping conflict; the dial fails with that
// message, the feeder backs off and tries again, and the operations wait in
// the outbox until an operator fixes or deletes the index). The mapping
// ("dynamic": false: unknown fields are kept in _source, not indexed) has
// the fields of the embedded index (internal/index), with the same names:
//
//	url, site, domains, mime, type, collection, lang   keyword
//	title, body, anchor                                 text (standard analyzer)
//	summary                                             text, not indexed (shown when no fragment matches)
//	modified                                            date (left out when unknown)
//	rank                                                float (0 until link analysis sets it)
//	links, duplicates, redirects, mirrors               keyword, not indexed
//
// # Bulk layout
//
// Each operation of a feeding batch is one action of a _bulk request,
// sent through opensearch-go's bulk indexer (opensearchutil): newline
// delimited JSON, an action line and, for an add or update, the document:
//
//	{"index":{"_index":INDEX,"_id":ID,"version":SEQ,"version_type":"external"}}
//	{"url":...,"site":...,"title":...,...}
//	{"delete":{"_index":INDEX,"_id":ID,"version":SEQ,"version_type":"external"}}
//
// ID is the embedded index's document ID, collection 0x1F URL, or when
// that is longer than OpenSearch's 512-byte limit, "sha256:" and the hex
// SHA-256 of it. SEQ is the operation's outbox sequence number, which
// grows with every operation the crawl feeds, so external versioning makes
// the feeding idempotent, as the embedded index's versions sidecar does:
// OpenSearch applies an operation only if its version is greater than the
// document's (a delete leaves a versioned tombstone for index.gc_deletes,
// 60 s by default), and answers 409 (version conflict) otherwise. 409 is
// therefore success: the document already holds this operation or a newer
// one (a resend after a crash or a lost answer). A delete of a document
// OpenSearch never had (404) is success too. Because the versions are the
// outbox's, one OpenSearch index takes one crawl data directory's feeding:
// a crawl started afresh (new --data) must feed a new or emptied index, or
// its first operations would be older than the documents there.
//
// # Guarantees
//
// An item answered 2xx is on the primary and its in-sync replicas and in
// their translogs (index.translog.durability "request", the default, fsyncs
// before answering), so the feeder forgets it from the outbox only then.
// Every other answer keeps the operation in the outbox: a failed request
// (node down, connection refused, timeout) and every per-item refusal
// (429 es_rejected_execution_exception, a write block, a mapper_parsing
// error of a hand-made mapping) are answered as retryable errors, the
// session marks itself failed, the feeder closes it, backs off
// (exponentially, up to 30 s) and dials again, and the operations go
// again. No answer from OpenSearch drops an operation: a permanent refusal
// would lose a document silently, while a waiting one shows in the
// feeding backlog (and the session logs the first refusals of each batch,
// with OpenSearch's error type and reason) until the cause is fixed. Only
// an operation without a URI is rejected for good (by the feeder, as for
// the embedded index).
//
// # Search
//
// Search translates a query of the embedded index's language
// (index.ParseQuery) into the query DSL: each word a most_fields
// multi_match with operator and over title^3, anchor^2 and body, each
// phrase a match_phrase on one of them (bool should), exclusions as
// must_not, site: as a terms filter on domains, type: as a terms filter
// on type (or mime for a MIME type), the collection as a term filter;
// the score is multiplied by 1+rank (function_score: weight 1 plus
// field_value_factor of rank, summed, boost mode multiply) over every hit,
// where the embedded index re-ranks its best 100 only. Highlighting uses
// <mark> tags with HTML encoding, as the search page expects; the facets
// are terms aggregations on site and type (10 each). OpenSearch scores
// with BM25 and global statistics, so close hits may come in another
// order than in the embedded index's tf-idf.
//
// # Tests
//
// The package's tests run against a real two-node OpenSearch 2.19.6
// cluster (so Solr, the fallback, was not needed): two JVMs of the
// launcher in testdata/opensearch (an OpenSearch Node with the netty4 and
// common analysis plugins on its class path, built by Maven from Maven
// Central artifacts; Java 17 runs nothing newer than 2.19), on loopback
// ports, 512 MiB heaps, n1 cluster manager and data, n2 data only. The
// first test that needs it starts it and TestMain stops it; under CI=true a
// missing java, mvn or artifact fails the tests instead of skipping them.
// scripts/opensearch/cluster.sh starts the same cluster by hand.
package opensearch
