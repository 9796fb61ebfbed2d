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
//	anchor      anchor text of links pointing to the document (text)
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
// phrases", -exclusions, site: and type: filters. Proximity: pages holding
// the query's words next to each other score more. bleve 2.5's phrase
// queries have no slop, so closeness is adjacency: beside the required
// words, the query's words as one phrase and each pair of consecutive words
// as a phrase are optional clauses (boost proximityBoost on top of the
// field boosts); bleve's coordination scores a page by how many of them it
// holds, and the whole phrase implies them all. Scores are bleve's tf-idf
// scores multiplied by (1 + rank), and by the click boost of a URL clicked
// for this query (Options.Clicks, internal/clicks), over the first
// RerankWindow hits. Handler serves a JSON API at /api/search and an HTML
// page at /search; NewHandler with a click log also logs the searches and
// sends result links through the /click redirect, which logs the click.
package index
