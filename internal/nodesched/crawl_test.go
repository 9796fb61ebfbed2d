package nodesched

import (
	"context"
	"net/url"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/nodesched/crawlpipe"
	"github.com/trawl/trawl/internal/store"
	"github.com/trawl/trawl/internal/webfarm"
)

func startFarm(t testing.TB, hosts, pages int) *webfarm.Farm {
	cfg := webfarm.DefaultConfig(7, hosts, pages)
	cfg.StallMax = 0
	cfg.Port = 0 // a free port: other tests on the machine may hold 8080
	farm, err := webfarm.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { cancel(); farm.Close() })
	if err := farm.Start(ctx); err != nil {
		t.Fatal(err)
	}
	return farm
}

type crawlRun struct {
	farm       *webfarm.Farm
	crawl      webfarm.Crawl
	maxPending int
	rec        *requestRecorder
	mns        *fakeMNS
	d          *Driver
	st         *store.Store
	cancel     context.CancelFunc
	done       chan error
}

func runCrawl(t testing.TB, farm *webfarm.Farm, dir string, delay float64, timeout int) *crawlRun {
	return runCrawlWith(t, farm, dir, farm.DefaultCrawl(), webfarm.XMLOptions{Collection: "farm", Delay: delay, FetchTimeout: timeout})
}

// runCrawlWith crawls farm under crawl written with opt (collection "farm").
func runCrawlWith(t testing.TB, farm *webfarm.Farm, dir string, crawl webfarm.Crawl, opt webfarm.XMLOptions) *crawlRun {
	return runCrawlCfg(t, farm, dir, crawl, opt, nil)
}

// runCrawlCfg is runCrawlWith with a change to the driver's Config.
func runCrawlCfg(t testing.TB, farm *webfarm.Farm, dir string, crawl webfarm.Crawl, opt webfarm.XMLOptions, change func(*Config)) *crawlRun {
	col := farmCollection(t, farm, crawl, opt)
	st, err := store.Open(dir, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	mns := newFakeMNS(t, farm, "node1", col)
	rec := &requestRecorder{}
	cfg := Config{NodeID: "node1", Store: st, MNS: mns.dialer(ctx), Workers: 64, Record: rec.add}
	if change != nil {
		change(&cfg)
	}
	d := New(cfg)
	r := &crawlRun{farm: farm, crawl: crawl, maxPending: col.Effective("", "node1").MaxPending(), rec: rec,
		mns: mns, d: d, st: st, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- d.Run(ctx) }()
	t.Cleanup(func() { r.stop(t) })
	return r
}

func (r *crawlRun) stop(t testing.TB) {
	if r.cancel == nil {
		return
	}
	r.cancel()
	if err := <-r.done; err != nil {
		t.Errorf("Run: %v", err)
	}
	r.cancel = nil
	r.st.Close()
}

func TestCrawlMatchesExpect(t *testing.T) {
	farm := startFarm(t, 5, 50)
	r := runCrawl(t, farm, t.TempDir(), 0.05, 8)
	waitIdle(t, r.d, 90*time.Second)
	want, err := farm.Expect(r.crawl)
	if err != nil {
		t.Fatal(err)
	}
	got := requestedURLs(farm, 0)
	missing, extra := diffSets(want, got)
	if len(missing)+len(extra) > 0 {
		t.Errorf("fetched set differs from Expect: %d wanted, %d fetched\nmissing (%d): %v\nextra (%d): %v", len(want), len(got), len(missing), head(missing), len(extra), head(extra))
	}
	checkOwnPoliteness(t, r.rec.logs(), 50*time.Millisecond, r.maxPending)
	checkPoliteness(t, farm, 50*time.Millisecond, r.maxPending)
	t.Logf("crawled %d URLs; stats %v", len(got), r.d.Stats()["farm"])
}

func head(s []string) []string {
	if len(s) > 30 {
		return s[:30]
	}
	return s
}

// checkPoliteness checks the farm's request log, as a second and looser
// check beside checkOwnPoliteness (which asserts the crawler's own request
// starts exactly): the farm stamps a request when its handler runs, and on
// a loaded 2-core machine (worse under -race) server-side scheduling can
// squeeze two arrivals together however well they were spaced when sent.
// So it fails only when the median gap between consecutive arrivals at a
// site or IP is below three quarters of the delay, or more than 10% of the
// gaps are below half of it (a crawler that did not pace fails both
// wholesale; server-side squeezes under load stay well inside both), and
// logs the closest pairs. It also checks that no more than maxPending
// requests to one site are in flight at once.
func checkPoliteness(t testing.TB, farm *webfarm.Farm, delay time.Duration, maxPending int) {
	t.Helper()
	reqs := farm.Requests()
	bySite := map[string][]webfarm.Request{}
	byIP := map[string][]webfarm.Request{}
	for _, r := range reqs {
		u, _ := url.Parse(r.URL)
		bySite[u.Host] = append(bySite[u.Host], r)
		byIP[r.Local] = append(byIP[r.Local], r)
	}
	check := func(kind string, groups map[string][]webfarm.Request) {
		pairs, close := 0, 0
		var gaps []time.Duration
		for k, rs := range groups {
			sortByTime(rs)
			for i := 1; i < len(rs); i++ {
				pairs++
				gap := rs[i].Time.Sub(rs[i-1].Time)
				gaps = append(gaps, gap)
				if gap < delay/2 {
					close++
					if close <= 3 {
						t.Logf("%s %s: arrivals of %s and %s only %v apart (server-side timing)", kind, k, rs[i-1].URL, rs[i].URL, gap)
					}
				}
			}
		}
		if pairs > 0 && close*10 > pairs {
			t.Errorf("%s: %d of %d consecutive arrivals closer than half the delay %v", kind, close, pairs, delay)
		}
		if len(gaps) > 0 {
			slices.Sort(gaps)
			if med := gaps[len(gaps)/2]; med < delay*3/4 {
				t.Errorf("%s: median gap between consecutive arrivals %v, below three quarters of the delay %v", kind, med, delay)
			}
		}
	}
	check("site", bySite)
	check("ip", byIP)
	for site, rs := range bySite {
		for i := range rs {
			n := 0
			for j := range rs {
				if !rs[j].Time.After(rs[i].Time) && rs[j].Time.Add(rs[j].Duration).After(rs[i].Time) {
					n++
				}
			}
			if n > maxPending {
				t.Errorf("site %s: %d requests in flight at %v (max_pending %d)", site, n, rs[i].Time, maxPending)
				break
			}
		}
	}
}

func sortByTime(rs []webfarm.Request) {
	for i := 1; i < len(rs); i++ {
		for j := i; j > 0 && rs[j].Time.Before(rs[j-1].Time); j-- {
			rs[j], rs[j-1] = rs[j-1], rs[j]
		}
	}
}

// requestRecorder keeps what Pipeline.Record reports.
type requestRecorder struct {
	mu  sync.Mutex
	all []crawlpipe.RequestLog
}

func (r *requestRecorder) add(l crawlpipe.RequestLog) {
	r.mu.Lock()
	r.all = append(r.all, l)
	r.mu.Unlock()
}

func (r *requestRecorder) logs() []crawlpipe.RequestLog {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]crawlpipe.RequestLog(nil), r.all...)
}

