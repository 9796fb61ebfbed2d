package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/admin"
	"github.com/trawl/trawl/internal/webfarm"
)

// pathologicalRule is an exclude_uris regexp with nested quantifiers: on a
// URI made of its class and not ending in a capital letter, .NET backtracking tries
// every split of the URI (2^length) until the match timeout.
const pathologicalRule = `^([a-z0-9:/.]+)+[A-Z]$`

// TestPathologicalRuleIsolated crawls the farm in two collections at once:
// "slow" carries a pathological exclude_uris rule and is sent hundreds of
// URIs that make it time out (100 ms each), "fast" has the farm's plain
// rules. The fast collection's crawl completes while the slow one is still
// screening (its URIs are screened off the node scheduler's event loop,
// one goroutine per collection); the slow one's timed-out screenings count
// as excluded and show on the status page and in /metrics.
func TestPathologicalRuleIsolated(t *testing.T) {
	fx := newFarmFixture(t, 7, 4, 25)
	fast := fx.writeXML(t, "fast")
	crawl := fx.farm.DefaultCrawl()
	crawl.ExcludeURIs.Regexp = append(crawl.ExcludeURIs.Regexp, pathologicalRule)
	var x bytes.Buffer
	if err := webfarm.WriteCrawlXML(&x, crawl, webfarm.XMLOptions{Collection: "slow", FetchTimeout: 10}); err != nil {
		t.Fatal(err)
	}
	slow := filepath.Join(fx.dir, "slow.xml")
	if err := os.WriteFile(slow, x.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	want, err := fx.farm.Expect(fx.farm.DefaultCrawl())
	if err != nil {
		t.Fatal(err)
	}
	r := startChildRun(t, "run", "--config", fast, "--config", slow, "--hosts-file", fx.hostsFile,
		"--data", filepath.Join(fx.dir, "data"), "--listen", "127.0.0.1:0", "--progress", "off")
	ctx := context.Background()
	cl := admin.NewClient(r.addr, nil)
	// 300 URIs of 60 characters of the rule's class: 30 s of screening.
	const n = 300
	var uris []string
	for i := range n {
		uris = append(uris, fmt.Sprintf("http://%s/%s%03d", fx.site0, strings.Repeat("a", 40), i))
	}
	start := time.Now()
	if _, err := cl.AddURIs(ctx, "slow", false, uris); err != nil {
		t.Fatal(err)
	}
	var last admin.CollectionStatus
	deadline := time.Now().Add(3 * time.Minute)
	stable := 0
	for {
		cs := collectionStatus(t, r.addr, "fast")
		if cs.Idle && cs.Queued == 0 && cs.InFlight == 0 && cs.Downloaded >= int64(len(want))/2 && cs.Downloaded == last.Downloaded {
			stable++
		} else {
			stable = 0
		}
		last = cs
		if stable >= 10 { // idle for a second
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the fast collection did not complete: %+v (want %d pages)\n%s", last, len(want), r.log())
		}
		time.Sleep(100 * time.Millisecond)
	}
	fastDone := time.Since(start)
	slowAt := collectionStatus(t, r.addr, "slow").ScreenTimeouts
	t.Logf("fast collection: %d pages (farm: %d expected URLs) in %v; the slow one had %d screening timeouts by then", last.Downloaded, len(want), fastDone, slowAt)
	if slowAt >= n {
		t.Errorf("the slow collection had screened all %d URIs (%d timeouts) before the fast crawl completed: its screening delays the others", n, slowAt)
	}
	waitFor(t, "the slow collection's screening", 3*time.Minute, func() bool {
		cs := collectionStatus(t, r.addr, "slow")
		return cs.ScreenTimeouts >= n && cs.Idle
	})
	if got := metricValue(t, "http://"+r.addr+"/metrics", `trawl_screen_timeouts_total{collection="slow"}`); got < n {
		t.Errorf("trawl_screen_timeouts_total for slow: %v, want >= %d", got, n)
	}
	if got := collectionStatus(t, r.addr, "fast").ScreenTimeouts; got != 0 {
		t.Errorf("fast collection: %d screening timeouts", got)
	}
}

// metricValue reads one sample from a /metrics URL (-1 when absent).
func metricValue(t *testing.T, url, series string) float64 {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindSubmatch(b)
	if m == nil {
		return -1
	}
	v, _ := strconv.ParseFloat(string(m[1]), 64)
	return v
}
