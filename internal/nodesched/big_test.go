package nodesched

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestCrawlBig crawls 100 sites x 200 pages (20,000 pages, over 60,000
// URLs with redirects, traps and robots.txt) with delay 0 and checks the
// fetched set against Expect. It is skipped with -short; under the race
// detector it crawls 20 sites x 100 pages (test.sh also runs it at full
// size without the detector).
func TestCrawlBig(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the 20,000-page crawl is skipped")
	}
	sites, pages, timeout := 100, 200, 2
	if raceEnabled {
		// The detector slows reading the 4 MiB page past 2 s.
		sites, pages, timeout = 20, 100, 30
	}
	farm := startFarm(t, sites, pages)
	dir := t.TempDir()
	start := time.Now()
	r := runCrawl(t, farm, dir, 0, timeout)
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
	checkOwnPoliteness(t, r.rec.logs(), 0, r.maxPending)
	checkPoliteness(t, farm, 0, r.maxPending)
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
