package frontier

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/vfs"
	"github.com/trawl/trawl/internal/store"
)

var t0 = time.Date(2009, 6, 15, 11, 12, 16, 0, time.UTC)

func openStore(t testing.TB, fs vfs.FS) *store.Store {
	t.Helper()
	s, err := store.Open("db", store.Options{FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func testConfig() Config {
	c := DefaultConfig("coll")
	c.Delay = 0
	c.MaxURIRecursion = 0
	c.EnforceDelayPerIP = false
	return c
}

// sim drives a frontier with a fake clock and checks the politeness
// invariants at every fetch start.
type sim struct {
	t       *testing.T
	f       *Frontier
	cfg     Config
	rng     *rand.Rand
	now     time.Time
	ipOf    func(site string) string
	pending []simFetch // in flight, by completion time
	links   func(Fetch) []Entry

	siteStarts map[string]time.Time
	ipStarts   map[string]time.Time
	flying     map[string]int
	served     map[string]int
	order      []string
	maxSites   int
	steps      int
}

type simFetch struct {
	at time.Time
	fe Fetch
}

func newSim(t *testing.T, f *Frontier, cfg Config, seed uint64) *sim {
	return &sim{
		t: t, f: f, cfg: cfg, rng: rand.New(rand.NewPCG(seed, 7)), now: t0,
		ipOf:       func(site string) string { return "ip-" + site },
		siteStarts: map[string]time.Time{}, ipStarts: map[string]time.Time{},
		flying: map[string]int{}, served: map[string]int{},
	}
}

func (s *sim) actions() {
	for {
		acts := s.f.Actions()
		if len(acts) == 0 {
			return
		}
		s.handle(acts)
	}
}

func (s *sim) handle(acts []Action) {
	for _, a := range acts {
		switch a.Kind {
		case ActResolve:
			s.f.SetIP(a.Site, s.ipOf(a.Site), s.now)
		case ActRequestGrant:
			s.f.Grant(a.Site, a.IP, true, s.now)
		}
	}
}

// startAll starts every fetch the frontier allows at s.now; returns wakeAt.
func (s *sim) startAll() time.Time {
	for {
		s.actions()
		fe, ok, wake := s.f.Next(s.now)
		s.actions()
		if !ok {
			// Actions may have made a site ready: try once more.
			fe, ok, wake = s.f.Next(s.now)
			if !ok {
				return wake
			}
		}
		s.start(fe)
	}
}

func (s *sim) start(fe Fetch) {
	t := s.t
	t.Helper()
	if last, ok := s.siteStarts[fe.Site]; ok && s.now.Sub(last) < s.cfg.Delay {
		t.Fatalf("site %s: starts %v apart, delay %v", fe.Site, s.now.Sub(last), s.cfg.Delay)
	}
	s.siteStarts[fe.Site] = s.now
	if s.cfg.EnforceDelayPerIP {
		ip := s.ipOf(fe.Site)
		if fe.IP != ip {
			t.Fatalf("fetch of %s carries IP %q, want %q", fe.URI, fe.IP, ip)
		}
		if last, ok := s.ipStarts[ip]; ok && s.now.Sub(last) < s.cfg.Delay {
			t.Fatalf("ip %s: starts %v apart, delay %v", ip, s.now.Sub(last), s.cfg.Delay)
		}
		s.ipStarts[ip] = s.now
	}
	s.flying[fe.Site]++
	if s.flying[fe.Site] > s.cfg.MaxPending {
		t.Fatalf("site %s: %d fetches in flight, max_pending %d", fe.Site, s.flying[fe.Site], s.cfg.MaxPending)
	}
	if len(s.flying) > s.cfg.MaxSites {
		t.Fatalf("%d sites with fetches in flight, max_sites %d", len(s.flying), s.cfg.MaxSites)
	}
	if st := s.f.Stats(); st.ActiveSites > s.cfg.MaxSites {
		t.Fatalf("%d active sites, max_sites %d", st.ActiveSites, s.cfg.MaxSites)
	}
	s.maxSites = max(s.maxSites, len(s.flying))
	s.served[fe.URI]++
	s.order = append(s.order, fe.URI)
	d := time.Duration(1+s.rng.IntN(20)) * time.Second
	s.pending = append(s.pending, simFetch{at: s.now.Add(d), fe: fe})
	sort.SliceStable(s.pending, func(i, j int) bool { return s.pending[i].at.Before(s.pending[j].at) })
}

// step completes the earliest fetch or advances to wake; false when idle.
func (s *sim) step(wake time.Time) bool {
	s.steps++
	if len(s.pending) > 0 && (wake.IsZero() || !s.pending[0].at.After(wake)) {
		p := s.pending[0]
		s.pending = s.pending[1:]
		if p.at.After(s.now) {
			s.now = p.at
		}
		tx, err := s.f.Begin(s.now)
		if err != nil {
			s.t.Fatal(err)
		}
		if err := tx.Done(p.fe, Result{Outcome: Fetched}); err != nil {
			s.t.Fatal(err)
		}
		if s.links != nil {
			if _, err := tx.Add(s.links(p.fe)...); err != nil {
				s.t.Fatal(err)
			}
		}
		if err := tx.Commit(); err != nil {
			s.t.Fatal(err)
		}
		if s.flying[p.fe.Site]--; s.flying[p.fe.Site] == 0 {
			delete(s.flying, p.fe.Site)
		}
		return true
	}
	if wake.IsZero() {
		return false
	}
	if wake.Before(s.now) {
		s.t.Fatalf("wakeAt %v is in the past (now %v)", wake, s.now)
	}
	s.now = wake
	return true
}

func (s *sim) run(maxSteps int) {
	for i := 0; i < maxSteps; i++ {
		if !s.step(s.startAll()) {
			return
		}
	}
	s.t.Fatalf("not idle after %d steps", maxSteps)
}

func seedEntries(sites, perSite int) []Entry {
	var es []Entry
	for i := 0; i < perSite; i++ {
		for s := 0; s < sites; s++ {
			site := fmt.Sprintf("s%02d.example", s)
			es = append(es, Entry{URI: fmt.Sprintf("http://%s/seed/%d", site, i), Site: site})
		}
	}
	return es
}

// linksOf makes each fetched page link to two pages of its own site and one
// of another, with many duplicates.
func linksOf(sites int) func(Fetch) []Entry {
	return func(fe Fetch) []Entry {
		if fe.Hops >= 3 {
			return nil
		}
		var out []Entry
		for j := 0; j < 3; j++ {
			site := fe.Site
			if j == 2 {
				site = fmt.Sprintf("s%02d.example", (len(fe.URI)+fe.Hops)%sites)
			}
			out = append(out, Entry{
				URI:      fmt.Sprintf("http://%s/p/%d/%d", site, fe.Hops+1, (len(fe.URI)*7+j*13+fe.Hops*31+int(fe.URI[len(fe.URI)-1]))%120),
				Site:     site,
				Referrer: fe.URI, Hops: fe.Hops + 1,
			})
		}
		return out
	}
}

func TestSimulationPoliteness(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  func(*Config)
		ips  int
	}{
		{"per-site delay", func(c *Config) {}, 0},
		{"per-ip delay, shared IPs", func(c *Config) { c.EnforceDelayPerIP = true }, 5},
		{"grants and inter-docs", func(c *Config) { c.EnforceDelayPerIP = true; c.RequireGrant = true; c.MaxInterDocs = 3 }, 12},
		{"pending 1, one slot", func(c *Config) { c.MaxPending = 1; c.MaxSites = 1; c.Delay = 2 * time.Second }, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.Delay = 10 * time.Second
			cfg.MaxSites = 6
			cfg.MaxPending = 2
			tc.cfg(&cfg)
			st := openStore(t, vfs.NewMem())
			defer st.Close()
			f, err := Open(st, cfg, nil, t0)
			if err != nil {
				t.Fatal(err)
			}
			s := newSim(t, f, f.cfg, 1)
			if tc.ips > 0 {
				s.ipOf = func(site string) string { return fmt.Sprintf("10.0.0.%d", len(site)*31%tc.ips+int(site[2]-'0')%tc.ips) }
			}
			const sites = 30
			s.links = linksOf(sites)
			seeds := seedEntries(sites, 40)
			if _, err := f.Add(t0, seeds...); err != nil {
				t.Fatal(err)
			}
			s.run(200000)
			// Exactly once, and every seed served.
			for uri, n := range s.served {
				if n != 1 {
					t.Errorf("%s served %d times", uri, n)
				}
			}
			for _, e := range seeds {
				if s.served[e.URI] != 1 {
					t.Errorf("seed %s not served", e.URI)
				}
			}
			stats := f.Stats()
			if !f.Idle() || stats.Queued != 0 || stats.InFlight != 0 || stats.ActiveSites != 0 {
				t.Errorf("not drained: %+v", stats)
			}
			if int64(len(s.served)) != stats.Added {
				t.Errorf("served %d distinct URIs, queued %d", len(s.served), stats.Added)
			}
			if len(s.order) < 2000 {
				t.Errorf("only %d fetches: the simulation is too small", len(s.order))
			}
			t.Logf("%d fetches, %d duplicates filtered, max %d sites in flight, %v simulated",
				len(s.order), stats.Duplicates, s.maxSites, s.now.Sub(t0))
		})
	}
}

// TestSimulationRestart closes the store in the middle of a crawl (fetches
// in flight are abandoned, as in a crash), reopens it and continues: every
// URI is served, and only those in flight at the crash are served twice.
func TestSimulationRestart(t *testing.T) {
	fs := vfs.NewMem()
	cfg := testConfig()
	cfg.Delay = 5 * time.Second
	cfg.MaxSites = 4
	cfg.HeadSize = 3
	cfg.Levels = 2
	st := openStore(t, fs)
	f, err := Open(st, cfg, nil, t0)
	if err != nil {
		t.Fatal(err)
	}
	const sites = 8
	s := newSim(t, f, f.cfg, 2)
	s.links = linksOf(sites)
	seeds := seedEntries(sites, 10)
	for i := range seeds {
		seeds[i].Level = 1 + i%2
	}
	if _, err := f.Add(t0, seeds...); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 150; i++ {
		if !s.step(s.startAll()) {
			t.Fatal("idle before the crash")
		}
	}
	crashed := map[string]bool{}
	for _, p := range s.pending {
		crashed[p.fe.URI] = true
	}
	if len(crashed) == 0 {
		t.Fatal("nothing in flight at the crash")
	}
	queuedBefore := f.Stats().Queued
	st.Close()

	st = openStore(t, fs)
	defer st.Close()
	f, err = Open(st, cfg, nil, s.now)
	if err != nil {
		t.Fatal(err)
	}
	if q := f.Stats().Queued; q != queuedBefore {
		t.Fatalf("after reopen %d queued, before %d", q, queuedBefore)
	}
	s.f, s.pending, s.flying = f, nil, map[string]int{}
	s.siteStarts = map[string]time.Time{} // the restart may not honour the delay of fetches it never saw finish
	s.run(200000)
	for uri, n := range s.served {
		want := 1
		if crashed[uri] {
			want = 2
		}
		if n != want {
			t.Errorf("%s served %d times, want %d", uri, n, want)
		}
	}
	for _, e := range seeds {
		if s.served[e.URI] == 0 {
			t.Errorf("seed %s never served", e.URI)
		}
	}
	if !f.Idle() {
		t.Errorf("not idle: %+v", f.Stats())
	}
	t.Logf("%d fetches, %d re-served after the crash", len(s.order), len(crashed))
}
