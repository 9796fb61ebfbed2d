package nodesched

import (
	"context"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/cmt"
)

// TestRefreshCycle crawls the farm, moves it to cycle 1 (pages change,
// appear and disappear) and starts a refresh cycle with CMD_ADM_CONF_REFRESH.
func TestRefreshCycle(t *testing.T) {
	farm := startFarm(t, 5, 50)
	r := runCrawl(t, farm, t.TempDir(), 0, 8)
	waitIdle(t, r.d, 90*time.Second)
	before := r.d.Stats()["farm"]
	farm.SetCycle(1)
	r.mns.send(context.Background(), &cmt.AdmConfRefresh{Collection: "farm", Flags: cmt.RefreshCollection})
	deadline := time.Now().Add(10 * time.Second)
	for r.d.Stats()["farm"]["refresh_cycles"] == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	waitIdle(t, r.d, 90*time.Second)
	after := r.d.Stats()["farm"]
	crawl := r.crawl
	crawl.Cycle = 1
	want, err := farm.Expect(crawl)
	if err != nil {
		t.Fatal(err)
	}
	missing, extra := diffSets(want, requestedURLs(farm, 1))
	if len(missing)+len(extra) > 0 {
		t.Errorf("cycle 1 fetched set differs from Expect: missing %v, extra %v", head(missing), head(extra))
	}
	if after["modified"] == 0 {
		t.Errorf("no modified documents counted: %v", after)
	}
	if after["deleted"] <= before["deleted"] {
		t.Errorf("no deleted pages detected: before %d, after %d", before["deleted"], after["deleted"])
	}
	if after["not_modified"] == 0 {
		t.Errorf("no 304 answers: %v", after)
	}
	t.Logf("cycle 1: modified %d, unchanged %d (304: %d), deleted %d -> %d", after["modified"], after["unchanged"], after["not_modified"], before["deleted"], after["deleted"])
}
