package feed

import (
	"context"
	"flag"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/trawl/trawl/internal/index"
	"github.com/trawl/trawl/internal/webfarm"
)

var updateGolden = flag.Bool("update-search-golden", false, "rewrite testdata/search_golden.txt")

// goldenQueries exercise every feature of the search page's query
// language: words, phrases, site:, type:, and exclusions of each.
var goldenQueries = []string{
	"marble",
	"museum university",
	"garden archive world",
	`"southern mountain"`,
	`"main center game"`,
	"site:site0001.farm.test marble",
	"site:farm.test -site:site0002.farm.test museum",
	"type:html valley",
	"type:text",
	"-type:html silver",
	"music -southern",
	`valley -"northern anchor"`,
	"ledger economic",
	"journey site:site0003.farm.test -type:text",
}

// TestSearchGolden feeds a fixed set of farm pages (8 sites, every page a
// crawl of the farm's default configuration fetches) through IndexOp into
// an index and checks that the top results of goldenQueries are the ones
// recorded in testdata/search_golden.txt: changes to extraction, the
// mapping or batching must not change what users find.
//
// An index of two partitions scores with each partition's term statistics
// (bleve has no global tf-idf), so the order of close hits may differ:
// there, every query must match the same documents (the same total), and
// each of its top five must be among the one-partition index's top twenty
// (or tied with the twentieth).
func TestSearchGolden(t *testing.T) {
	path := filepath.Join("testdata", "search_golden.txt")
	got, one := goldenRun(t, 1)
	if *updateGolden {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update-search-golden to record)", err)
	}
	if d := cmp.Diff(string(want), got); d != "" {
		t.Errorf("top results changed (-want +got):\n%s", d)
	}
	_, two := goldenRun(t, 2)
	for i, q := range goldenQueries {
		if one[i].Total != two[i].Total {
			t.Errorf("%s: %d hits in one partition, %d in two", q, one[i].Total, two[i].Total)
		}
		// The one-partition top twenty, and the hits tied with its last.
		top := map[string]bool{}
		for j, h := range one[i].Hits {
			last := one[i].Hits[min(19, len(one[i].Hits)-1)].Score
			if j < 20 || math.Abs(h.Score-last) <= 1e-9*math.Abs(last) {
				top[h.URL] = true
			}
		}
		for _, h := range two[i].Hits[:min(5, len(two[i].Hits))] {
			if !top[h.URL] {
				t.Errorf("%s: %s is in the top five of two partitions, not in the top twenty of one", q, h.URL)
			}
		}
	}
}

func goldenRun(t *testing.T, parts int) (string, []*index.Results) {
	t.Helper()
	cfg := webfarm.DefaultConfig(1, 8, 40)
	feats, err := webfarm.ParseFeatures("common,cross-links")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Features, cfg.HostFeatures = feats, nil
	farm, err := webfarm.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	uris, err := farm.Expect(farm.DefaultCrawl())
	if err != nil {
		t.Fatal(err)
	}
	ix := openGoldenIndex(t, parts)
	var ops []index.Op
	for i, u := range uris {
		pu, err := url.Parse(u)
		if err != nil {
			t.Fatal(err)
		}
		req := httptest.NewRequest(http.MethodGet, u, nil)
		req.Host = pu.Host
		rec := httptest.NewRecorder()
		farm.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			continue
		}
		op, err := IndexOp(Operation{Seq: uint64(i + 1), Kind: Add, Collection: "c", URI: u,
			MIME: rec.Header().Get("Content-Type"), Content: rec.Body.Bytes()})
		if err != nil {
			t.Fatal(err)
		}
		ops = append(ops, op)
	}
	ctx := context.Background()
	// Several batches, as a feeder sends them.
	for len(ops) > 0 {
		n := min(len(ops), 37)
		if _, err := ix.Apply(ctx, ops[:n]); err != nil {
			t.Fatal(err)
		}
		ops = ops[n:]
	}
	var b strings.Builder
	var all []*index.Results
	for _, q := range goldenQueries {
		r, err := ix.Search(ctx, q, index.SearchOptions{Size: 100})
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, r)
		fmt.Fprintf(&b, "%s\t(%d hits)\n", q, r.Total)
		first := *r
		first.Hits = r.Hits[:min(10, len(r.Hits))]
		writeTopGroups(&b, &first, 5)
	}
	return b.String(), all
}

func openGoldenIndex(t *testing.T, parts int) *index.Index {
	t.Helper()
	ix, err := index.Open(t.TempDir(), index.Options{Create: true, Partitions: parts})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

// writeTopGroups writes the first hits of r (at least n when there are as
// many) as groups of equal score, each group's URLs sorted: bleve orders
// hits of equal score arbitrarily. A group that may go on past the hits
// returned is left out.
func writeTopGroups(b *strings.Builder, r *index.Results, n int) {
	hits := r.Hits
	written := 0
	for i := 0; i < len(hits) && written < n; {
		j := i + 1
		for j < len(hits) && math.Abs(hits[j].Score-hits[i].Score) <= 1e-9*math.Abs(hits[i].Score) {
			j++
		}
		if j == len(hits) && uint64(j) < r.Total {
			return
		}
		var group []string
		for _, h := range hits[i:j] {
			group = append(group, h.URL)
		}
		slices.Sort(group)
		fmt.Fprintf(b, "\t%s\n", strings.Join(group, " = "))
		written += j - i
		i = j
	}
}
