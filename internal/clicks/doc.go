// Package clicks is the click relevance of MS-FSFDMW (3.6.5, the
// spmakefileutils.* functions): the search page logs queries and the
// result clicks that go through its redirect; a dmake build counts the
// clicks per query and URL and gives each URL its relevance for the
// queries it was clicked for; the index multiplies the URL's score for
// those queries (and only those) by a boost.
//
// # Logs
//
// A search front end (index.NewHandler with a Log) appends to files
// under DATA/clicks/log named DATE.KIND, DATE the UTC day (YYYY-MM-DD),
// one record per line, fields separated by one SP. Each record is one
// write to a file opened with O_APPEND, so processes may share the
// directory; nothing is ever rewritten (a file is removed by hand once
// older than any from-date of interest).
//
//	DATE.queries  QUERYID DATE QUERY          one per search (queries_by_queryid_all,
//	              SPRDF 2.4.27)
//	DATE.clicks   URLID QUERYID LCID DATE POS one per result click
//	              (clicks_by_urlid_and_queryid, SPRDF 2.4.37)
//	DATE.urls     URLID DATE URL              one per click: the URL clicked
//	              (urls_by_urlid, SPRDF 2.4.29)
//
// Conventions (MS-FSSPRDF, which defines the layouts, is not public):
//
//   - LCID identifies the log writer: 8 random hex digits per Log (per
//     process start). QUERYID is the writer's counter, 16 hex digits; the
//     clicks carry it with the LCID beside it, and the queries carry it
//     already concatenated with the LCID (local_count_queries concatenates
//     them, 3.6.5.3.2, and merge_with_query then joins on the result), so
//     query IDs of different writers never meet.
//   - URLID is the web analyzer's URLHASH of the URL (the first 8 bytes of
//     its MD5, 16 hex digits).
//   - DATE is the UTC time as 2006-01-02T15:04:05Z: comparing it bytewise
//     with a from-date YYYY-MM-DD keeps that day and later.
//   - QUERY is the query as the front end understood it (the search page's
//     site and type fields appended as site: and type: filters), one field:
//     net/url's query escaping (SP becomes '+'), "-" for the empty text.
//     URL is the result's URL, which holds no SP.
//   - POS is the result's 1-based position on the page (informational).
//
// The redirect (GET /click?q=QUERYID&u=URL&pos=N&s=SIG) logs the click
// and answers 302 to URL. SIG is an HMAC of the query ID and the URL with
// a key the Log draws at start, so the redirect only sends a browser to
// URLs the search put on its page; a link with another signature (for
// instance one from before a restart) gets a page with a plain link to
// the URL, and no click is logged.
//
// # The build
//
// Run concatenates the log files of the days from the from-date on into
// the build's inputs on worker 0 (new.queries, new.clicks, new.urls, and
// new.uris, the uris_by_member map of content IDs: empty, so each URL is
// its own CID), and runs BuildFile on dmake. Every run reads the logs
// again from the from-date (trawl webanalyzer clicks: 90 days back by
// default): the counts are sums over a window, not a history, and the
// logs of a window are small beside a crawl. The steps, with the tables
// they make (the spec's function names; layouts ours):
//
//  1. filter_old_urls: urls sorted by URLID, newest first, keep each
//     URLID's newest record, unless older than the from-date. ubu: URLID
//     DATE URL.
//  2. filter_old_queries: the queries from the from-date on, the scope
//     rule applied (a trailing ` scope:"..."` is cut), those matching any
//     of the spec's operator rules dropped (case-insensitively, anywhere:
//     \S+:\S+ (so site: and type: filters), \S+=\S+, \S+>\S+, \S+<\S+,
//     " and ", " or ", " not ", ^not , " -x", ^-x, " near ",
//     words\(...): click relevance is for plain queries. qbq: QUERYID
//     DATE QUERY.
//  3. local_count_queries: clicks sorted by URLID, QUERYID, LCID; per
//     URL, the number of clicks of each (QUERYID, LCID). lqq: URLID
//     QUERYID+LCID LCID LCOUNT. A click whose query is older than the
//     from-date drops out at the next step.
//  4. merge_with_query (lqq by QUERYID with qbq): pre: URLID LCOUNT LCID
//     QUERY; tokenize_query: slq: URLID LCOUNT QUERY, QUERY Tokenize'd
//     (MS-FSIN's normalization is not public: the runs of letters and
//     digits in lower case, joined by one SP); full_local_count_queries:
//     the sum per (URLID, QUERY). lqu: URLID LCOUNT QUERY.
//  5. merge_with_url (with ubu): lqurl: URL LCOUNT QUERY, the URL
//     normalized per RFC 3986 section 6 (NormalizeURL); normalize_url
//     (with uris_by_member by MEMBER): lqc: CID LCOUNT QUERY;
//     reduce_localcount: the sum per (CID, QUERY). lbq.
//  6. full_global_count_queries (lbq by QUERY): gq: GCOUNT QUERY, all
//     clicks of the query; merge_with_global_count (reduce mode, lbq with
//     gq by QUERY): cbc: CID LCOUNT GCOUNT PLACE NUMURLS QUERY, the query's
//     URLs by LCOUNT descending (then CID), PLACE their competition rank
//     (1, 2, 2, 4), NUMURLS the number of its URLs with that LCOUNT.
//  7. Kept: relevance.final is cbc sorted by QUERY, PLACE, CID (what the
//     index reads); queryinfo.final is reduce_urls' per-URL form,
//     urls_on_urlhash_with_queries: HASH (the MD5 of the CID as a decimal
//     big-endian integer) and QUERIES (base64 of the MS-FSWCU dictionary
//     {"queries": [(LCOUNT, GCOUNT, PLACE, NUMURLS, QUERY)...],
//     "contentid": CID}), sorted by HASH. Both go to DATA/clicks/state.
//
// # Into the ranking
//
// The relevance is applied at query time, not indexed: Relevance reads
// relevance.final (again whenever the file changes, checked at most once
// a second), and index.Search looks the query up by Key (the same
// filtering and tokenizing the build applies to the logged query; the
// search page's site and type fields count as filters) and multiplies
// the score of each hit in the rerank window whose URL was clicked for it
// by Rel.Boost = 1 + (LCOUNT/GCOUNT) * log2(1 + LCOUNT). A URL clicked
// for another query, or a URL not clicked, keeps its score, so no other
// query's order changes. Applying at query time needs no document update
// (internal/index has no partial update, see internal/webanalyzer) and
// takes effect as soon as a build ends; the table is small (one record per
// clicked (query, URL) of the window). A URL beyond the rerank window
// (100 hits by default) is not lifted.
package clicks
