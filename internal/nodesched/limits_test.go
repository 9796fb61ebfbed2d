package nodesched

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/trawl/trawl/internal/cmt/cmtconfig"
	"github.com/trawl/trawl/internal/config"
	"github.com/trawl/trawl/internal/stats"
	"github.com/trawl/trawl/internal/store"
	"github.com/trawl/trawl/internal/webfarm"
)

// startCrawlWith starts a node on the collections of xml, its driver's
// Config adjusted by hook (may be nil). It stops at the end of the test.
func startCrawlWith(t *testing.T, xml string, hook func(*Config)) *optCrawl {
	t.Helper()
	cfg, err := config.Parse("crawl.xml", []byte(xml), nil)
	if err != nil {
		t.Fatalf("%v\n%s", err, xml)
	}
	mns := &multiMNS{seen: map[string]bool{}}
	for _, col := range cfg.Collections {
		mns.conf.Collections = append(mns.conf.Collections, cmtconfig.CrawlConfig(col))
	}
	st, err := store.Open(t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	dc := Config{NodeID: "node1", Store: st, MNS: mns.dialer(ctx), Workers: 8}
	if hook != nil {
		hook(&dc)
	}
	d := New(dc)
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
		st.Close()
	})
	return &optCrawl{d: d, st: st, mns: mns}
}

