package crawladmin

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/admin"
	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/config"
	"github.com/trawl/trawl/internal/stats"
)

// countingEngine is an Engine with one collection whose counters the test
// sets; every operation succeeds.
type countingEngine struct {
	state  cmt.CollectionState
	report stats.CounterReport
	dns    stats.DNSCounters
}

func (e *countingEngine) Collections(context.Context) ([]CollectionInfo, error) {
	return []CollectionInfo{{Name: "web", State: e.state}}, nil
}
func (e *countingEngine) AddCollection(context.Context, *config.Collection, bool) error { return nil }
func (e *countingEngine) RemoveCollection(context.Context, string) error                { return nil }
func (e *countingEngine) Queue(_ context.Context, _ string, uris []string, _, _ bool) (int, error) {
	return len(uris), nil
}
func (e *countingEngine) DeleteSite(context.Context, string, string) error                { return nil }
func (e *countingEngine) DeleteURIs(context.Context, string, []cmt.SiteURIs) error        { return nil }
func (e *countingEngine) PreemptSite(context.Context, string, string) error               { return nil }
func (e *countingEngine) QuarantineSite(context.Context, string, string, int) error       { return nil }
func (e *countingEngine) Refresh(context.Context, string, string, cmt.RefreshFlags) error { return nil }
func (e *countingEngine) ReprocessSite(context.Context, string, string, string, string, bool) error {
	return nil
}
func (e *countingEngine) Suspend(context.Context, string) error                        { return nil }
func (e *countingEngine) Resume(context.Context, string) error                         { return nil }
func (e *countingEngine) SuspendFeeding(context.Context, string, bool, []string) error { return nil }
func (e *countingEngine) SetRefreshOnly(context.Context, string, bool) error           { return nil }
func (e *countingEngine) RefetchURI(context.Context, string, string, RefetchOptions) error {
	return nil
}
func (e *countingEngine) Route(context.Context, string, string) (admin.HostPort, error) {
	return admin.HostPort{}, admin.Refuse("no routes")
}
func (e *countingEngine) NodeSchedulers(context.Context) ([]admin.HostPort, error) { return nil, nil }
func (e *countingEngine) ForwardLogLevel(context.Context, int) error               { return nil }
func (e *countingEngine) Counters(context.Context) map[string]stats.CounterReport {
	return map[string]stats.CounterReport{"web": e.report}
}
func (e *countingEngine) DNS(context.Context) (stats.DNSCounters, bool) { return e.dns, true }
func (e *countingEngine) Modes(context.Context) (map[string]Modes, bool) {
	return map[string]Modes{"web": {FeedingOff: []string{"idx2"}, RefreshOnly: true}}, true
}
func (e *countingEngine) ConfigXML(context.Context, string) (string, error) { return "", nil }

// TestRefreshFromCounters checks what the Backend makes of an engine's
// counters: the collection and site statistics, LastUri, SumActiveSites,
// CrawlEnded, the modes read from the engine and the global DNS counters.
func TestRefreshFromCounters(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(1_700_000_000, 0)
	eng := &countingEngine{report: stats.CounterReport{
		Counters:    map[string]int64{"fetched": 5, "processed": 5, "stored": 4, "active_sites": 2, "http_404": 1},
		Sites:       map[string]map[string]int64{"a.example": {"fetched": 3}, "b.example": {"fetched": 2}},
		LastURI:     "http://b.example/1",
		SiteLastURI: map[string]string{"a.example": "http://a.example/9", "b.example": "http://b.example/1"},
	}, dns: stats.DNSCounters{Requests: 7, Responses: 6}}
	b := New(eng, nil, Options{Role: admin.MultinodeScheduler, SumActiveSites: true, Now: func() time.Time { return now }})
	b.Refresh(ctx)
	now = now.Add(2 * time.Minute)
	r, err := b.CollectionGetStatistics2(ctx, "web")
	if err != nil {
		t.Fatal(err)
	}
	if r.Cur.Downloaded != 5 || r.Cur.Stored != 4 || r.Cur.ActiveSites != 2 {
		t.Errorf("current cycle: downloaded %v stored %v active sites %v; want 5, 4, 2", r.Cur.Downloaded, r.Cur.Stored, r.Cur.ActiveSites)
	}
	if r.Cur.CrawlMode != stats.CrawlModeUserRefresh {
		t.Errorf("crawl mode %q, want the refresh-only mode the engine keeps", r.Cur.CrawlMode)
	}
	st, err := b.CollectionGetStatistics(ctx, "web")
	if err != nil {
		t.Fatal(err)
	}
	web := st.Get("web").Complete()
	if got := web.Value("SumActiveSites"); got != 2 {
		t.Errorf("SumActiveSites %v, want 2", got)
	}
	if web.Value("CrawlEnded") == 0 {
		t.Errorf("CrawlEnded not set although nothing is queued or in flight")
	}
	if got := web.String("LastUri"); got != "http://b.example/1" {
		t.Errorf("collection LastUri %q, want the last site's", got)
	}
	ss, err := b.CollectionGetSiteStatistics(ctx, "web", "a.example")
	if err != nil {
		t.Fatal(err)
	}
	if got := ss.Series[0].Complete().String("LastUri"); got != "http://a.example/9" {
		t.Errorf("site LastUri %q", got)
	}
	if got := ss.Series[0].Complete().Value("Downloaded"); got != 3 {
		t.Errorf("site downloaded %v, want 3", got)
	}
	g, err := b.GetGlobalStatistics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if g.Complete.DNSRequests != 7 || g.Complete.DNSResponses != 6 {
		t.Errorf("global DNS %v/%v, want 7/6", g.Complete.DNSRequests, g.Complete.DNSResponses)
	}
	// The feeding suspension read from the engine: idx2 is suspended.
	if _, err := b.CollectionSuspendFeeding(ctx, "web", "idx2"); err == nil {
		t.Errorf("suspending feeding to idx2 again was accepted")
	}
}

