package frontier

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/vfs"
	"github.com/google/go-cmp/cmp"
	"github.com/trawl/trawl/internal/store"
)

func newFrontier(t *testing.T, cfg Config) (*Frontier, *store.Store) {
	t.Helper()
	st := openStore(t, vfs.NewMem())
	t.Cleanup(func() { st.Close() })
	f, err := Open(st, cfg, nil, t0)
	if err != nil {
		t.Fatal(err)
	}
	return f, st
}

func mustAdd(t *testing.T, f *Frontier, now time.Time, es ...Entry) AddResult {
	t.Helper()
	r, err := f.Add(now, es...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// serveAll fetches one URI at a time (Next then Done) at now until nothing
// is ready, and returns the URIs in order.
func serveAll(t *testing.T, f *Frontier, now time.Time) []string {
	t.Helper()
	var out []string
	for i := 0; i < 100000; i++ {
		for _, a := range f.Actions() {
			if a.Kind == ActResolve {
				f.SetIP(a.Site, "10.0.0.1", now)
			}
		}
		fe, ok, _ := f.Next(now)
		if !ok {
			return out
		}
		out = append(out, fe.URI)
		if err := f.Done(fe, Result{Outcome: Fetched}, now); err != nil {
			t.Fatal(err)
		}
	}
	t.Fatal("serveAll: no end")
	return nil
}

func uris(site string, names ...string) []Entry {
	var es []Entry
	for _, n := range names {
		es = append(es, Entry{URI: "http://" + site + "/" + n, Site: site})
	}
	return es
}

func short(us []string) []string {
	out := make([]string, len(us))
	for i, u := range us {
		out[i] = u[strings.LastIndex(u, "/")+1:]
	}
	return out
}

func TestPopSchemes(t *testing.T) {
	mk := func(level int, names ...string) []Entry {
		es := uris("a", names...)
		for i := range es {
			es[i].Level = level
		}
		return es
	}
	for _, tc := range []struct {
		name   string
		scheme PopScheme
		shares []int
		add    [][]Entry
		want   []string
	}{
		{"pri", PopPri, nil, [][]Entry{mk(3, "c1", "c2"), mk(2, "b1", "b2"), mk(1, "a1", "a2")},
			[]string{"a1", "a2", "b1", "b2", "c1", "c2"}},
		{"rr", PopRR, nil, [][]Entry{mk(1, "a1", "a2", "a3"), mk(2, "b1"), mk(3, "c1", "c2")},
			[]string{"a1", "b1", "c1", "a2", "c2", "a3"}},
		{"wrr 3:1", PopWRR, []int{3, 1}, [][]Entry{mk(1, "a1", "a2", "a3", "a4", "a5", "a6"), mk(2, "b1", "b2", "b3")},
			[]string{"a1", "a2", "b1", "a3", "a4", "a5", "b2", "a6", "b3"}},
		{"urgent and prepend first", PopPri, nil, [][]Entry{mk(1, "a1", "a2"),
			{{URI: "http://a/p", Site: "a", QueueFlags: QFPrepend, Level: 1}},
			{{URI: "http://a/u1", Site: "a", QueueFlags: QFUrgent, Level: 2}, {URI: "http://a/u2", Site: "a", QueueFlags: QFUrgent}}},
			[]string{"u2", "u1", "p", "a1", "a2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.Levels, cfg.PopScheme, cfg.Shares, cfg.MaxPending = 3, tc.scheme, tc.shares, 1
			cfg.HeadSize = 1 // force refills from disk
			f, _ := newFrontier(t, cfg)
			for _, es := range tc.add {
				mustAdd(t, f, t0, es...)
			}
			if d := cmp.Diff(tc.want, short(serveAll(t, f, t0))); d != "" {
				t.Errorf("order (-want +got):\n%s", d)
			}
		})
	}
}

func TestAddFilters(t *testing.T) {
	cfg := testConfig()
	cfg.MaxHops = 2
	cfg.MaxURIRecursion = 2
	f, _ := newFrontier(t, cfg)
	r := mustAdd(t, f, t0,
		Entry{URI: "http://a/1", Site: "a", Hops: 2},
		Entry{URI: "http://a/2", Site: "a", Hops: 3},
		Entry{URI: "http://a/x/x/x", Site: "a"},
		Entry{URI: "http://a/x/x", Site: "a"},
		Entry{URI: "http://a/1", Site: "a"},
		Entry{URI: "", Site: "a"},
		Entry{URI: "http://a/nc", Site: "a", URIFlags: URIFNoCrawl},
		Entry{URI: "http://a/siteuri", Site: "a", URIFlags: URIFSiteURI},
	)
	want := AddResult{Queued: 2, Duplicate: 1, TooDeep: 1, Recursive: 1, Invalid: 1, NoCrawl: 1}
	if d := cmp.Diff(want, r); d != "" {
		t.Errorf("first Add (-want +got):\n%s", d)
	}
	// A later duplicate is filtered from disk; QF_FORCE bypasses the filter.
	r = mustAdd(t, f, t0, Entry{URI: "http://a/1", Site: "a"}, Entry{URI: "http://a/x/x", Site: "a", QueueFlags: QFForce})
	if r.Queued != 1 || r.Duplicate != 1 {
		t.Errorf("second Add = %+v", r)
	}
	if got := serveAll(t, f, t0); len(got) != 3 {
		t.Errorf("served %v", got)
	}
	// Served URIs stay seen for the rest of the cycle.
	if r := mustAdd(t, f, t0, Entry{URI: "http://a/1", Site: "a"}); r.Duplicate != 1 {
		t.Errorf("served URI re-queued: %+v", r)
	}
}

func TestSeenFilterModes(t *testing.T) {
	for _, tc := range []struct {
		name     string
		wq       bool
		bits     int
		wantDups int
	}{
		{"exact", true, 0, 500},
		{"exact behind bloom", true, 1 << 16, 500},
		{"bloom only", false, 1 << 16, 500},
		{"no filter", false, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.WQFilter, cfg.SMFilterBits = tc.wq, tc.bits
			f, st := newFrontier(t, cfg)
			var es []Entry
			for i := 0; i < 1000; i++ {
				j := i % 500
				es = append(es, Entry{URI: fmt.Sprintf("http://s%d/%d", j%7, j), Site: fmt.Sprintf("s%d", j%7)})
			}
			r := mustAdd(t, f, t0, es[:500]...)
			r2 := mustAdd(t, f, t0, es[500:]...)
			if r.Queued != 500 || r2.Duplicate != tc.wantDups {
				t.Errorf("first %+v, second %+v; want %d duplicates", r, r2, tc.wantDups)
			}
			// Bloom-only filters survive a restart through Close.
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			f2, err := Open(st, cfg, nil, t0)
			if err != nil {
				t.Fatal(err)
			}
			r3, err := f2.Add(t0, es[:10]...)
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantDups > 0 && r3.Duplicate != 10 {
				t.Errorf("after reopen: %+v", r3)
			}
		})
	}
}

func TestBloom(t *testing.T) {
	const n = 10000
	bits := 100000
	if c := BloomCapacity(bits, 0.01); c < 9000 || c > 11000 {
		t.Errorf("BloomCapacity(%d, 0.01) = %d", bits, c)
	}
	b := newBloom(bits, 0.01)
	for i := 0; i < n; i++ {
		b.add(fmt.Sprintf("http://x/%d", i))
	}
	for i := 0; i < n; i++ {
		if !b.has(fmt.Sprintf("http://x/%d", i)) {
			t.Fatal("false negative")
		}
	}
	fp := 0
	for i := 0; i < n; i++ {
		if b.has(fmt.Sprintf("http://y/%d", i)) {
			fp++
		}
	}
	if rate := float64(fp) / n; rate > 0.02 {
		t.Errorf("false-positive rate %.4f, configured 0.01", rate)
	}
	c := newBloom(bits, 0.01)
	if err := c.load(b.marshal()); err != nil || !c.has("http://x/5") {
		t.Errorf("load: %v", err)
	}
	if err := newBloom(64, 0.01).load(b.marshal()); err == nil {
		t.Error("loaded a filter of another shape")
	}
}

func TestRecursionDepth(t *testing.T) {
	for _, tc := range []struct {
		uri, ref string
		want     int
	}{
		{"http://a/b/c", "", 1},
		{"http://a/x/x/x/y", "", 3},
		{"http://a/p/q/p/q/p/q/", "", 3},
		{"http://a/cal?d=1d=1", "http://a/cal?d=1", 2},
		{"http://a/a/b/c/d/e", "http://a/a/b/c/d/", 1},
		{"http://a/", "", 0},
	} {
		t.Run(tc.uri, func(t *testing.T) {
			if got := recursionDepth(tc.uri, tc.ref); got != tc.want {
				t.Errorf("recursionDepth = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestGrants(t *testing.T) {
	cfg := testConfig()
	cfg.RequireGrant = true
	cfg.MaxSitesPerIP = 1
	f, _ := newFrontier(t, cfg)
	mustAdd(t, f, t0, uris("a", "1")...)
	mustAdd(t, f, t0, uris("b", "1")...)
	if _, ok, _ := f.Next(t0); ok {
		t.Fatal("served before resolving")
	}
	acts := f.Actions()
	if len(acts) != 2 || acts[0].Kind != ActResolve {
		t.Fatalf("actions %+v", acts)
	}
	for _, a := range acts {
		f.SetIP(a.Site, "10.0.0.9", t0)
	}
	acts = f.Actions()
	if len(acts) != 2 || acts[0].Kind != ActRequestGrant || acts[0].IP != "10.0.0.9" {
		t.Fatalf("actions %+v", acts)
	}
	f.Grant("a", "10.0.0.9", false, t0) // denied
	f.Grant("b", "10.0.0.9", true, t0)
	fe, ok, _ := f.Next(t0)
	if !ok || fe.Site != "b" {
		t.Fatalf("Next = %+v %v", fe, ok)
	}
	_, ok, wake := f.Next(t0)
	if ok || !wake.Equal(t0.Add(30*time.Minute)) {
		t.Fatalf("denied site: ok=%v wake=%v", ok, wake)
	}
	if err := f.Done(fe, Result{}, t0); err != nil {
		t.Fatal(err)
	}
	// b is drained: it gives its grant back.
	if acts := f.Actions(); len(acts) != 1 || acts[0].Kind != ActStopCrawlIP || acts[0].Site != "b" {
		t.Fatalf("actions %+v", acts)
	}
	// After the block, a asks again (it kept its IP).
	later := t0.Add(30 * time.Minute)
	if _, ok, _ := f.Next(later); ok {
		t.Fatal("served without a grant")
	}
	if acts := f.Actions(); len(acts) != 1 || acts[0].Kind != ActRequestGrant || acts[0].Site != "a" {
		t.Fatalf("actions %+v", acts)
	}
	f.Grant("a", "10.0.0.9", true, later)
	if fe, ok, _ := f.Next(later); !ok || fe.Site != "a" {
		t.Fatalf("Next = %+v %v", fe, ok)
	}
}

func TestMaxSitesPerIP(t *testing.T) {
	cfg := testConfig()
	cfg.RequireGrant = true
	cfg.MaxSitesPerIP = 2
	f, _ := newFrontier(t, cfg)
	for _, s := range []string{"a", "b", "c"} {
		mustAdd(t, f, t0, uris(s, "1", "2")...)
	}
	f.Next(t0)
	for _, a := range f.Actions() {
		f.SetIP(a.Site, "10.0.0.1", t0)
	}
	for _, a := range f.Actions() {
		f.Grant(a.Site, a.IP, true, t0)
	}
	served := map[string]bool{}
	for {
		fe, ok, _ := f.Next(t0)
		if !ok {
			break
		}
		served[fe.Site] = true
	}
	if len(served) != 2 || served["c"] {
		t.Errorf("sites served on one IP: %v", served)
	}
	acts := f.Actions()
	if len(acts) != 1 || acts[0].Kind != ActStopCrawlIP || acts[0].Site != "c" {
		t.Errorf("the third site should give its grant back: %+v", acts)
	}
}

func TestQuarantine(t *testing.T) {
	cfg := testConfig()
	cfg.MaxSites = 1
	f, st := newFrontier(t, cfg)
	mustAdd(t, f, t0, uris("a", "1", "2")...)
	mustAdd(t, f, t0, uris("b", "1", "2", "3", "4")...)
	fe, _, _ := f.Next(t0) // a holds the only slot
	if fe.Site != "a" {
		t.Fatalf("first fetch from %s", fe.Site)
	}
	until := t0.Add(time.Hour)
	if err := f.Quarantine("a", until, true, t0); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := f.Next(t0); ok {
		t.Fatal("served while the quarantined site still holds the slot with a fetch in flight")
	}
	if err := f.Done(fe, Result{}, t0); err != nil {
		t.Fatal(err)
	}
	// The quarantine survives a restart.
	f, err := Open(st, cfg, nil, t0)
	if err != nil {
		t.Fatal(err)
	}
	got := short(serveAll(t, f, t0))
	if d := cmp.Diff([]string{"1", "2", "3"}, got[:3]); d != "" || len(got) != 4 {
		t.Errorf("b served %v", got)
	}
	if _, ok, wake := f.Next(t0); ok || !wake.Equal(until) {
		t.Errorf("wake = %v, want %v", wake, until)
	}
	// Requeued at the front: a is served before b's newly added work.
	mustAdd(t, f, until, uris("b", "5")...)
	if fe, ok, _ := f.Next(until); !ok || fe.URI != "http://a/2" {
		t.Errorf("after quarantine: %+v %v", fe, ok)
	}
}

func TestDelayAndRobots(t *testing.T) {
	cfg := testConfig()
	cfg.Delay = 10 * time.Second
	cfg.ObeyRobotsDelay = true
	f, _ := newFrontier(t, cfg)
	mustAdd(t, f, t0, uris("a", "1", "2", "3")...)
	fe, _, _ := f.Next(t0)
	if _, ok, wake := f.Next(t0); ok || !wake.Equal(t0.Add(10*time.Second)) {
		t.Fatalf("second start: ok=%v wake=%v", ok, wake)
	}
	if err := f.SetCrawlDelay("a", 30*time.Second, t0); err != nil {
		t.Fatal(err)
	}
	if _, ok, wake := f.Next(t0.Add(10 * time.Second)); ok || !wake.Equal(t0.Add(30*time.Second)) {
		t.Fatalf("with Crawl-delay: ok=%v wake=%v", ok, wake)
	}
	if _, ok, _ := f.Next(t0.Add(30 * time.Second)); !ok {
		t.Fatal("not served after Crawl-delay")
	}
	_ = fe
}

func TestBackoff(t *testing.T) {
	cfg := testConfig()
	cfg.Delay = time.Second
	cfg.MaxBackoffCounter = 3
	cfg.MaxBackoffDelay = 5 * time.Second
	cfg.MaxPending = 1
	f, _ := newFrontier(t, cfg)
	var es []Entry
	for i := 0; i < 10; i++ {
		es = append(es, uris("a", fmt.Sprint(i))...)
	}
	mustAdd(t, f, t0, es...)
	now := t0
	var gaps []time.Duration
	last := now
	for i := 0; i < 4; i++ {
		fe, ok, wake := f.Next(now)
		if !ok {
			now = wake
			fe, ok, _ = f.Next(now)
			if !ok {
				t.Fatalf("fetch %d not served at its wake time", i)
			}
		}
		gaps = append(gaps, now.Sub(last))
		last = now
		if err := f.Done(fe, Result{Outcome: NetError}, now); err != nil {
			t.Fatal(err)
		}
	}
	if d := cmp.Diff([]time.Duration{0, time.Second, 2 * time.Second, 4 * time.Second}, gaps); d != "" {
		t.Errorf("backoff gaps (-want +got):\n%s", d)
	}
	// The fourth failure exceeds max_backoff_counter: the site stops.
	if _, ok, wake := f.Next(now.Add(time.Hour)); ok || !wake.IsZero() {
		t.Errorf("stopped site still served (wake %v)", wake)
	}
	if s := f.Stats(); s.Queued != 0 || s.Dropped != 6 {
		t.Errorf("stats %+v", s)
	}
}

func TestMaxDocAndInterDocs(t *testing.T) {
	cfg := testConfig()
	cfg.MaxSites = 1
	cfg.MaxInterDocs = 2
	cfg.MaxDoc = 5
	cfg.RefreshMode = RefreshAppend
	f, _ := newFrontier(t, cfg)
	mustAdd(t, f, t0, uris("a", "a1", "a2", "a3", "a4", "a5", "a6", "a7")...)
	mustAdd(t, f, t0, uris("b", "b1", "b2", "b3")...)
	got := short(serveAll(t, f, t0))
	want := []string{"a1", "a2", "b1", "b2", "a3", "a4", "b3", "a5"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("interleaving (-want +got):\n%s", d)
	}
	if _, err := f.Refresh(t0, nil, nil); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"a6", "a7"}, short(serveAll(t, f, t0))); d != "" {
		t.Errorf("after refresh (-want +got):\n%s", d)
	}
}

// TestSiteDelayAndMaxDoc: Config.SiteDelay and SiteMaxDoc give one site
// its own delay and max_doc (a crawl subcollection); the others keep the
// collection's.
func TestSiteDelayAndMaxDoc(t *testing.T) {
	cfg := testConfig()
	cfg.Delay = 10 * time.Second
	cfg.MaxDoc = 3
	cfg.MaxPending = 1
	cfg.SiteDelay = func(site string) time.Duration {
		if site == "b" {
			return 2 * time.Second
		}
		return cfg.Delay
	}
	cfg.SiteMaxDoc = func(site string) int {
		if site == "b" {
			return 2
		}
		return cfg.MaxDoc
	}
	f, _ := newFrontier(t, cfg)
	mustAdd(t, f, t0, uris("a", "a1", "a2", "a3", "a4")...)
	mustAdd(t, f, t0, uris("b", "b1", "b2", "b3")...)
	starts := map[string][]time.Duration{}
	now := t0
	for i := 0; i < 100; i++ {
		fe, ok, wake := f.Next(now)
		if !ok {
			if wake.IsZero() {
				break
			}
			now = wake
			continue
		}
		starts[fe.Site] = append(starts[fe.Site], now.Sub(t0))
		if err := f.Done(fe, Result{Outcome: Fetched}, now); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string][]time.Duration{"a": {0, 10 * time.Second, 20 * time.Second}, "b": {0, 2 * time.Second}}
	if d := cmp.Diff(want, starts); d != "" {
		t.Errorf("starts per site (-want +got):\n%s", d)
	}
}

// TestPreempt: a preempted site stops at once, whether or not a fetch of it
// is in flight, gives its slot to the waiting site, and comes back (at the
// front with requeue) when the pause ends; a site not being crawled is left
// alone.
func TestPreempt(t *testing.T) {
	cfg := testConfig()
	cfg.MaxSites = 1
	cfg.Delay = 10 * time.Second
	f, _ := newFrontier(t, cfg)
	mustAdd(t, f, t0, uris("a", "1", "2", "3")...)
	mustAdd(t, f, t0, uris("b", "1", "2")...)
	if ok, err := f.Preempt("b", t0.Add(time.Minute), true, t0); ok || err != nil {
		t.Fatalf("preempting a site that is not crawled: %v %v", ok, err)
	}
	fe, _, _ := f.Next(t0) // a holds the only slot
	if fe.Site != "a" {
		t.Fatalf("first fetch from %s", fe.Site)
	}
	if err := f.Done(fe, Result{}, t0); err != nil {
		t.Fatal(err)
	}
	// Nothing in flight: a waits for its delay, holding the slot.
	pause := t0.Add(5 * time.Second)
	if ok, err := f.Preempt("a", pause, true, t0); !ok || err != nil {
		t.Fatalf("preempt: %v %v", ok, err)
	}
	fe, ok, _ := f.Next(t0)
	if !ok || fe.Site != "b" {
		t.Fatalf("after preempting a, the slot should go to b: %+v %v", fe, ok)
	}
	// A fetch in flight: b is preempted too, and nothing else starts.
	if ok, err := f.Preempt("b", pause, false, t0); !ok || err != nil {
		t.Fatalf("preempt b: %v %v", ok, err)
	}
	if err := f.Done(fe, Result{}, t0); err != nil {
		t.Fatal(err)
	}
	if fe, ok, wake := f.Next(t0.Add(4 * time.Second)); ok || !wake.Equal(pause) {
		t.Fatalf("served during the pause: %+v %v (wake %v)", fe, ok, wake)
	}
	// At the end of the pause a, requeued at the front, takes the slot
	// and is served when its delay has passed.
	if fe, ok, _ := f.Next(pause); ok {
		t.Fatalf("served before the delay: %+v", fe)
	}
	if fe, ok, _ := f.Next(t0.Add(cfg.Delay)); !ok || fe.URI != "http://a/2" {
		t.Errorf("after the pause: %+v %v", fe, ok)
	}
}