// checkOwnPoliteness checks the crawler's own record of its requests, with
// no tolerance: per site, and per IP where enforce_delay_per_ip applies, no
// request (robots.txt included) starts less than its delay after the one
// before, no delay is below the configured one, and at no request start are
// more than maxPending requests of its site in flight.
func checkOwnPoliteness(t testing.TB, logs []crawlpipe.RequestLog, delay time.Duration, maxPending int) {
	t.Helper()
	if len(logs) == 0 {
		t.Fatal("the recorder saw no request")
	}
	bySite := map[string][]crawlpipe.RequestLog{}
	byIP := map[string][]crawlpipe.RequestLog{}
	for _, l := range logs {
		if l.Delay < delay {
			t.Errorf("%s held to %v, below the configured delay %v", l.URI, l.Delay, delay)
		}
		bySite[l.Site] = append(bySite[l.Site], l)
		if l.PerIP {
			byIP[l.IP] = append(byIP[l.IP], l)
		}
	}
	check := func(kind string, groups map[string][]crawlpipe.RequestLog) {
		for k, ls := range groups {
			sort.SliceStable(ls, func(i, j int) bool { return ls[i].Start.Before(ls[j].Start) })
			for i := 1; i < len(ls); i++ {
				if gap := ls[i].Start.Sub(ls[i-1].Start); gap < ls[i].Delay {
					t.Errorf("%s %s: %s started %v after %s (delay %v)", kind, k, ls[i].URI, gap, ls[i-1].URI, ls[i].Delay)
					return
				}
			}
		}
	}
	check("site", bySite)
	check("ip", byIP)
	for site, ls := range bySite {
		// ls is sorted by start: sweep with the ends of the earlier ones.
		var ends []time.Time
		for _, l := range ls {
			live := ends[:0]
			for _, e := range ends {
				if e.After(l.Start) {
					live = append(live, e)
				}
			}
			ends = append(live, l.End)
			if len(ends) > maxPending {
				t.Errorf("site %s: %d requests in flight when %s started (max_pending %d)", site, len(ends), l.URI, maxPending)
				break
			}
		}
	}
	nIP := 0
	for _, ls := range byIP {
		nIP += len(ls)
	}
	t.Logf("own record: %d requests on %d sites, %d of them paced per IP on %d IPs", len(logs), len(bySite), nIP, len(byIP))
}
