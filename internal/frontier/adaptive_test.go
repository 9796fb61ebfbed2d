package frontier

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
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

// TestAdaptiveMinorCycles: with refresh_count 4 the best known URIs are
// rescheduled at the start of each minor cycle, also when they were fetched
// earlier in the same cycle, but not while they are still queued.
func TestAdaptiveMinorCycles(t *testing.T) {
	cfg := testConfig()
	cfg.RefreshMode = RefreshAdaptive
	cfg.DBSwitch = 0
	cfg.Refresh = 4 * time.Hour
	cfg.Adaptive = Adaptive{RefreshCount: 4, RefreshQuota: 90, CoverageMin: 1, CoverageMaxPct: 0}
	cfg.Score = func(k KnownURI) float64 {
		if strings.HasSuffix(k.URI, "/h") {
			return 3
		}
		return 1
	}
	f, _ := newFrontier(t, cfg)
	mustAdd(t, f, t0, uris("a", "h", "l")...)
	serveAll(t, f, t0)
	if f.MinorDue(t0.Add(59 * time.Minute)) {
		t.Fatal("minor cycle due before its time")
	}
	var got []string
	for m := 1; m <= 3; m++ {
		at := t0.Add(time.Duration(m) * time.Hour)
		if !f.MinorDue(at) {
			t.Fatalf("minor cycle %d not due at %v", m, at)
		}
		n, err := f.Reschedule(at)
		if err != nil || n != 1 {
			t.Fatalf("minor cycle %d: Reschedule = %d, %v", m, n, err)
		}
		if f.MinorDue(at) {
			t.Fatalf("minor cycle %d still due after Reschedule", m)
		}
		if m == 2 {
			// Still queued: not queued twice.
			if n, err := f.Reschedule(at); err != nil || n != 0 {
				t.Fatalf("second Reschedule of a queued URI = %d, %v", n, err)
			}
		}
		got = append(got, short(serveAll(t, f, at))...)
	}
	// Ages in minor cycles: h (3) ranks 3, l (1) ranks 1 at the first;
	// then h 3x1 against l 1x2; then h 3x1 against l 1x3: h wins ties by order.
	if d := cmp.Diff([]string{"h", "h", "h"}, got); d != "" {
		t.Errorf("rescheduled (-want +got):\n%s", d)
	}
	if _, err := f.Refresh(t0.Add(4*time.Hour), nil, nil); err != nil {
		t.Fatal(err)
	}
	if f.MinorDue(t0.Add(4*time.Hour+59*time.Minute)) || !f.MinorDue(t0.Add(5*time.Hour)) {
		t.Error("minor cycles do not restart with the refresh cycle")
	}
}
