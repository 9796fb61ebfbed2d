package main

import (
	"context"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/admin"
)

// TestCrawlSuspensionSurvivesRestart suspends a collection's crawl over
// the admin API of a `trawl run` child process, kills it with SIGKILL and
// starts it again with the same --data: the restarted process reports the
// collection suspended (status page and API), requests nothing from the
// farm, and crawls again once resumed.
func TestCrawlSuspensionSurvivesRestart(t *testing.T) {
	fx := newFarmFixture(t, 13, 4, 80)
	xml := fx.writeXML(t, "c1")
	data := filepath.Join(fx.dir, "data")
	args := []string{"run", "--config", xml, "--hosts-file", fx.hostsFile, "--data", data,
		"--listen", "127.0.0.1:0", "--progress", "off", "--log-level", "warn", "--workers", "2"}
	ctx := context.Background()
	status := func(c *childRun) string { return collectionStatus(t, c.addr, "c1").Status }

	r1 := startChildRun(t, args...)
	cl := admin.NewClient(r1.addr, nil)
	waitFor(t, "run 1 requested 20 URLs", 60*time.Second, func() bool { return len(fx.farm.Requests()) >= 20 })
	if _, err := cl.CollectionSuspend(ctx, "c1"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "run 1 suspended", 20*time.Second, func() bool { return status(r1) == "suspended" })
	if err := r1.stop(t, syscall.SIGKILL); err == nil {
		t.Fatal("run 1 survived SIGKILL")
	}

	// The farm logs a request when its answer ends: one that arrived
	// before the kill (a slow page) may be logged after it, so requests
	// are told apart by their arrival time.
	restarted := time.Now()
	requestedSince := func() []string {
		var out []string
		for _, r := range fx.farm.Requests() {
			if !r.Time.Before(restarted) {
				out = append(out, r.URL)
			}
		}
		return out
	}
	r2 := startChildRun(t, args...)
	cl = admin.NewClient(r2.addr, nil)
	if got := status(r2); got != "suspended" {
		t.Errorf("after SIGKILL and a restart the status page says %q, want suspended", got)
	}
	if _, err := cl.CollectionSuspend(ctx, "c1"); err == nil || !strings.Contains(err.Error(), "already suspended") {
		t.Errorf("CollectionSuspend after the restart: %v, want already suspended", err)
	}
	// Nothing is requested while suspended (a few seconds: the node
	// scheduler sets the collection up from its store within one).
	time.Sleep(3 * time.Second)
	if after := requestedSince(); len(after) != 0 {
		t.Errorf("%d requests while suspended after the restart: %v", len(after), after)
	}
	if _, err := cl.CollectionResume(ctx, "c1"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the crawl goes on after the resume", 60*time.Second, func() bool { return len(requestedSince()) > 0 })
	if got := status(r2); got == "suspended" {
		t.Errorf("status %q after the resume", got)
	}
	if err := r2.stop(t, syscall.SIGTERM); err != nil {
		t.Errorf("run 2 did not stop cleanly: %v\n%s", err, r2.log())
	}
}
