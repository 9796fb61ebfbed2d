package main

import (
	"context"
	"encoding/json"
	"net/http"
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
	status := func(c *childRun) string {
		t.Helper()
		resp, err := http.Get("http://" + c.addr + "/status.json")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var rep admin.StatusReport
		if err := json.NewDecoder(resp.Body).Decode(&rep); err != nil {
			t.Fatal(err)
		}
		for _, cs := range rep.Collections {
			if cs.Name == "c1" {
				return cs.Status
			}
		}
		return ""
	}

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
	before := len(fx.farm.Requests())

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
	if n := len(fx.farm.Requests()); n != before {
		t.Errorf("%d requests while suspended after the restart", n-before)
	}
	if _, err := cl.CollectionResume(ctx, "c1"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the crawl goes on after the resume", 60*time.Second, func() bool { return len(fx.farm.Requests()) > before })
	if got := status(r2); got == "suspended" {
		t.Errorf("status %q after the resume", got)
	}
	if err := r2.stop(t, syscall.SIGTERM); err != nil {
		t.Errorf("run 2 did not stop cleanly: %v\n%s", err, r2.log())
	}
}