// limitMode reads a collection's limits mode on the driver's loop.
func limitMode(t *testing.T, d *Driver, coll string) string {
	t.Helper()
	var mode string
	err := d.Exec(context.Background(), func(m *Machine, now time.Time) error {
		mode = m.LimitMode(coll)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return mode
}

// waitLimitMode polls until the collection's limits mode is want.
func waitLimitMode(t *testing.T, d *Driver, coll, want string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for limitMode(t, d, coll) != want {
		if time.Now().After(deadline) {
			t.Fatalf("limits mode %q, want %q", limitMode(t, d, coll), want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestCrawlLimitsDiskFree crawls a site while the injected free disk space
// of the data directory's file system is 10 %, under disk_free 20 and
// disk_free_slack 5: nothing is fetched (the start URI is held). At 22 %
// the collection stays held (under 20 + 5); at 30 % it resumes and the
// whole site is crawled.
func TestCrawlLimitsDiskFree(t *testing.T) {
	site := &webfarm.LangSite{Pages: 30}
	base := fmt.Sprintf("http://lang.test:%d", serveHandler(t, site))
	var free atomic.Int64
	free.Store(10)
	var dirs atomic.Value
	extra := `<section name="limits">
      <attrib name="disk_free" type="integer"> 20 </attrib>
      <attrib name="disk_free_slack" type="integer"> 5 </attrib>
    </section>`
	c := startCrawlWith(t, optXML(optCollection("lim", base+"/", "lang.test", extra)), func(dc *Config) {
		dc.LimitCheckInterval = 20 * time.Millisecond
		dc.DiskSpace = func(dir string) (uint64, uint64, error) {
			dirs.Store(dir)
			return uint64(free.Load()) << 30, 100 << 30, nil
		}
	})
	waitLimitMode(t, c.d, "lim", stats.CrawlModeDiskFree)
	waitIdle(t, c.d, 30*time.Second)
	if p := site.Paths(); len(p) != 0 {
		t.Errorf("requests while the disk is full: %v", p)
	}
	if n := c.d.Stats()["lim"]["limit_held"]; n < 1 {
		t.Errorf("limit_held = %d, want the start URI held", n)
	}
	if d, _ := dirs.Load().(string); d != c.st.Dir() {
		t.Errorf("free space read for %q, want the data directory %q", d, c.st.Dir())
	}

	free.Store(22)
	// Let the driver read the disk again several times: the mode holds.
	for i := 0; i < 5; i++ {
		if err := c.d.Exec(context.Background(), func(m *Machine, now time.Time) error {
			m.lim.next = time.Time{}
			return m.checkLimits(now, true)
		}); err != nil {
			t.Fatal(err)
		}
	}
	if mode := limitMode(t, c.d, "lim"); mode != stats.CrawlModeDiskFree {
		t.Fatalf("at 22 %% free the mode is %q, want it held within the slack", mode)
	}

	free.Store(30)
	waitLimitMode(t, c.d, "lim", "")
	waitIdle(t, c.d, 60*time.Second)
	want, _ := site.ExpectFocused(nil, 0)
	if d := cmp.Diff(want, withoutRobots(site.Paths())); d != "" {
		t.Errorf("fetched after resuming (-want +got):\n%s", d)
	}
}

// TestCrawlLimitsMaxDoc crawls a 40-page site under limits max_doc 10 and
// max_doc_slack 4, one fetch at a time: the crawl stops storing at 10
// documents and fetches no more new pages. Deleting 5 documents (below
// 10 - 4) resumes it, and it stops again at 10.
func TestCrawlLimitsMaxDoc(t *testing.T) {
	site := &webfarm.LangSite{Pages: 40}
	base := fmt.Sprintf("http://lang.test:%d", serveHandler(t, site))
	extra := `<attrib name="max_pending" type="integer"> 1 </attrib>
    <section name="limits">
      <attrib name="max_doc" type="integer"> 10 </attrib>
      <attrib name="max_doc_slack" type="integer"> 4 </attrib>
    </section>`
	c := startCrawlWith(t, optXML(optCollection("lim", base+"/", "lang.test", extra)), func(dc *Config) {
		dc.LimitCheckInterval = 20 * time.Millisecond
	})
	waitIdle(t, c.d, 60*time.Second)
	docs := func() int {
		n, err := c.st.CountDocuments("lim")
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := docs(); n != 10 {
		t.Errorf("%d documents stored, want max_doc 10", n)
	}
	if mode := limitMode(t, c.d, "lim"); mode != stats.CrawlModeMaxDoc {
		t.Errorf("mode %q, want %q", mode, stats.CrawlModeMaxDoc)
	}
	first := withoutRobots(site.Paths())
	if len(first) != 10 {
		t.Errorf("%d pages requested, want 10: %v", len(first), first)
	}

	// Delete 5 stored URIs: 5 documents left, under 10 - 4.
	err := c.d.Exec(context.Background(), func(m *Machine, now time.Time) error {
		var uris []string
		var siteName string
		err := m.st.URIs("lim", "", func(r *store.URIRecord) error {
			if r.Status == store.StatusFetched && len(uris) < 5 {
				uris, siteName = append(uris, r.URI), r.Site
			}
			return nil
		})
		if err != nil {
			return err
		}
		return m.deleteList(m.colls["lim"], siteName, uris, false)
	})
	if err != nil {
		t.Fatal(err)
	}
	// The mode leaves and comes back while the crawl runs: count it.
	deadline := time.Now().Add(60 * time.Second)
	for c.d.Stats()["lim"]["limit_entered_max_doc"] < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("the collection did not resume and fill up again: %v", c.d.Stats()["lim"])
		}
		time.Sleep(10 * time.Millisecond)
	}
	waitIdle(t, c.d, 60*time.Second)
	if mode := limitMode(t, c.d, "lim"); mode != stats.CrawlModeMaxDoc {
		t.Errorf("mode %q after filling up again, want %q", mode, stats.CrawlModeMaxDoc)
	}
	if n := docs(); n != 10 {
		t.Errorf("after resuming: %d documents stored, want 10 again", n)
	}
	second := withoutRobots(site.Paths())
	if len(second) != 15 {
		t.Errorf("after resuming: %d pages requested, want 15 (5 more): %v", len(second), second)
	}
	if n := c.d.Stats()["lim"]["limit_released"]; n < 1 {
		t.Errorf("limit_released = %d", n)
	}
}
