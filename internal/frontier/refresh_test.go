package frontier

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestRefreshModes(t *testing.T) {
	seed := []Entry{{URI: "http://a/seed", Site: "a"}}
	for _, tc := range []struct {
		name string
		mode RefreshMode
		// before the refresh: queue q1..q4, serve q1 and q2
		want     []string // served after the refresh
		wantRep  RefreshReport
		requeued bool // q1 (served last cycle) may be queued again
	}{
		{"scratch", RefreshScratch, []string{"seed"}, RefreshReport{Cycle: 2, Seeded: 1, Truncated: 2}, true},
		{"append", RefreshAppend, []string{"q3", "q4", "seed"}, RefreshReport{Cycle: 2, Seeded: 1}, true},
		{"prepend", RefreshPrepend, []string{"seed", "q3", "q4"}, RefreshReport{Cycle: 2, Seeded: 1}, true},
		{"soft", RefreshSoft, []string{"q3", "q4", "seed"}, RefreshReport{Cycle: 2, Deferred: 1}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.RefreshMode = tc.mode
			cfg.MaxPending = 1
			cfg.DBSwitch = 0
			f, _ := newFrontier(t, cfg)
			mustAdd(t, f, t0, uris("a", "q1", "q2", "q3", "q4")...)
			for i := 0; i < 2; i++ {
				fe, _, _ := f.Next(t0)
				if err := f.Done(fe, Result{Outcome: Fetched}, t0); err != nil {
					t.Fatal(err)
				}
			}
			rep, err := f.Refresh(t0, seed, nil)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.wantRep, rep); d != "" {
				t.Errorf("report (-want +got):\n%s", d)
			}
			// A URI served in the previous cycle can be queued again once its site
			// is in the new cycle (soft: not before the site's queue drains).
			r := mustAdd(t, f, t0, uris("a", "q1")...)
			if (r.Queued == 1) != tc.requeued {
				t.Errorf("q1 re-add: %+v", r)
			}
			want := tc.want
			if tc.requeued {
				want = append(want, "q1")
			}
			got := short(serveAll(t, f, t0))
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("served (-want +got):\n%s", d)
			}
			if tc.mode == RefreshSoft {
				// The site refreshed when it drained: q1 is new again.
				if r := mustAdd(t, f, t0, uris("a", "q1")...); r.Queued != 1 {
					t.Errorf("soft: q1 after the site's refresh: %+v", r)
				}
			}
		})
	}
}

