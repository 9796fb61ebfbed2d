package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/admin"
	"github.com/trawl/trawl/internal/stats"
)

// childRun is `trawl run` in a child process (the test binary's
// TestRunChild), so that it can be stopped with SIGTERM or killed with
// SIGKILL.
type childRun struct {
	cmd    *exec.Cmd
	addr   string
	mu     sync.Mutex
	stderr strings.Builder
	done   chan error
}

func startChildRun(t *testing.T, args ...string) *childRun {
	t.Helper()
	c := &childRun{done: make(chan error, 1)}
	c.cmd = exec.Command(os.Args[0], "-test.run=^TestRunChild$")
	c.cmd.Env = append(os.Environ(), "TRAWL_RUN_CHILD_ARGS="+strings.Join(args, "\x1f"))
	pipe, err := c.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addr := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`HTTP interface on http://([0-9.:]+)/`)
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			c.mu.Lock()
			c.stderr.WriteString(sc.Text() + "\n")
			c.mu.Unlock()
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
		_, _ = io.Copy(io.Discard, pipe)
		c.done <- c.cmd.Wait()
	}()
	t.Cleanup(func() { _ = c.cmd.Process.Kill() })
	select {
	case c.addr = <-addr:
	case err := <-c.done:
		t.Fatalf("trawl run exited before listening (%v):\n%s", err, c.log())
	case <-time.After(30 * time.Second):
		t.Fatalf("trawl run did not listen:\n%s", c.log())
	}
	return c
}

func (c *childRun) log() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stderr.String()
}

// stop sends sig and waits for the process to end; it returns the error
// of Wait.
func (c *childRun) stop(t *testing.T, sig syscall.Signal) error {
	t.Helper()
	_ = c.cmd.Process.Signal(sig)
	select {
	case err := <-c.done:
		return err
	case <-time.After(60 * time.Second):
		t.Fatalf("trawl run did not end after %v:\n%s", sig, c.log())
	}
	return nil
}

// collectionStatus reads the status page's JSON of the crawler at addr
// and returns collection name's entry (failing when it is not there).
func collectionStatus(t *testing.T, addr, name string) admin.CollectionStatus {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/status.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var rep admin.StatusReport
	if err := json.NewDecoder(resp.Body).Decode(&rep); err != nil {
		t.Fatal(err)
	}
	for _, cs := range rep.Collections {
		if cs.Name == name {
			return cs
		}
	}
	t.Fatalf("collection %s not on the status page: %+v", name, rep)
	return admin.CollectionStatus{}
}

