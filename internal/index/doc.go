// Package index is trawl's embedded full-text index and its search API.
//
// An Index is one or more partitions under one directory, each a bleve
// index (scorch segments) with its versions sidecar (versions.go); a
// document lives in the partition of a hash of its ID (partition.go).
// Apply applies a batch's documents to their partitions in parallel, and
// Search queries every partition through a bleve index alias, which merges
// the hits by score. Each partition scores with its own term statistics
// (bleve's tf-idf has no global statistics), so the order of close hits
// may differ from one partition's; one partition (the default) keeps the
// order exactly. Each document is one URL in one content collection; its
// fields are:
//
//	url         the document's URL (keyword, stored)
//	site        the host name, lower case (keyword, stored)
//	domains     the host and every parent domain (keyword; for site:)
//	title       the title (text, stored, highlighted)
//	body        the extracted text (text, stored, highlighted)
//	anchor      anchor text of links pointing to the document (text; the
//	            last partial update's, kept in the versions sidecar)
//	summary     the first few hundred bytes of the body (stored only)
//	mime        the MIME type, lower case, no parameters (keyword, stored)
//	type        the MIME type's family: html, pdf, text, office, xml, other
//	modified    the Last-Modified time (date, stored)
//	collection  the content collection (keyword, stored)
//	lang        the language (keyword, stored)
//	rank        a static rank filled by link analysis (number, default 0)
//
// Apply takes batches of add/update/remove operations and is idempotent: each
// operation carries a version (the feeder's sequence number), the index keeps
// the last version applied per document in bleve's internal key space, and an
// operation whose version is not newer is skipped. A resent operation is
// therefore never a double entry, and a stale one never undoes a newer one.
// A partial update (Op.Fields: the rank and anchor text of link analysis)
// is merged into the stored document, its version compared with the
// document's partial updates only (fields.go).
// Apply returns only once bleve has persisted the batch, so a caller may
// forget an operation as soon as Apply says it is applied. bleve runs with
// unsafe_batch: its Batch returns once the batch is searchable, and Apply
// waits for the batch's persisted callback with the partition unlocked,
// so the next batch is analysed and its segment built while this one is
// written and fsynced (before, Batch itself waited for the persister with
// the lock held, and batches went through one at a time). The versions of
// batches handed to bleve and not yet saved are kept in memory, so that a
// later batch's version check sees them.
//
// Search parses a query language of its own (see ParseQuery): words (all must
// match, as on every web search engine), a OR b alternatives, "quoted
// phrases", -exclusions, site: and type: filters. Scores are bleve's tf-idf
// scores multiplied, over the first RerankWindow hits, by (1 + rank), by
// the click boost of a URL clicked for this query (Options.Clicks,
// internal/clicks), and by the proximity factor: pages holding the query's
// words next to each other rank above pages where they are scattered.
// bleve 2.5's phrase queries have no slop, so closeness is adjacency: each
// pair of consecutive query words is searched as a phrase among the window's
// hits, and a hit's score is multiplied by 1 + ProximityWeight*k/(n-1), k
// of its n-1 pairs found (all words in a row: 3 times). It is a factor
// rather than a boosted optional clause because a phrase found in the body
// weighs little beside a single word of the short title or anchor fields
// in tf-idf, whatever its boost: on the demo web, the page holding
// "harvest village" stayed 7th of 231 with a clause of boost 2.
//
// Handler serves a JSON API at /api/search and an HTML
// page at /search; NewHandler with a click log also logs the searches and
// sends result links through the /click redirect, which logs the click.
package index
