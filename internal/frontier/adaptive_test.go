package frontier

import (
	"fmt"
	"strings"
	"testing"
)

// TestAdaptiveRevisitsByRank: in adaptive mode a link to a known URI is not
// queued again (start URIs are), and over several cycles a URI is
// rescheduled about as often as its score says, relative to the others.
func TestAdaptiveRevisitsByRank(t *testing.T) {
	cfg := testConfig()
	cfg.RefreshMode = RefreshAdaptive
	cfg.DBSwitch = 0
	cfg.Adaptive = Adaptive{RefreshQuota: 90, CoverageMin: 2, CoverageMaxPct: 0}
	// Score: "h" pages 4, "m" pages 2, "l" pages 1.
	cfg.Score = func(k KnownURI) float64 {
		switch k.URI[strings.LastIndex(k.URI, "/")+1] {
		case 'h':
			return 4
		case 'm':
			return 2
		}
		return 1
	}
	f, _ := newFrontier(t, cfg)
	mustAdd(t, f, t0, uris("a", "h1", "m1", "l1", "l2")...)
	serveAll(t, f, t0)
	counts := map[string]int{}
	for cycle := 0; cycle < 12; cycle++ {
		if _, err := f.Refresh(t0, uris("a", "start"), nil); err != nil {
			t.Fatal(err)
		}
		// A page links to every known URI again: none of them is queued by it.
		if r := mustAdd(t, f, t0, uris("a", "h1", "m1", "l1", "l2")...); r.Queued != 0 {
			t.Fatalf("cycle %d: links to known URIs queued %d entries", cycle, r.Queued)
		}
		for _, u := range short(serveAll(t, f, t0)) {
			counts[u]++
		}
	}
	if counts["start"] != 12 {
		t.Errorf("start URI fetched %d times in 12 cycles", counts["start"])
	}
	// Two reschedulings per cycle: 24 shared in proportion to the scores
	// (4:2:1:1 gives 12:6:3:3), within one either way.
	want := map[string]int{"h1": 12, "m1": 6, "l1": 3, "l2": 3}
	for u, w := range want {
		if g := counts[u]; g < w-1 || g > w+1 {
			t.Errorf("%s rescheduled %d times, want about %d (all: %v)", u, g, w, fmt.Sprint(counts))
		}
	}
}
