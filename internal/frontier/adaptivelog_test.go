package frontier

import (
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// digitScore scores a URI by the digit its path ends with ("k7": 7).
func digitScore(k KnownURI) float64 {
	v, _ := strconv.Atoi(k.URI[len(k.URI)-1:])
	return float64(v)
}

// decision is an AdaptiveSite as a test keeps it: Taken copied, as short
// URIs.
type decision struct {
	Cause       AdaptiveCause
	Sub         string
	Cycle       int64
	Minor       int
	Site        string
	Known       int
	Limit       int
	Taken       []string
	StillQueued []string
}

// TestOnAdaptive: Config.OnAdaptive is told, per site, the known URIs each
// adaptive rescheduling ranked and took (refresh cycle, minor cycle,
// subcollection round), best ranked first, and the URIs it took are the
// ones served afterwards (besides the start URIs).
func TestOnAdaptive(t *testing.T) {
	names := func(prefix string, n int) []string {
		var out []string
		for i := 0; i < n; i++ {
			out = append(out, prefix+strconv.Itoa(i))
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		cfg   func(*Config)
		setup func(t *testing.T, f *Frontier) // after the first cycle was served
		run   func(t *testing.T, f *Frontier) time.Time
		want  func(f *Frontier) []decision
	}{{
		name: "refresh",
		run: func(t *testing.T, f *Frontier) time.Time {
			if _, err := f.Refresh(t0, uris("a", "start"), nil); err != nil {
				t.Fatal(err)
			}
			return t0
		},
		want: func(f *Frontier) []decision {
			return []decision{
				// 10 known: 50% is 5; 5 known: 50% is 2, coverage_min 3.
				{Cause: CauseRefresh, Cycle: f.Cycle(), Site: "a", Known: 10, Limit: 5, Taken: []string{"k9", "k8", "k7", "k6", "k5"}},
				{Cause: CauseRefresh, Cycle: f.Cycle(), Site: "b", Known: 5, Limit: 3, Taken: []string{"k4", "k3", "k2"}},
			}
		},
	}, {
		name: "minor",
		cfg: func(c *Config) {
			c.Refresh = 4 * time.Hour
			c.Adaptive.RefreshCount = 4
		},
		setup: func(t *testing.T, f *Frontier) {
			// a/k9 queued again (forced): still queued at the minor cycle.
			mustAdd(t, f, t0, Entry{URI: "http://a/k9", Site: "a", QueueFlags: QFForce})
		},
		run: func(t *testing.T, f *Frontier) time.Time {
			at := t0.Add(time.Hour)
			if _, err := f.Reschedule(at); err != nil {
				t.Fatal(err)
			}
			return at
		},
		want: func(f *Frontier) []decision {
			return []decision{
				{Cause: CauseMinor, Cycle: f.Cycle(), Minor: 1, Site: "a", Known: 10, Limit: 5, Taken: []string{"k9", "k8", "k7", "k6", "k5"}, StillQueued: []string{"k9"}},
				{Cause: CauseMinor, Cycle: f.Cycle(), Minor: 1, Site: "b", Known: 5, Limit: 3, Taken: []string{"k4", "k3", "k2"}},
			}
		},
	}, {
		name: "subcollection",
		cfg: func(c *Config) {
			c.RefreshMode = RefreshScratch
			c.Subs = []SubRefresh{{Name: "odd", Period: time.Hour, Mode: RefreshAdaptive}}
			c.SubOf = func(uri string) int {
				if v, _ := strconv.Atoi(uri[len(uri)-1:]); v%2 == 1 {
					return 0
				}
				return -1
			}
		},
		run: func(t *testing.T, f *Frontier) time.Time {
			if _, err := f.RefreshSub(t0, 0, uris("a", "start1"), false); err != nil {
				t.Fatal(err)
			}
			return t0
		},
		want: func(f *Frontier) []decision {
			return []decision{
				// a: k1 k3 k5 k7 k9 known; b: k1 k3.
				{Cause: CauseSub, Sub: "odd", Cycle: f.Cycle(), Site: "a", Known: 5, Limit: 3, Taken: []string{"k9", "k7", "k5"}},
				{Cause: CauseSub, Sub: "odd", Cycle: f.Cycle(), Site: "b", Known: 2, Limit: 3, Taken: []string{"k3", "k1"}},
			}
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.RefreshMode = RefreshAdaptive
			cfg.DBSwitch = 0
			cfg.Adaptive = Adaptive{RefreshQuota: 90, CoverageMin: 3, CoverageMaxPct: 50}
			cfg.Score = digitScore
			var got []decision
			var ranks [][]float64
			cfg.OnAdaptive = func(d AdaptiveSite) {
				x := decision{Cause: d.Cause, Sub: d.Sub, Cycle: d.Cycle, Minor: d.Minor, Site: d.Site, Known: d.Known, Limit: d.Limit}
				var r []float64
				for _, k := range d.Taken {
					x.Taken = append(x.Taken, short([]string{k.URI})[0])
					if k.StillQueued {
						x.StillQueued = append(x.StillQueued, short([]string{k.URI})[0])
					}
					if k.Site != d.Site || k.Score != digitScore(k.KnownURI) {
						t.Errorf("%s: site %q score %v in the decision of site %q", k.URI, k.Site, k.Score, d.Site)
					}
					r = append(r, k.Rank)
				}
				got = append(got, x)
				ranks = append(ranks, r)
			}
			if tc.cfg != nil {
				tc.cfg(&cfg)
			}
			f, _ := newFrontier(t, cfg)
			mustAdd(t, f, t0, uris("a", names("k", 10)...)...)
			mustAdd(t, f, t0, uris("b", names("k", 5)...)...)
			serveAll(t, f, t0)
			if tc.setup != nil {
				tc.setup(t, f)
			}
			if len(got) != 0 {
				t.Fatalf("decisions before any rescheduling: %+v", got)
			}
			at := tc.run(t, f)
			if d := cmp.Diff(tc.want(f), got); d != "" {
				t.Errorf("decisions (-want +got):\n%s", d)
			}
			for i, r := range ranks {
				if !sort.SliceIsSorted(r, func(a, b int) bool { return r[a] > r[b] }) {
					t.Errorf("decision %d: ranks %v not best first", i, r)
				}
			}
			// What is served next is what was taken, plus the start URIs.
			var want, served []string
			for _, d := range got {
				for _, u := range d.Taken {
					want = append(want, d.Site+"/"+u)
				}
			}
			for _, u := range serveAll(t, f, at) {
				u = strings.TrimPrefix(u, "http://")
				if !strings.HasPrefix(u, "a/start") {
					served = append(served, u)
				}
			}
			sort.Strings(want)
			sort.Strings(served)
			if d := cmp.Diff(want, served); d != "" {
				t.Errorf("served after the rescheduling (-taken +served):\n%s", d)
			}
		})
	}
}