func TestRefreshSoftPerSite(t *testing.T) {
	cfg := testConfig()
	cfg.RefreshMode = RefreshSoft
	cfg.DBSwitch = 0
	f, _ := newFrontier(t, cfg)
	mustAdd(t, f, t0, uris("busy", "1", "2")...)
	mustAdd(t, f, t0, uris("done", "1")...)
	for {
		fe, ok, _ := f.Next(t0)
		if !ok {
			break
		}
		if fe.Site == "done" {
			f.Done(fe, Result{}, t0)
		}
	}
	rep, err := f.Refresh(t0, append(uris("busy", "s"), uris("done", "s")...), nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Seeded != 1 || rep.Deferred != 1 {
		t.Errorf("report %+v", rep)
	}
}

func TestRefreshAdaptive(t *testing.T) {
	cfg := testConfig()
	cfg.RefreshMode = RefreshAdaptive
	cfg.DBSwitch = 0
	cfg.Adaptive = Adaptive{RefreshQuota: 50, CoverageMin: 5, CoverageMaxPct: 10}
	f, _ := newFrontier(t, cfg)
	var es []Entry
	for i := 0; i < 30; i++ {
		es = append(es, uris("a", fmt.Sprintf("k%02d", i))...)
	}
	mustAdd(t, f, t0, es...)
	for {
		fe, ok, _ := f.Next(t0)
		if !ok {
			break
		}
		// Pages k00..k04 changed: they score highest.
		var n int
		fmt.Sscanf(fe.URI, "http://a/k%d", &n)
		if err := f.Done(fe, Result{Outcome: Fetched, Changed: n < 5}, t0); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := f.Refresh(t0, uris("a", "new1", "new2", "new3"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Rescheduled != 5 || rep.Seeded != 3 {
		t.Fatalf("report %+v", rep)
	}
	got := short(serveAll(t, f, t0))
	// refresh_quota 50: rescheduled and new alternate; the rescheduled are the changed ones.
	var resched []string
	for _, u := range got {
		if u[0] == 'k' {
			resched = append(resched, u)
		}
	}
	sort.Strings(resched)
	if d := cmp.Diff([]string{"k00", "k01", "k02", "k03", "k04"}, resched); d != "" {
		t.Errorf("rescheduled (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"k", "n", "k", "n", "k", "n", "k", "k"}, firstLetters(got)); d != "" {
		t.Errorf("quota order %v", got)
	}
}

func firstLetters(us []string) []string {
	out := make([]string, len(us))
	for i, u := range us {
		out[i] = u[:1]
	}
	return out
}

func TestDBSwitch(t *testing.T) {
	for _, del := range []bool{false, true} {
		t.Run(fmt.Sprintf("delete=%v", del), func(t *testing.T) {
			cfg := testConfig()
			cfg.RefreshMode = RefreshAppend
			cfg.DBSwitch = 1
			cfg.DBSwitchDelete = del
			f, _ := newFrontier(t, cfg)
			mustAdd(t, f, t0, uris("a", "old")...)
			serveAll(t, f, t0) // crawled in cycle 1
			var expired []string
			exp := func(site, uri string) error { expired = append(expired, uri); return nil }
			for c := 2; c <= 3; c++ { // cycles 2 and 3 start: at most 1 cycle without a crawl
				if rep, err := f.Refresh(t0, nil, exp); err != nil || rep.Expired+rep.CleanSite != 0 {
					t.Fatalf("cycle %d: %+v %v", c, rep, err)
				}
			}
			rep, err := f.Refresh(t0, nil, exp) // cycle 4: cycles 2 and 3 had no crawl
			if err != nil {
				t.Fatal(err)
			}
			if del {
				if rep.Expired != 1 || len(expired) != 1 || expired[0] != "http://a/old" {
					t.Errorf("expired %v, report %+v", expired, rep)
				}
				if rep, _ := f.Refresh(t0, nil, exp); rep.Expired != 0 {
					t.Error("expired twice")
				}
				return
			}
			if rep.CleanSite != 1 {
				t.Errorf("report %+v", rep)
			}
			if got := serveAll(t, f, t0); len(got) != 1 || got[0] != "http://a/old" {
				t.Errorf("clean-site pass served %v", got)
			}
		})
	}
}

func TestRefreshDue(t *testing.T) {
	cfg := testConfig()
	cfg.Refresh = time.Hour
	cfg.RefreshWhenIdle = false
	f, st := newFrontier(t, cfg)
	mustAdd(t, f, t0, uris("a", "1")...)
	if f.RefreshDue(t0.Add(59 * time.Minute)) {
		t.Error("due too early")
	}
	if !f.RefreshDue(t0.Add(time.Hour)) {
		t.Error("not due after the period")
	}
	cfg.RefreshWhenIdle = true
	f2, err := Open(st, cfg, nil, t0)
	if err != nil {
		t.Fatal(err)
	}
	if f2.RefreshDue(t0) {
		t.Error("due while work is queued")
	}
	serveAll(t, f2, t0)
	if !f2.RefreshDue(t0) {
		t.Error("refresh_when_idle: not due when idle")
	}
	if _, err := f2.Refresh(t0, nil, nil); err != nil {
		t.Fatal(err)
	}
	f3, err := Open(st, cfg, nil, t0)
	if err != nil {
		t.Fatal(err)
	}
	if f3.Cycle() != 2 {
		t.Errorf("cycle after reopen = %d", f3.Cycle())
	}
}
