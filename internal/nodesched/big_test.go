package nodesched

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestCrawlBig crawls 100 sites x 200 pages with delay 0 and checks the
// fetched set against Expect. It is skipped with -short.
func TestCrawlBig(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the 20,000-page crawl is skipped")
	}
	farm := startFarm(t, 100, 200)
	dir := t.TempDir()
	start := time.Now()
	r := runCrawl(t, farm, dir, 0, 2)
	waitIdle(t, r.d, 170*time.Second)
	el := time.Since(start) - 500*time.Millisecond
	want, err := farm.Expect(r.crawl)
	if err != nil {
		t.Fatal(err)
	}
	got := requestedURLs(farm, 0)
	missing, extra := diffSets(want, got)
	if len(missing)+len(extra) > 0 {
		t.Errorf("fetched set differs: missing %d %v, extra %d %v", len(missing), head(missing), len(extra), head(extra))
	}
	r.stop(t)
	var size int64
	_ = filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			size += fi.Size()
		}
		return nil
	})
	t.Logf("fetched %d URLs in %v: %.0f requests/s; store %d bytes", len(got), el, float64(len(got))/el.Seconds(), size)
}
