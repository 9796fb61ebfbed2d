package nodesched

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/store"
	"github.com/trawl/trawl/internal/webfarm"
)

// runFarmCrawl crawls the farm under crawl (its XML written by
// webfarm.WriteCrawlXML) until the node is idle.
func runFarmCrawl(t *testing.T, farm *webfarm.Farm, crawl webfarm.Crawl, delay float64) (*Driver, *store.Store) {
	t.Helper()
	col := farmCollection(t, farm, crawl, webfarm.XMLOptions{Collection: "farm", Delay: delay, FetchTimeout: 8})
	st, err := store.Open(t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	mns := newFakeMNS(t, farm, "node1", col)
	d := New(Config{NodeID: "node1", Store: st, MNS: mns.dialer(ctx), Workers: 32})
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
		st.Close()
	})
	waitIdle(t, d, 90*time.Second)
	return d, st
}

// TestCrawlUseSitemapsMatchesExpect crawls the farm with use_sitemaps: the
// sitemap-only pages (/hidden/<i>.html, linked from nowhere) are fetched,
// and the fetched set is exactly webfarm's Expect with UseSitemaps.
func TestCrawlUseSitemapsMatchesExpect(t *testing.T) {
	for _, tc := range []struct {
		name  string
		depth int
	}{{"full", -1}, {"depth0", 0}} {
		t.Run(tc.name, func(t *testing.T) {
			farm := startFarm(t, 4, 40)
			crawl := farm.DefaultCrawl()
			crawl.UseSitemaps = true
			crawl.MaxDepth = tc.depth
			d, _ := runFarmCrawl(t, farm, crawl, 0.02)
			want, err := farm.Expect(crawl)
			if err != nil {
				t.Fatal(err)
			}
			got := requestedURLs(farm, 0)
			missing, extra := diffSets(want, got)
			if len(missing)+len(extra) > 0 {
				t.Errorf("fetched set differs from Expect: %d wanted, %d fetched\nmissing (%d): %v\nextra (%d): %v", len(want), len(got), len(missing), head(missing), len(extra), head(extra))
			}
			hidden := 0
			for _, u := range got {
				if strings.Contains(u, "/hidden/") {
					hidden++
				}
			}
			if hidden == 0 {
				t.Errorf("no sitemap-only page fetched")
			}
			t.Logf("%d URLs (%d sitemap-only); stats %v", len(got), hidden, d.Stats()["farm"])
		})
	}
}
