package nodesched

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/trawl/trawl/internal/cmt/cmtconfig"
	"github.com/trawl/trawl/internal/config"
	"github.com/trawl/trawl/internal/diskspace"
	"github.com/trawl/trawl/internal/diskspace/disktest"
	"github.com/trawl/trawl/internal/store"
	"github.com/trawl/trawl/internal/testenv"
	"github.com/trawl/trawl/internal/webfarm"
)

// TestCrawlPausesOnFullDisk crawls a 60-page site with the crawl store on a
// 64 MiB tmpfs. After ten pages the site holds its answers while the test
// fills the file system to 2 MiB free (under the 8 MiB low-water mark): the
// node scheduler pauses (one log line, DiskStatus), the fetches in flight
// finish and are stored, and no fetch starts while the disk is full.
// Removing the filler resumes the crawl by itself (one log line): every
// page is fetched once, and the store, reopened, holds every document.
func TestCrawlPausesOnFullDisk(t *testing.T) {
	fs := disktest.Mount(t, 64<<20)
	site := &webfarm.LangSite{Pages: 60}
	release := make(chan struct{})
	var pages atomic.Int64
	gate := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/robots.txt" && pages.Add(1) > 10 {
			<-release
		}
		site.ServeHTTP(w, r)
	})
	base := fmt.Sprintf("http://lang.test:%d", serveHandler(t, gate))
	cfg, err := config.Parse("crawl.xml", []byte(optXML(optCollection("full", base+"/", "lang.test", ""))), nil)
	if err != nil {
		t.Fatal(err)
	}
	mns := &multiMNS{seen: map[string]bool{}}
	mns.conf.Collections = append(mns.conf.Collections, cmtconfig.CrawlConfig(cfg.Collections[0]))
	st, err := store.Open(fs+"/store", store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var logs testenv.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	guard := diskspace.NewGuard(diskspace.Config{Dir: fs, Low: 8 << 20, High: 16 << 20,
		Interval: 20 * time.Millisecond, Logger: log, Role: "nodesched"})
	ctx, cancel := context.WithCancel(context.Background())
	d := New(Config{NodeID: "node1", Store: st, MNS: mns.dialer(ctx), Workers: 4, Disk: guard, Logger: log})
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run: %v", err)
			}
			st.Close()
		}
	}
	defer stop()
	var once sync.Once
	open := func() { once.Do(func() { close(release) }) }
	defer open()

	waitFor(t, "ten pages fetched", func() bool { return pages.Load() > 10 })
	filler := disktest.Fill(t, fs, 2<<20)
	waitFor(t, "the pause", func() bool { return d.DiskStatus().Paused })
	open()
	waitFor(t, "the fetches in flight to finish", func() bool {
		s := d.Stats()["full"]
		return s["in_flight"] == 0 && s["fetched"] > 0
	})
	held := len(site.Paths())
	// The guard reads every 20 ms: ten reads later, still nothing new.
	for i := 0; i < 10; i++ {
		time.Sleep(guard.Interval())
		if n := len(site.Paths()); n != held {
			t.Fatalf("%d requests while the disk is full (%d when it paused)", n, held)
		}
	}
	if s := d.Stats()["full"]; s["queued"] == 0 {
		t.Errorf("nothing queued while paused: %v", s)
	}
	if !strings.Contains(logs.String(), "nodesched: disk full: paused") {
		t.Errorf("no pause line in the log:\n%s", logs.String())
	}

	filler.Remove(t)
	waitFor(t, "the resume", func() bool { return !d.DiskStatus().Paused })
	waitIdle(t, d, 60*time.Second)
	want, _ := site.ExpectFocused(nil, 0)
	if diff := cmp.Diff(want, withoutRobots(site.Paths())); diff != "" {
		t.Errorf("fetched (-want +got):\n%s", diff)
	}
	if n := strings.Count(logs.String(), "disk space back: resumed"); n != 1 {
		t.Errorf("%d resume lines, want 1:\n%s", n, logs.String())
	}
	if ds := d.DiskStatus(); ds.Pauses != 1 || !ds.Known {
		t.Errorf("disk status %+v, want one pause", ds)
	}
	stop()
	st2, err := store.Open(fs+"/store", store.Options{})
	if err != nil {
		t.Fatalf("reopening the store: %v", err)
	}
	defer st2.Close()
	if n, err := st2.CountDocuments("full"); err != nil || n != len(want) {
		t.Errorf("reopened store: %d documents (%v), want %d", n, err, len(want))
	}
}

// waitFor polls cond until it holds, failing the test after a minute.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
