package clicks

import (
	"fmt"
	"strings"

	"github.com/trawl/trawl/internal/marshal"
	"github.com/trawl/trawl/internal/table"
)

// The tables a click build keeps on worker 0 (and a run keeps in
// StateDir).
const (
	// OutRelevance is cid_by_cid_with_counts_and_query (CID LCOUNT GCOUNT
	// PLACE NUMURLS QUERY) sorted by QUERY, then PLACE: what the index
	// reads (ReadRelevance).
	OutRelevance = "relevance.final"
	// OutQueryInfo is urls_on_urlhash_with_queries (HASH QUERIES), one
	// record per URL: the spec's per-document form.
	OutQueryInfo = "queryinfo.final"
)

// The input tables of a build, on worker 0.
const (
	InQueries = "new.queries" // QUERYID DATE QUERY (the concatenated query logs)
	InClicks  = "new.clicks"  // URLID QUERYID LCID DATE POS
	InURLs    = "new.urls"    // URLID DATE URL
	InURIs    = "new.uris"    // CID MEMBER (uris_by_member; empty: each URL is its own CID)
)

// Kept lists the files a build keeps on worker 0.
func Kept() []string { return []string{OutRelevance, OutQueryInfo} }

// BuildOptions shape the build file.
type BuildOptions struct {
	// FromDate ("YYYY-MM-DD") drops the queries and URLs logged before it
	// (filter_old_queries, filter_old_urls); "" keeps everything.
	FromDate string
	// SortMB is the memory of each sort (default 100).
	SortMB int
}

// BuildFile returns the dmake build file of the click relevance
// (internal/dmake's format) and its number of targets.
func BuildFile(o BuildOptions) (string, int, error) {
	if o.SortMB <= 0 {
		o.SortMB = 100
	}
	var vars marshal.Dict
	if o.FromDate != "" {
		vars = append(vars, marshal.Pair{Key: marshal.Str("fromdate"), Value: marshal.Str(o.FromDate)})
		if _, err := fromDate(vars); err != nil {
			return "", 0, err
		}
	}
	fv, err := table.EncodeFuncvars(vars)
	if err != nil {
		return "", 0, err
	}
	var b strings.Builder
	n := 0
	sortOpts := fmt.Sprintf("-S %dM -T .", o.SortMB)
	target := func(name string, in []string, out string, run string) {
		n++
		fmt.Fprintf(&b, "target %s\n    in %s\n    out %s\n    run trawl table %s\n", name, strings.Join(in, " "), out, run)
	}
	sortT := func(name, keys, in, out string) {
		target(name, []string{in}, out, fmt.Sprintf("sort %s %s %s -o %s", sortOpts, keys, in, out))
	}
	fmt.Fprintf(&b, "# trawl click relevance, from %q\ndir .\n", o.FromDate)
	for _, t := range []string{InQueries, InClicks, InURLs, InURIs} {
		fmt.Fprintf(&b, "file %s 0\n", t)
	}
	for _, k := range Kept() {
		fmt.Fprintf(&b, "keep %s 0\n", k)
	}
	// The logs, filtered by date and by the query rules.
	sortT("sort_urls", "-k1,1 -k2,2r", InURLs, "urls.s")
	target("filter_old_urls", []string{"urls.s"}, "ubu.0",
		"reduce -i urls.s:3:1 -o ubu:1:1 -l spmakefileutils.filter_old_urls --funcvars="+fv)
	sortT("sort_queries", "-k1,1", InQueries, "queries.s")
	target("filter_old_queries", []string{"queries.s"}, "qbq.0",
		"reduce -i queries.s:3:1 -o qbq:1:1 -l spmakefileutils.filter_old_queries --funcvars="+fv)
	// Clicks per URL and query, then the query's text.
	sortT("sort_clicks", "-k1,1 -k2,2 -k3,3", InClicks, "clicks.s")
	target("local_count_queries", []string{"clicks.s"}, "lqq.0",
		"reduce -i clicks.s:5:1 -o lqq:1:1 -l spmakefileutils.local_count_queries")
	sortT("sort_lqq", "-k2,2", "lqq.0", "lqq.s")
	target("merge_with_query", []string{"lqq.s", "qbq.0"}, "pre.0",
		"merge -i lqq.s:4:2 -i qbq.0:3:1 -o pre:1:1 -l spmakefileutils.merge_with_query")
	target("tokenize_query", []string{"pre.0"}, "slq.0",
		"reduce -i pre.0:4:1 -o slq:1:1 -l spmakefileutils.tokenize_query")
	sortT("sort_slq", "-k1,1 -k3,3", "slq.0", "slq.s")
	target("full_local_count_queries", []string{"slq.s"}, "lqu.0",
		"reduce -i slq.s:3:1 -o lqu:1:1 -l spmakefileutils.full_local_count_queries")
	// From URL IDs to URLs, and to content IDs.
	target("merge_with_url", []string{"lqu.0", "ubu.0"}, "lqurl.0",
		"merge -i lqu.0:3:1 -i ubu.0:3:1 -o lqurl:1:1 -l spmakefileutils.merge_with_url")
	sortT("sort_lqurl", "-k1,1", "lqurl.0", "lqurl.s")
	sortT("sort_uris", "-k2,2", InURIs, "ubm.s")
	target("normalize_url", []string{"lqurl.s", "ubm.s"}, "lqc.0",
		"merge -i lqurl.s:3:1 -i ubm.s:2:2 -o lqc:1:1 -l spmakefileutils.normalize_url")
	sortT("sort_lqc", "-k1,1 -k3,3", "lqc.0", "lqc.s")
	target("reduce_localcount", []string{"lqc.s"}, "lbq.0",
		"reduce -i lqc.s:3:1 -o lbq:1:1 -l spmakefileutils.reduce_localcount")
	// Global counts per query, and each URL's place among the query's.
	sortT("sort_by_query", "-k3,3 -k1,1", "lbq.0", "lbq.s")
	target("full_global_count_queries", []string{"lbq.s"}, "gq.0",
		"reduce -i lbq.s:3:3 -o gq:2:1 -l spmakefileutils.full_global_count_queries")
	target("merge_with_global_count", []string{"lbq.s", "gq.0"}, "cbc.0",
		"merge -i lbq.s:3:3 -i gq.0:2:2 -o cbc:1:1 -l spmakefileutils.merge_with_global_count -r")
	sortT("relevance", "-k6,6 -k4,4n -k1,1", "cbc.0", OutRelevance)
	sortT("sort_by_cid", "-k1,1 -k6,6", "cbc.0", "cbc.s")
	target("reduce_urls", []string{"cbc.s"}, "queryinfo.0",
		"reduce -i cbc.s:6:1 -o queryinfo:1:1 -l spmakefileutils.reduce_urls")
	target("queryinfo", []string{"queryinfo.0"}, OutQueryInfo,
		fmt.Sprintf("sort %s -k1,1 queryinfo.0 -o %s", sortOpts, OutQueryInfo))
	return b.String(), n, nil
}
