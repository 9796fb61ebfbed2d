package nodesched

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/webfarm"
)

// TestSubCollectionRefresh crawls a farm of three hosts whose collection
// keeps the default refresh (1500 minutes) and has two subcollections
// scoped by include_domains: "fast" (host 0) with its own refresh of 0.02
// minutes (1.2 s) and refresh_mode scratch, and "manual" (host 1) without
// one. Host 0 is crawled again in rounds of its own while hosts 1 and 2
// are not; once the farm's pages change (farm cycle 1) only host 0's are
// fetched again and found modified; an operator's refetch of "manual"
// (CMD_ADM_CONF_REFRESH with the subcollection's name) fetches host 1
// again, and host 2 stays untouched throughout. The collection's own
// refresh cycle never starts.
func TestSubCollectionRefresh(t *testing.T) {
	farm := startFarm(t, 3, 20)
	hosts := farm.Hosts()
	name := func(i int) string { return hosts[i].Name }
	home := func(i int) string { return fmt.Sprintf("http://%s:%d/", name(i), farm.Port()) }
	sub := func(n string, host int, body string) string {
		return fmt.Sprintf(`        <SubDomain name="%s">
            <section name="include_domains"><attrib name="exact" type="list-string"><member> %s </member></attrib></section>
%s        </SubDomain>
`, n, name(host), body)
	}
	extra := sub("fast", 0, `            <attrib name="refresh" type="real"> 0.02 </attrib>
            <attrib name="refresh_mode" type="string"> scratch </attrib>
`) + sub("manual", 1, "")
	r := runCrawlWith(t, farm, t.TempDir(), farm.DefaultCrawl(), webfarm.XMLOptions{Collection: "farm", FetchTimeout: 8, Extra: extra})

	counts := func() (perHost [3]map[string]int) {
		for i := range perHost {
			perHost[i] = map[string]int{}
		}
		for _, q := range farm.Requests() {
			if q.HostIndex >= 0 && q.HostIndex < 3 {
				perHost[q.HostIndex][q.URL]++
			}
		}
		return perHost
	}
	waitFor := func(what string, limit time.Duration, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(limit)
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s; counters %v", what, r.d.Stats()["farm"])
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	rounds := func() int64 { return r.d.Stats()["farm"]["subrefresh_rounds"] }

	// Host 0's home page is fetched in the first crawl and in at least two
	// rounds of "fast".
	waitFor("two rounds of fast", 90*time.Second, func() bool { return rounds() >= 2 && counts()[0][home(0)] >= 3 })
	waitIdle(t, r.d, 60*time.Second)
	c := counts()
	if len(c[0]) == 0 || len(c[1]) == 0 || len(c[2]) == 0 {
		t.Fatalf("a host was not crawled: %d %d %d URLs", len(c[0]), len(c[1]), len(c[2]))
	}
	again := 0
	for u, n := range c[0] {
		if n > 1 && !strings.HasSuffix(u, "/robots.txt") {
			again++
		}
	}
	if again == 0 {
		t.Errorf("no page of host 0 fetched again: %v", c[0])
	}
	for _, h := range []int{1, 2} {
		for u, n := range c[h] {
			if n != 1 {
				t.Errorf("host %d: %s requested %d times; its pages are not in a subcollection with a refresh", h, u, n)
			}
		}
	}

	// The farm's pages change: only host 0's are fetched again.
	farm.SetCycle(1)
	before := r.d.Stats()["farm"]["modified"]
	n := rounds()
	waitFor("a round after the change", 60*time.Second, func() bool { return rounds() >= n+2 })
	waitIdle(t, r.d, 60*time.Second)
	changed := requestedURLs(farm, 1)
	if len(changed) == 0 {
		t.Fatal("nothing fetched after the farm changed")
	}
	for _, u := range changed {
		if !strings.HasPrefix(u, fmt.Sprintf("http://%s:", name(0))) {
			t.Errorf("%s fetched after the change; only host 0 refreshes", u)
		}
	}
	if after := r.d.Stats()["farm"]["modified"]; after <= before {
		t.Errorf("no modified documents found by the rounds: %d -> %d", before, after)
	}

	// An operator's refetch of "manual" fetches host 1 again.
	r.mns.send(context.Background(), &cmt.AdmConfRefresh{Collection: "farm", SubCollection: "manual", Flags: cmt.RefreshSubCollection})
	waitFor("host 1 fetched again", 60*time.Second, func() bool { return counts()[1][home(1)] >= 2 })
	waitIdle(t, r.d, 60*time.Second)
	for u, n := range counts()[2] {
		if n != 1 {
			t.Errorf("host 2: %s requested %d times", u, n)
		}
	}
	if cyc := r.d.Stats()["farm"]["refresh_cycles"]; cyc != 0 {
		t.Errorf("%d collection refresh cycles started; only subcollection rounds were due", cyc)
	}
	t.Logf("rounds %d; host 0 URLs fetched again %d of %d; modified %d", rounds(), again, len(c[0]), r.d.Stats()["farm"]["modified"])
}
