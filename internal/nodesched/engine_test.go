package nodesched

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/nodesched/crawlpipe"
	"github.com/trawl/trawl/internal/store"
	"github.com/trawl/trawl/internal/webfarm"
)

// TestMachineDeleteDropsQueued checks that CMD_UM_DELETE_URIS and
// CMD_UM_DELETE_SITE remove the queued frontier entries, not only the
// stored records, and that a later link queues the URIs again.
func TestMachineDeleteDropsQueued(t *testing.T) {
	m, now := newTestMachine(t)
	for _, site := range []string{"a.test", "b.test"} {
		if err := m.Handle(MNS, &cmt.UMAddRoute{Collection: "c1", NodeID: "n1", Site: site, TTL: 60}, now); err != nil {
			t.Fatal(err)
		}
	}
	send := func(uris ...string) {
		t.Helper()
		for _, u := range uris {
			if err := m.Handle(MNS, &cmt.UMURI{Collection: "c1", Entry: wireEntry(crawlpipe.Link{URI: u}, "", 0)}, now); err != nil {
				t.Fatal(err)
			}
		}
	}
	send("http://a.test/1", "http://a.test/2", "http://a.test/3", "http://b.test/1", "http://b.test/2")
	queued := func() int64 { return m.Stats("c1")["queued"] }
	if q := queued(); q != 5 {
		t.Fatalf("queued %d, want 5", q)
	}
	err := m.Handle(MNS, &cmt.UMDeleteURIs{Collection: "c1", Sites: []cmt.SiteURIs{{Site: "a.test", URIs: []string{"http://a.test/2"}}}}, now)
	if err != nil {
		t.Fatal(err)
	}
	if q := queued(); q != 4 {
		t.Errorf("after DELETE_URIS: queued %d, want 4", q)
	}
	if err := m.Handle(MNS, &cmt.UMDeleteSite{Collection: "c1", Site: "b.test"}, now); err != nil {
		t.Fatal(err)
	}
	if q := queued(); q != 2 {
		t.Errorf("after DELETE_SITE: queued %d, want 2", q)
	}
	// Forgotten, not merely dropped: links to them queue them again.
	before := m.Stats("c1")["uris_queued"]
	send("http://a.test/2", "http://b.test/1", "http://a.test/1")
	if got := m.Stats("c1")["uris_queued"] - before; got != 2 {
		t.Errorf("re-sent URIs queued %d, want 2 (a.test/1 is still queued)", got)
	}
	if q := queued(); q != 4 {
		t.Errorf("queued %d, want 4", q)
	}
}

// TestCrawlDepthMatchesExpect crawls under crawlmode DEPTH:2, where a URI's
// depth is the minimum over every path that reaches it (the webfarm
// contract): a shorter path found after a URI was queued or fetched at a
// greater depth must lower it, or the pages under it go missing.
func TestCrawlDepthMatchesExpect(t *testing.T) {
	farm := startFarm(t, 6, 60)
	crawl := farm.DefaultCrawl()
	crawl.MaxDepth = 2
	want, err := farm.Expect(crawl)
	if err != nil {
		t.Fatal(err)
	}
	col := farmCollection(t, farm, crawl, XMLOpts(0, 8))
	st, err := store.Open(t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx, cancel := context.WithCancel(context.Background())
	mns := newFakeMNS(t, farm, "node1", col)
	rec := &requestRecorder{}
	d := New(Config{NodeID: "node1", Store: st, MNS: mns.dialer(ctx), Workers: 64, Record: rec.add})
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	waitIdle(t, d, 90*time.Second)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	got := requestedURLs(farm, 0)
	missing, extra := diffSets(want, got)
	if len(missing)+len(extra) > 0 {
		t.Errorf("DEPTH:2 fetched set differs from Expect: %d wanted, %d fetched\nmissing (%d): %v\nextra (%d): %v",
			len(want), len(got), len(missing), head(missing), len(extra), head(extra))
	}
	checkOwnPoliteness(t, rec.logs(), 0, col.Effective("", "node1").MaxPending())
	// Each URL is requested once: a shorter path found after the fetch
	// takes the links again from the stored document (QFReextract).
	twice := requestedTwice(farm, 0)
	if len(twice) > 0 {
		t.Errorf("%d URLs requested more than once: %v", len(twice), head(twice))
	}
	t.Logf("DEPTH:2: %d URLs; %d requests; %d re-extractions", len(got), len(rec.logs()), d.Stats()["farm"]["reextracted"])
}

// requestedTwice lists the URLs the farm saw more than once in cycle.
func requestedTwice(farm *webfarm.Farm, cycle int) []string {
	n := map[string]int{}
	var out []string
	for _, r := range farm.Requests() {
		if r.Cycle == cycle {
			if n[r.URL]++; n[r.URL] == 2 {
				out = append(out, r.URL)
			}
		}
	}
	sort.Strings(out)
	return out
}

// TestCrawlPoliteSharedIPs crawls a farm where several hosts share an
// address, with a delay, and checks on the crawler's own record that the
// delay held per site and per IP (enforce_delay_per_ip, the default),
// robots.txt requests included, and max_pending per site.
func TestCrawlPoliteSharedIPs(t *testing.T) {
	cfg := webfarm.DefaultConfig(11, 10, 12)
	cfg.StallMax = 0
	cfg.Port = 0
	cfg.SharedIPHosts = 4
	farm, err := webfarm.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { cancel(); farm.Close() })
	if err := farm.Start(ctx); err != nil {
		t.Fatal(err)
	}
	const delay = 40 * time.Millisecond
	r := runCrawl(t, farm, t.TempDir(), delay.Seconds(), 8)
	waitIdle(t, r.d, 120*time.Second)
	want, err := farm.Expect(r.crawl)
	if err != nil {
		t.Fatal(err)
	}
	if missing, extra := diffSets(want, requestedURLs(farm, 0)); len(missing)+len(extra) > 0 {
		t.Errorf("fetched set differs from Expect: missing %v, extra %v", head(missing), head(extra))
	}
	logs := r.rec.logs()
	sites, ips := map[string]bool{}, map[string]map[string]bool{}
	robots := 0
	for _, l := range logs {
		sites[l.Site] = true
		if ips[l.IP] == nil {
			ips[l.IP] = map[string]bool{}
		}
		ips[l.IP][l.Site] = true
		if l.Robots {
			robots++
		}
	}
	shared := 0
	for _, s := range ips {
		if len(s) > 1 {
			shared++
		}
	}
	if shared == 0 || robots == 0 {
		t.Fatalf("the test needs IPs shared by sites (%d) and robots.txt requests (%d)", shared, robots)
	}
	checkOwnPoliteness(t, logs, delay, r.maxPending)
	checkPoliteness(t, farm, delay, r.maxPending)
	t.Logf("%d requests (%d robots.txt) on %d sites, %d IPs shared by several sites", len(logs), robots, len(sites), shared)
}
