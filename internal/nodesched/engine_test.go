package nodesched

import (
	"context"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/config"
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
			if err := m.Handle(MNS, &cmt.UMURI{Collection: "c1", Entry: wireEntry(Link{URI: u}, "", 0)}, now); err != nil {
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
	t.Logf("DEPTH:2: %d URLs; %d requests (a URI reached again by a shorter path after it was fetched is fetched again)", len(got), len(rec.logs()))
	var _ = config.ParseCrawlMode
	var _ = webfarm.DefaultConfig
}