// TestStateErrors checks the typed errors of wrong states.
func TestStateErrors(t *testing.T) {
	ctx := context.Background()
	eng := &countingEngine{state: cmt.StateRemoving}
	b := New(eng, nil, Options{})
	_, err := b.CollectionSuspend(ctx, "web")
	if !errorIs(err, admin.ErrState) || err.Error() != "collection web is being deleted" {
		t.Errorf("suspend while deleting: %v", err)
	}
	eng.state = cmt.StateSuspendedUser
	if _, err := b.CollectionSuspend(ctx, "web"); !errorIs(err, admin.ErrState) {
		t.Errorf("suspend twice: %v", err)
	}
	if _, err := b.AddURIs(ctx, "nosuch", false, []string{"http://a.example/"}); !errorIs(err, admin.ErrNoCollection) {
		t.Errorf("unknown collection: %v", err)
	}
}

func errorIs(err, target error) bool { return err != nil && errors.Is(err, target) }

// TestMaximaExact: the largest document and the longest download are the
// engine's maxima (doc_bytes_max, dl_time_us_max), not derived from the
// averages. A multinode scheduler's counters carry the largest of its node
// schedulers' maxima (internal/multinode TestNodeStatsReports), so its
// DocSizeMax and DLTimeMax are exact too, per collection and per site.
func TestMaximaExact(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(1_700_000_000, 0)
	c := map[string]int64{"fetched": 4, "processed": 4, "doc_bytes": 1000, "doc_bytes_n": 4, "doc_bytes_max": 700,
		"dl_time_us": 4_000_000, "dl_time_us_n": 4, "dl_time_us_max": 2_500_000}
	eng := &countingEngine{report: stats.CounterReport{Counters: c,
		Sites: map[string]map[string]int64{"a.example": c}}}
	b := New(eng, nil, Options{Role: admin.MultinodeScheduler, Now: func() time.Time { return now }})
	b.Refresh(ctx)
	now = now.Add(2 * time.Minute)
	r, err := b.CollectionGetStatistics2(ctx, "web")
	if err != nil {
		t.Fatal(err)
	}
	if r.Cur.DocSizeMax != 700 || r.Cur.DLTimeMax != 2.5 || r.Cur.DocSizeAvg != 250 {
		t.Errorf("DocSizeMax %v DLTimeMax %v DocSizeAvg %v, want 700, 2.5, 250", r.Cur.DocSizeMax, r.Cur.DLTimeMax, r.Cur.DocSizeAvg)
	}
	ss, err := b.CollectionGetSiteStatistics(ctx, "web", "a.example")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, hi, _ := ss.Series[0].Complete().Numbers("DocSize"); hi != 700 {
		t.Errorf("site DocSize maximum %v, want 700", hi)
	}
}