// waitFor polls cond every 100 ms until it holds or the deadline passes.
// feedBacklog reads trawl_feed_backlog from a /metrics URL.
func feedBacklog(t *testing.T, metricsURL string) float64 {
	t.Helper()
	resp, err := http.Get(metricsURL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	m := regexp.MustCompile(`(?m)^trawl_feed_backlog (\S+)$`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("no trawl_feed_backlog in the metrics of %s:\n%s", metricsURL, b)
	}
	v, _ := strconv.ParseFloat(string(m[1]), 64)
	return v
}

func waitFor(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestAdminModesSurviveRestart suspends the feeding of a collection and
// turns its refresh-only mode on over the admin API of a `trawl run`
// child process, stops it with SIGTERM, restarts it with the same --data,
// kills that one with SIGKILL and restarts it again: each time the modes
// hold (in the statistics, in the answers of the API, and in what the
// crawler does: nothing is fed, a URI the store does not know is not
// fetched while a known one is), until they are turned off.
func TestAdminModesSurviveRestart(t *testing.T) {
	fx := newFarmFixture(t, 11, 4, 60)
	xml := fx.writeXML(t, "c1")
	data := filepath.Join(fx.dir, "data")
	args := []string{"run", "--config", xml, "--hosts-file", fx.hostsFile, "--data", data,
		"--listen", "127.0.0.1:0", "--progress", "off", "--log-level", "warn", "--workers", "4"}
	ctx := context.Background()
	requests := func(u string) int {
		n := 0
		for _, r := range fx.farm.Requests() {
			if r.URL == u {
				n++
			}
		}
		return n
	}
	status := func(c *childRun) admin.CollectionStatus { return collectionStatus(t, c.addr, "c1") }
	backlog := func(c *childRun) float64 {
		t.Helper()
		return feedBacklog(t, "http://"+c.addr+"/metrics")
	}
	stats2 := func(cl *admin.Client) *stats.CollectionFlat {
		t.Helper()
		rep, err := cl.CollectionGetStatistics2(ctx, "c1")
		if err != nil {
			t.Fatal(err)
		}
		return rep.Complete
	}

	// Run 1: feeding suspended at once, refresh-only once the crawl has
	// stored some documents (which wait in the outbox); then SIGTERM.
	r1 := startChildRun(t, args...)
	cl := admin.NewClient(r1.addr, nil)
	if _, err := cl.CollectionSuspendFeeding(ctx, "c1", ""); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "run 1 stored 30 documents", 60*time.Second, func() bool { return stats2(cl).Stored >= 30 })
	if _, err := cl.CollectionEnableRefreshOnly(ctx, "c1"); err != nil {
		t.Fatal(err)
	}
	known := fx.farm.StartURLs()[0]
	if err := r1.stop(t, syscall.SIGTERM); err != nil {
		t.Fatalf("trawl run did not stop cleanly on SIGTERM: %v\n%s", err, r1.log())
	}

	// checkModes checks that a restarted run kept both modes: statistics,
	// API answers, and the crawl itself.
	checkModes := func(c *childRun, name, fresh string) {
		t.Helper()
		cl := admin.NewClient(c.addr, nil)
		// The modes are known once the node scheduler has set up the
		// collection from its store (within a second or two).
		var cur *stats.CollectionFlat
		deadline := time.Now().Add(20 * time.Second)
		for cur = stats2(cl); (cur.Feeding != 0 || cur.CrawlMode != stats.CrawlModeUserRefresh) && time.Now().Before(deadline); cur = stats2(cl) {
			time.Sleep(100 * time.Millisecond)
		}
		if cur.Feeding != 0 || cur.CrawlMode != stats.CrawlModeUserRefresh {
			t.Errorf("%s: Feeding %v, CrawlMode %q after the restart; want 0 and %q", name, cur.Feeding, cur.CrawlMode, stats.CrawlModeUserRefresh)
		}
		if cs := status(c); cs.Feeding || !cs.RefreshOnly {
			t.Errorf("%s: status page says feeding %v, refresh-only %v", name, cs.Feeding, cs.RefreshOnly)
		}
		if _, err := cl.CollectionSuspendFeeding(ctx, "c1", ""); err == nil || !strings.Contains(err.Error(), "already suspended") {
			t.Errorf("%s: CollectionSuspendFeeding after the restart: %v, want already suspended", name, err)
		}
		// A URI the store knows is fetched again, one it does not know is
		// dropped: wait until the known one was fetched and the crawl is
		// idle, then the new one must not have been requested.
		before := requests(known)
		if _, err := cl.AddURIs(ctx, "c1", true, []string{fresh}); err != nil {
			t.Fatal(err)
		}
		if _, err := cl.CollectionRefetchURI(ctx, "c1", known, false, false, true); err != nil {
			t.Fatal(err)
		}
		waitFor(t, name+": the known URI fetched and the crawl idle", 60*time.Second, func() bool {
			return requests(known) > before && status(c).Idle
		})
		if n := requests(fresh); n != 0 {
			t.Errorf("%s: refresh-only collection fetched a URI it did not know (%d requests of %s)", name, n, fresh)
		}
		if b := backlog(c); b <= 0 {
			t.Errorf("%s: feed backlog %v: the documents of run 1 were fed while feeding is suspended", name, b)
		}
		if cur := stats2(cl); cur.PPSucceeded != 0 || cur.PPFed != 0 {
			t.Errorf("%s: fed %v documents while feeding is suspended", name, cur.PPSucceeded)
		}
	}

	// Run 2 (after SIGTERM), then SIGKILL.
	r2 := startChildRun(t, args...)
	checkModes(r2, "after SIGTERM", "http://"+fx.site0+"/?persist=1")
	if err := r2.stop(t, syscall.SIGKILL); err == nil {
		t.Fatal("run 2 survived SIGKILL")
	}

	// Run 3 (after SIGKILL): the modes hold; turned off, the backlog is
	// fed and new URIs are crawled again.
	r3 := startChildRun(t, args...)
	checkModes(r3, "after SIGKILL", "http://"+fx.site0+"/?persist=2")
	cl = admin.NewClient(r3.addr, nil)
	if _, err := cl.CollectionResumeFeeding(ctx, "c1", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.CollectionDisableRefreshOnly(ctx, "c1"); err != nil {
		t.Fatal(err)
	}
	fresh := "http://" + fx.site0 + "/?persist=3"
	if _, err := cl.AddURIs(ctx, "c1", true, []string{fresh}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the backlog fed and the new URI fetched", 60*time.Second, func() bool {
		return backlog(r3) == 0 && requests(fresh) > 0 && stats2(cl).PPSucceeded > 0
	})
	if cur := stats2(cl); cur.Feeding != 1 || cur.CrawlMode != stats.CrawlModeNormal {
		t.Errorf("after resuming: Feeding %v, CrawlMode %q", cur.Feeding, cur.CrawlMode)
	}
	if err := r3.stop(t, syscall.SIGTERM); err != nil {
		t.Fatalf("run 3: %v\n%s", err, r3.log())
	}
}
