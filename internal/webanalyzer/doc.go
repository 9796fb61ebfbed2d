// Package webanalyzer is the link analysis of MS-FSFDMW (3.6.5): a crawl's
// link graph dumped as tables, and the wamakefileutils.* merge and reduce
// functions that a dmake build runs over them ("trawl table merge|reduce",
// internal/table) to compute each page's static rank (PageRank), its
// site's rank and the anchor text pointing at it.
//
// # Tables
//
// Every table is an ASCII file, one record per line, fields separated by
// one SP (MS-FSFDMW 3.1.1). MS-FSWADF, which defines the web analyzer's
// layouts, is not public: the columns below are decided from the fields
// MS-FSFDMW's function descriptions name. Conventions:
//
//   - URLHASH (and FROM, TO, CLASS, MEMBER) is the key of a URL: the first
//     8 bytes of the MD5 of the normalized URL, 16 lowercase hex digits.
//   - TIMESTAMP is the Unix time in nanoseconds, 19 digits (so a bytewise
//     sort orders it): the last fetch of the page the record comes from
//     (its first sighting if never fetched); for eqrepr, the dump's time.
//   - Free text (ANCHORTEXT, URLs in a list) is one field: net/url's query
//     escaping (SP becomes '+'), "-" for the empty text.
//   - RANK, SITERANK and the sums are decimal floats (Go's shortest form
//     that reads back exactly); counts are decimal integers.
//
// The dump (Dump, "trawl webanalyzer dump") writes, from a crawl store:
//
//	links     FROM TO INTRA TIMESTAMP ANCHORTEXT  one per link of a fetched page (WADF 2.2.3):
//	          <a href> and <area href> without rel=nofollow, resolved, normalized as
//	          the crawl normalizes, fragment cut, each target once per page (its first
//	          anchor text); none for a page with <meta robots nofollow>; INTRA is 1
//	          when both ends are on the same crawl site (host[:port]), else 0
//	no_links  URLHASH TIMESTAMP URL                a fetched page without such links (2.2.4)
//	urimap    URLHASH URL                          every URL of the other tables (2.2.7)
//	sitemap   URLHASH SITE                         its crawl site (2.2.5)
//	urieq     CLASS MEMBER TIMESTAMP               MEMBER is a duplicate of, or redirects to,
//	          CLASS, the representative: the owner of the checksum for a duplicate,
//	          the normalized Location for a redirect (2.2.6)
//	eqrepr    URLHASH TIMESTAMP URL MEMBERS        each representative of this dump with its
//	          members' URLs (escaped, comma-separated, sorted) (2.2.2); informational:
//	          the build derives classes from urieq, which compacts across dumps
//	delete    URLHASH TIMESTAMP                    a page the crawl deleted (2.2.1)
//	stamp     the dump's time (Unix nanoseconds); the next incremental dump takes
//	          only the records fetched (or first seen) after it
//
// "trawl webanalyzer dump" and "run" open the store read-only
// (store.Options.ReadOnly); Pebble still locks it, so the crawl must not be
// running then. Inside trawl run the dump reads the running crawl's own
// store instead (RunOptions.Dump, nodesched.Driver.WithStore), which the
// node scheduler does not close before the dump ends.
//
// # After each refresh cycle (trawl run)
//
// trawl run --webanalyzer on|off|auto (auto: on, except with --once or
// --demo, and inside a go test binary, which cannot play the table
// programs) runs the analysis (Auto) with an embedded master and
// --webanalyzer-workers local workers each time a refresh cycle ends, that
// is when the sum of the node scheduler's refresh_cycles counters rises
// above a value it already had (the start of the first cycle is no end).
// Runs are one at a time; a cycle that ends during a run is analysed by
// the next one, which sees its changes too. The first run is full, later
// ones incremental (a run whose state lacks a kept table, such as a
// state written before inter.final was kept, is full again). With on and --once it runs once, when the crawl is
// complete, before the summary. The crawl's only collection is analysed
// (a run fails, and says so on the status page, when there are several).
// Progress lines go to the log at info level ("webanalyzer: ..."); the
// status page's "Link analysis" section and status.json's "analyses" show
// the last run: start, duration, incremental or full, pages ranked, links
// in the compacted link table, links dumped for it, runs, failed runs and
// the last error, the ranks queued for the index by the last run and how
// many the index has applied, and the click build's relevance records.
// After each run that succeeded trawl run feeds the ranks and anchor text
// into its index through its feeding chain (RankFeed, below), then runs the
// click build (internal/clicks) over the search page's click log, so the
// page's clicks boost results without a separate command (a build runs
// only when the log holds something). With --once the crawl waits, after
// the run, until the index has applied the ranks (at most 2 minutes).
//
// # The build
//
// BuildFile writes the analysis as a dmake build file (internal/dmake's
// format); Run dumps, starts an embedded master and local workers (and
// uses any --worker), runs the build in two stages and keeps its results
// in DATA/webanalyzer/state.
//
// Stages. The first build (StageCompact) is the log compaction and the
// normalization, steps 1 and 2 below, and keeps the compacted tables and
// links.final on worker 0; the second (StageRank) is steps 3 to 5 from
// those. The static rank is a function of links.final, of the set of
// pages without links (the keys of c.no_links.0) and of the rounds and
// damping (the state's rank.options file, which names the partitions
// too): when an incremental run finds all of them as the last run left
// them, a refresh that changed the pages' text but not their links, the
// second build is StageReuseRank, with the last rank.final as an initial
// file and no iteration; the tables are the ones a full run computes, byte
// for byte, since the iteration is deterministic. When, besides, the
// compacted site map (c.sitemap.0) is byte-equal to the last run's, there
// is no second build at all: the site ranks and anchor text are functions
// of links.final, rank.final and the site map, so the last run's
// siterank.final and anchors.final stand (RunStats.OutputsReused). The
// input tables are
// new.<table> on worker 0, with old.<table> (the previous run's
// compacted tables) on an incremental run. The steps, with the tables they
// make:
//
//  1. Log compaction. delete is sorted by key, newest first, and reduced
//     by make_unique (the newest delete of each URL). The kill table is
//     the sorted union of those deletes, "FROM TIMESTAMP" of every page's
//     newest link records (webanalyzer.link_stamps) and no_links. links
//     (sorted by FROM, newest first), no_links (by URLHASH) and urieq (by
//     MEMBER) are merged with kill in reduce mode by logcompact_links,
//     logcompact_no_links and logcompact_urieq: of each key's records only
//     those of the newest TIMESTAMP are kept, and none when kill holds a
//     newer record for the key (the page was deleted, lost all its links,
//     or was fetched again as a page of its own; 3.6.5.1.12-14). urimap and
//     sitemap are merged with sort -u. These c.<table>.0 files are what
//     the next run reuses: a run after a refresh cycle dumps only the pages
//     fetched since, sorts only that dump and merges it (sort -m) with the
//     previous run's c.<table>.0, which compaction leaves sorted the way
//     the merge needs (the kill table, one record per page, is sorted
//     whole); compaction then yields the tables a full dump would, byte
//     for byte, since the table engine's order is total. The intermediates
//     that are a function of each page's own records are updated by delta
//     (below); what depends on the ranks is global: a link that changed
//     moves the ranks of every page it reaches, and the site ranks and
//     anchor weights with them, so an incremental run iterates the rank
//     from rank 1 for the configured rounds over the whole graph and
//     computes steps 4 and 5 from it, and its tables equal a full run's
//     byte for byte. What it skips is the full dump (reading and parsing
//     every stored page), the sorts of the old tables, the normalization
//     and the inter-site link selection of the pages that did not change
//     and, when the graph did not change, the iteration (and, when the
//     site map did not either, the site and anchor steps; see Stages
//     above). Warm starts are not done: starting the iteration from
//     the previous run's ranks and stopping at a tolerance gives ranks that
//     differ from a full run's in their last digits, and printing them
//     rounded to well above the tolerance makes the tables equal only
//     where no rank lies within the tolerance of a rounding boundary, a
//     matter of chance over many pages. It would not save much either:
//     the rounds to a tolerance are log(e0/tol)/log(1/D), and a refresh
//     that changed 5 % of the pages cuts the start's error e0 by about 20,
//     about 18 of the 170 rounds a 1e-12 tolerance takes (D = 0.85). The
//     rounds are cheap instead (step 3): they are one process over the
//     graph in memory, under a tenth of a build's time.
//  2. Normalization. compact_links projects the links to FROM TO
//     ANCHORTEXT; urieq_by_class_prep makes CLASS MEMBER; normalize_link
//     merges the links (by TO) with it (by MEMBER): a link to a duplicate
//     or a redirect points at the representative instead (one level:
//     a representative that is itself a member is not followed further).
//     The result, sorted by FROM, is kept as links.final. An incremental
//     run normalizes only the touched pages (webanalyzer.links_delta,
//     delta.go): those whose compacted link records differ from the last
//     run's c.links.0 and those with a link to a member whose equivalence
//     records differ from the last c.urieq.0. Their new records go through
//     the same functions, and sort -m merges them with the last
//     links.final less the touched pages' records: a page's normalized
//     links depend on nothing else, so the bytes are a full run's.
//  3. Static rank. extract_links gives FROM TO COUNT (COUNT the page's
//     number of links); initial_rank gives "URLHASH 1 D" for every end of
//     a link, webanalyzer.rank_one the same for the pages without links;
//     each writes Partitions parts split on the URL hash (CRC32, as the
//     table engine splits). The rounds run in one target, the pythontasks
//     function webanalyzer.static_rank (iterate.go), which reads every
//     part: it makes rank_by_uri (URLHASH RANK D, "sort -u -k1,1" of the
//     initial ranks), and each round, compute_linkscore_divide_by_linkcount
//     (merged on FROM) gives FROM TO D*RANK/COUNT,
//     sum_linkscore_and_new_static_rank (merged on URLHASH with the scores
//     sorted on TO, then on the whole record) makes the new RANK = (1-D) +
//     the sum of the scores reaching the page. The result after Rounds
//     rounds (fewer when a round changes no rank, as every later one would
//     repeat it) is rank.final. When the tables are well formed (every
//     FROM ranked, one positive COUNT per FROM, hashes without blanks or
//     control bytes), the links are read once into numbers (two page
//     indexes, 8 bytes a link) and the rounds run on those, with the
//     functions' arithmetic in their order: the functions write each
//     number in the shortest form that reads back exactly, so the bytes
//     are the same (FuzzStaticRank checks both ways against each other). One target instead of three per
//     partition per round is the point: a table program per part and
//     round, with its files, transfers and sort, cost about 0.4 s of a
//     loaded 2-core machine, 120 of the 158 targets of a 20-round build and
//     most of its time (docs/benchmarks.md), while a round on numbers takes
//     under 10 ms over 140,000 links (on records, through the functions,
//     0.9 s). The price is that the rounds do not spread over workers: one
//     worker holds the graph in memory, 8 bytes a link and about 130 a
//     page (its rank_by_uri record and numbers).
//  4. Site rank. parse_site tags each ranked page with "site://SITE";
//     do_siterank sums the static ranks of each site's pages and writes
//     "URLHASH SITERANK" for every page and "site://SITE SITERANK" for the
//     site (siterank.final). The spec calls the score implementation
//     specific and suggests an average; the sum is the site's share of the
//     graph's rank, which does not reward a site for having few pages.
//  5. Anchor text, over the links between different sites only
//     (compact_links_and_merge_fromsite, then filter_intra_and_merge_tosite
//     drops the links whose ends share a site; kept, sorted by FROM, as
//     inter.final, which an incremental run updates by delta as links.final
//     is, webanalyzer.inter_delta touching the pages whose normalized links
//     differ and those with a link whose end's site map record differs):
//     merge_in_rank adds the
//     source's rank; anchor_weight gives each text its frequency AFREQ and
//     the sum of its sources' ranks ARANK over the whole graph;
//     extend_link_with_freqs and reduce_anchor_and_add_rank give, per
//     (TO, ANCHORTEXT), anchors.final:
//     TO TO-RANK LAFREQ LARANK AFREQ ARANK ANCHORTEXT, LAFREQ and LARANK
//     the same for the links to TO alone.
//
// # PageRank, exactly
//
// The static rank is PageRank with damping D (0.85 unless funcvars say
// otherwise) where a page without links spreads its rank uniformly over
// all pages: PR = (1-D)/N + D*(sum over links q->p of PR(q)/out(q) +
// sum over pages d without links of PR(d)/N), summing to 1. The rounds
// compute instead x' = (1-D) + D*M x from x = 1 (M the link matrix,
// out-links counted with multiplicity), which needs no global sum per
// round: with dangling pages spread uniformly, PageRank is the fixed point
// of x = c*1 + D*M x for some scalar c, so it equals x / sum(x) (Del Corso,
// Gulli and Romani, "Fast PageRank computation via a sparse linear
// system", 2005). The error after k rounds is at most D^k of the start's,
// so 30 rounds (the default) agree to within about 1% and 60 rounds to
// within 1e-4. rank.final holds x; Ranks and "trawl webanalyzer ranks"
// divide by the sum. The damping travels as the third column of
// rank_by_uri because merge.pyc, unlike reduce.pyc, takes no funcvars.
// The spec's sum_linkscore_and_new_static_rank adds the main record's
// RANK to the sum of the scores; this package replaces it by (1-D) plus
// the sum instead, which is what makes the result PageRank.
//
// # Into the index
//
// Each analysed URL gets, as a partial update (feed.UpdateFields: only
// these two fields travel):
//
//   - rank = 0.5*log2(1 + s*N) + 0.25*log2(1 + r*M), s the static rank and
//     r the site rank (fractions of 1) over N pages and M sites; the index
//     multiplies text scores by 1+rank. An average page on an average site
//     gets 0.75; the logarithms keep link popularity from burying better
//     text matches.
//   - anchor = the texts of anchors.final for the URL, each repeated as
//     often as links carry it (at most 5 times), those from higher-ranked
//     sources first, at most MaxAnchorText bytes: the index searches it
//     with twice the body's weight.
//
// RankFeed queues them in an outbox of its own (DATA/webanalyzer/outbox)
// and sends them with a feed.Feeder (target "default:<collection>"):
// trawl run through its feeding chain (the content distributors to the
// indexer of each URL's partition), "trawl webanalyzer run" on a stopped
// crawl straight into DATA/index (FeedIndex), through the same outbox. A
// crash loses nothing queued: the next start sends what the index did not
// acknowledge. The outbox's sequence numbers are the partial updates'
// versions; the index keeps them apart from the documents' content
// versions (internal/index fields.go), so a rank update is never skipped
// because content came later, never makes later content look stale, and a
// content update keeps the last rank and anchor text. Every run sends
// every analysed URL (a URL not indexed yet gets its rank when it is
// added). A partial update of an unchanged rank is not skipped: the runs
// come once per refresh cycle, and re-indexing a document costs what
// feeding it did.
//
// Scores are summed in the order the sorted tables hold them, and the
// build's shape does not depend on the number of workers, so any number of
// workers gives byte-identical tables.
package webanalyzer