// TestConfigurationChanged: a process with configuration files rereads
// them (a changed collection is updated); a node scheduler, whose
// collections come from its multinode scheduler, has nothing to reread
// and answers with a fault that says where to call instead of reporting a
// reread that did not happen.
func TestConfigurationChanged(t *testing.T) {
	ctx := context.Background()
	node := New(&countingEngine{}, nil, Options{Role: admin.NodeScheduler, ConfigFrom: "multinode scheduler"})
	err := node.ConfigurationChanged(ctx)
	if err == nil || !strings.Contains(err.Error(), "multinode scheduler") {
		t.Errorf("node scheduler: %v, want a fault naming its multinode scheduler", err)
	}
	path := filepath.Join(t.TempDir(), "crawl.xml")
	write := func(delay string) {
		x := `<?xml version="1.0"?><CrawlerConfig><DomainSpecification name="web">` +
			`<attrib name="start_uris" type="list-string"><member>http://a.example/</member></attrib>` +
			`<attrib name="delay" type="real">` + delay + `</attrib></DomainSpecification></CrawlerConfig>`
		if err := os.WriteFile(path, []byte(x), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("1.0")
	run := New(&countingEngine{}, nil, Options{Role: admin.Standalone, Configs: []string{path}, ConfigFrom: "ignored while there are files"})
	write("7.5")
	if err := run.ConfigurationChanged(ctx); err != nil {
		t.Fatal(err)
	}
	x, err := run.CollectionGetConfigurationXML(ctx, "web")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(x, "7.5") {
		t.Errorf("configuration after ConfigurationChanged does not hold the new delay:\n%s", x)
	}
}

// TestSiteCrawlEndedAndEpoch: when a collection runs out of work, each of
// its sites gets CrawlEnded = the time of its own last crawl step (the
// last refresh that saw its counters change), and a site's Epoch is the
// collection's refresh cycle.
func TestSiteCrawlEndedAndEpoch(t *testing.T) {
	ctx := context.Background()
	t0 := time.Unix(1_700_000_000, 0)
	now := t0
	eng := &countingEngine{report: stats.CounterReport{
		Counters: map[string]int64{"processed": 5, "fetched": 5, "queued": 3, "refresh_cycles": 2},
		Sites:    map[string]map[string]int64{"a.example": {"fetched": 3}, "b.example": {"fetched": 2}},
	}}
	b := New(eng, nil, Options{Role: admin.NodeScheduler, Now: func() time.Time { return now }})
	b.Refresh(ctx)
	now = t0.Add(10 * time.Second) // b.example fetches once more
	eng.report = stats.CounterReport{
		Counters: map[string]int64{"processed": 6, "fetched": 6, "queued": 1, "refresh_cycles": 2},
		Sites:    map[string]map[string]int64{"a.example": {"fetched": 3}, "b.example": {"fetched": 3}},
	}
	b.Refresh(ctx)
	now = t0.Add(20 * time.Second) // out of work
	eng.report.Counters = map[string]int64{"processed": 6, "fetched": 6, "refresh_cycles": 2}
	b.Refresh(ctx)
	for site, want := range map[string]time.Time{"a.example": t0, "b.example": t0.Add(10 * time.Second)} {
		ss, err := b.CollectionGetSiteStatistics(ctx, "web", site)
		if err != nil {
			t.Fatal(err)
		}
		rec := ss.Series[0].Complete()
		if got := rec.Value("CrawlEnded"); got != unix(want) {
			t.Errorf("%s CrawlEnded %v, want %v", site, got, unix(want))
		}
		if got := rec.Value("Epoch"); got != 2 {
			t.Errorf("%s Epoch %v, want 2", site, got)
		}
	}
	st, err := b.CollectionGetStatistics(ctx, "web")
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Get("web").Complete().Value("CrawlEnded"); got != unix(now) {
		t.Errorf("collection CrawlEnded %v, want %v", got, unix(now))
	}
}

// TestPPChecksums: PPChecksums is the engine's count of unique checksums
// it owns (pp_checksums); SumPPChecksums is that sum on a multinode
// scheduler and 0 on a node scheduler (MS-FSCADM 2.2.4.10).
func TestPPChecksums(t *testing.T) {
	ctx := context.Background()
	for _, x := range []struct {
		role    admin.Role
		sum     bool
		wantSum float64
	}{{admin.MultinodeScheduler, true, 42}, {admin.NodeScheduler, false, 0}} {
		now := time.Unix(1_700_000_000, 0)
		eng := &countingEngine{report: stats.CounterReport{Counters: map[string]int64{"processed": 50, "pp_checksums": 42}}}
		b := New(eng, nil, Options{Role: x.role, SumActiveSites: x.sum, Now: func() time.Time { return now }})
		b.Refresh(ctx)
		st, err := b.CollectionGetStatistics(ctx, "web")
		if err != nil {
			t.Fatal(err)
		}
		rec := st.Get("web").Complete()
		if got := rec.Value("PPChecksums"); got != 42 {
			t.Errorf("%v: PPChecksums %v, want 42", x.role, got)
		}
		if got := rec.Value("SumPPChecksums"); got != x.wantSum {
			t.Errorf("%v: SumPPChecksums %v, want %v", x.role, got, x.wantSum)
		}
	}
}
