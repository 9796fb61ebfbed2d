package nodesched

import (
	"testing"
	"time"

	"github.com/trawl/trawl/internal/nodesched/crawlpipe"
	"github.com/trawl/trawl/internal/webfarm"
)

// TestCrawlCachesize crawls the farm with the cachesize section's
// screened=0 (no seen-set cache: every duplicate link is looked up on
// disk) and wqcache=2 (two queue entries of a site in memory): the
// frontier gets those bounds and the crawl still fetches exactly the set
// Expect gives, each URL once.
func TestCrawlCachesize(t *testing.T) {
	farm := startFarm(t, 4, 40)
	opt := webfarm.XMLOptions{Collection: "farm", FetchTimeout: 8, Extra: `        <section name="cachesize">
            <attrib name="screened" type="integer"> 0 </attrib>
            <attrib name="wqcache" type="integer"> 2 </attrib>
        </section>
`}
	col := farmCollection(t, farm, farm.DefaultCrawl(), opt)
	s, err := crawlpipe.Compile(col, crawlpipe.Env{NodeID: "node1"})
	if err != nil {
		t.Fatal(err)
	}
	if fc := s.Frontier; fc.SeenCacheSize != -1 || fc.RefillSize != 2 || fc.HeadSize != 2 {
		t.Fatalf("frontier bounds: seen cache %d, refill %d, head %d; want -1, 2, 2", fc.SeenCacheSize, fc.RefillSize, fc.HeadSize)
	}
	r := runCrawlWith(t, farm, t.TempDir(), farm.DefaultCrawl(), opt)
	waitIdle(t, r.d, 120*time.Second)
	want, err := farm.Expect(r.crawl)
	if err != nil {
		t.Fatal(err)
	}
	if missing, extra := diffSets(want, requestedURLs(farm, 0)); len(missing)+len(extra) > 0 {
		t.Errorf("fetched set differs from Expect: missing %v, extra %v", head(missing), head(extra))
	}
	seen := map[string]int{}
	for _, q := range farm.Requests() {
		seen[q.URL]++
		if seen[q.URL] == 2 {
			t.Errorf("%s requested twice", q.URL)
		}
	}
}
