package nodesched

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/crawllog"
	"github.com/trawl/trawl/internal/webfarm"
)

// schedLine is a parsed scheduler log line.
type schedLine struct {
	kind, site, uri, cause    string
	cycle                     int64
	minor, pos                int
	known, limit, taken       int
	rank, score               float64
	stillQueued, hasRankScore bool
}

// parseSchedLine reads a scheduler log line (crawllog.go, logAdaptive).
func parseSchedLine(t *testing.T, line string) schedLine {
	t.Helper()
	f := strings.Fields(line)
	if len(f) < 4 {
		t.Fatalf("short scheduler line %q", line)
	}
	if _, err := time.Parse(crawllog.TimeLayout, f[0]); err != nil {
		t.Errorf("scheduler line without a time: %q", line)
	}
	l := schedLine{kind: f[1], site: f[2]}
	rest := f[3:]
	switch l.kind {
	case "site":
	case "uri":
		l.uri, rest = rest[0], rest[1:]
	default:
		t.Fatalf("scheduler line of kind %q: %q", l.kind, line)
	}
	l.cause, rest = rest[0], rest[1:]
	for _, kv := range rest {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			if kv != "still-queued" {
				t.Errorf("unknown field %q in %q", kv, line)
			}
			l.stillQueued = true
			continue
		}
		n, _ := strconv.Atoi(v)
		switch k {
		case "cycle":
			l.cycle = int64(n)
		case "minor":
			l.minor = n
		case "pos":
			l.pos = n
		case "known":
			l.known = n
		case "limit":
			l.limit = n
		case "taken":
			l.taken = n
		case "rank", "score":
			x, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Errorf("bad %s in %q", k, line)
			}
			if k == "rank" {
				l.rank = x
			} else {
				l.score = x
			}
			l.hasRankScore = true
		case "sub":
		default:
			t.Errorf("unknown field %q in %q", kv, line)
		}
	}
	return l
}

// schedRound is the lines of one rescheduling (one cycle or minor cycle;
// the change site is the only site).
type schedRound struct {
	cycle int64
	minor int
	site  *schedLine
	uris  []schedLine
}

// schedRounds groups scheduler log lines by (cycle, minor) in order.
func schedRounds(t *testing.T, lines []string) []schedRound {
	t.Helper()
	var out []schedRound
	for _, line := range lines {
		l := parseSchedLine(t, line)
		if len(out) == 0 || out[len(out)-1].cycle != l.cycle || out[len(out)-1].minor != l.minor {
			out = append(out, schedRound{cycle: l.cycle, minor: l.minor})
		}
		r := &out[len(out)-1]
		if l.kind == "site" {
			if r.site != nil {
				t.Errorf("two site lines in cycle %d minor %d", l.cycle, l.minor)
			}
			r.site = &l
		} else {
			r.uris = append(r.uris, l)
		}
	}
	return out
}

// complete reports whether every round has its site line and as many uri
// lines as the site line says it took.
func complete(rounds []schedRound, n int) bool {
	if len(rounds) != n {
		return false
	}
	for _, r := range rounds {
		if r.site == nil || len(r.uris) != r.site.taken {
			return false
		}
	}
	return true
}

// pathOf is the path of an absolute URI.
func pathOf(t *testing.T, uri string) string {
	t.Helper()
	u, err := urlParse(uri)
	if err != nil {
		t.Fatalf("logged URI %q: %v", uri, err)
	}
	return u.Path
}

// checkRounds checks each round of the scheduler log against the requests
// the change site got in the same round (windows[i]): 42 known URIs (40
// pages, the start page, the sitemap) and 12 taken (coverage_min 12,
// coverage_max_pct 10), best ranked first, rank = score times an age of at
// least one round, and the URIs taken are the pages requested in that round
// (the start page and the sitemap, which a refresh cycle queues anyway, and
// robots.txt aside).
func checkRounds(t *testing.T, rounds []schedRound, windows [][]webfarm.SiteRequest, cause string) {
	t.Helper()
	if len(rounds) != len(windows) {
		t.Fatalf("%d rounds in the scheduler log, %d run", len(rounds), len(windows))
	}
	aside := map[string]bool{"/": true, "/sitemap.xml": true, "/robots.txt": true}
	for i, r := range rounds {
		if r.site == nil {
			t.Fatalf("round %d (cycle %d minor %d) has no site line", i, r.cycle, r.minor)
		}
		s := r.site
		if s.cause != cause || s.known != 42 || s.limit != 12 || s.taken != 12 {
			t.Errorf("round %d: site line %+v, want cause %s, known 42, limit 12, taken 12", i, *s, cause)
		}
		var logged []string
		for j, u := range r.uris {
			if u.site != s.site || u.cause != cause || u.pos != j+1 || !u.hasRankScore || !strings.Contains(u.uri, "://"+u.site+"/") {
				t.Errorf("round %d: uri line %+v (site line %+v)", i, u, *s)
			}
			if j > 0 && u.rank > r.uris[j-1].rank {
				t.Errorf("round %d: %s ranks %v after %s at %v: not best first", i, u.uri, u.rank, r.uris[j-1].uri, r.uris[j-1].rank)
			}
			if i == 0 && j > 0 && u.score > r.uris[j-1].score {
				// The first round: every known URI is one round old.
				t.Errorf("round 0: %s scores %v after %s at %v: not best first", u.uri, u.score, r.uris[j-1].uri, r.uris[j-1].score)
			}
			if u.score > 0 {
				age := u.rank / u.score
				if age < 1-1e-6 || math.Abs(age-math.Round(age)) > 1e-3 {
					t.Errorf("round %d: %s rank %v is not score %v times a whole age", i, u.uri, u.rank, u.score)
				}
			}
			if p := pathOf(t, u.uri); !aside[p] {
				logged = append(logged, p)
			}
		}
		var requested []string
		for _, rq := range windows[i] {
			if !aside[rq.Path] {
				requested = append(requested, rq.Path)
			}
		}
		if len(setOf(requested)) != len(requested) {
			t.Errorf("round %d: a page requested twice: %v", i, requested)
		}
		if d := cmp.Diff(setOf(requested), setOf(logged)); d != "" {
			t.Errorf("round %d (cycle %d minor %d): pages requested vs rescheduled in the log (-requested +logged):\n%s", i, r.cycle, r.minor, d)
		}
	}
	for i := 1; i < len(rounds); i++ {
		if rounds[i].site != nil && rounds[i-1].site != nil && rounds[i].site.site != rounds[i-1].site.site {
			t.Errorf("rounds of different sites: %q, %q", rounds[i-1].site.site, rounds[i].site.site)
		}
	}
}

// pollSchedLog polls read until it returns n complete rounds (or the
// deadline passes) and returns them.
func pollSchedLog(t *testing.T, n int, read func() []string) []schedRound {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		lines := read()
		rounds := schedRounds(t, lines)
		if complete(rounds, n) || time.Now().After(deadline) {
			return rounds
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// umSchedLines returns the scheduler lines the multinode scheduler got.
func umSchedLines(c *optCrawl) []string {
	c.mns.mu.Lock()
	defer c.mns.mu.Unlock()
	var out []string
	for _, x := range c.mns.logs {
		if x.File == cmt.LogSchedule {
			out = append(out, x.Text)
		}
	}
	return out
}

// TestCrawlSchedulerLog crawls the change-frequency site in refresh_mode
// adaptive with the scheduler log on and checks every rescheduling the log
// reports against the requests of the same round: refresh cycles written
// on the node (umlogs no), minor cycles (refresh_count 4, an injected
// clock) sent to the multinode scheduler in CMD_UM_LOG (umlogs yes), and
// "none", which writes and sends nothing.
func TestCrawlSchedulerLog(t *testing.T) {
	schedXML := func(v string) string {
		return `<section name="log"><attrib name="scheduler" type="string"> ` + v + ` </attrib></section>`
	}
	t.Run("refresh cycles", func(t *testing.T) {
		site := &webfarm.ChangeSite{Pages: 40}
		port := serveHandler(t, site)
		base := fmt.Sprintf("http://change.test:%d", port)
		logDir := t.TempDir()
		extra := adaptiveXML(10000, 1) + `<attrib name="umlogs" type="boolean"> no </attrib>` + schedXML("text")
		c := startCrawlWith(t, optXML(optCollection("ad", base+"/", "change.test", extra)), func(dc *Config) { dc.LogDir = logDir })
		waitIdle(t, c.d, 60*time.Second)
		const cycles = 3
		var windows [][]webfarm.SiteRequest
		for cycle := 1; cycle <= cycles; cycle++ {
			from := len(site.Requests())
			site.SetCycle(cycle)
			c.mns.send(t, &cmt.AdmConfRefresh{Collection: "ad", Flags: cmt.RefreshCollection})
			deadline := time.Now().Add(30 * time.Second)
			for c.d.Stats()["ad"]["refresh_cycles"] < int64(cycle) && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			waitIdle(t, c.d, 60*time.Second)
			windows = append(windows, site.Requests()[from:])
		}
		path := filepath.Join(logDir, "ad", "schedule.log")
		rounds := pollSchedLog(t, cycles, func() []string {
			if _, err := os.Stat(path); err != nil {
				return nil
			}
			return logLines(t, path)
		})
		checkRounds(t, rounds, windows, "refresh")
		if lines := logLines(t, path); len(lines) > 2 {
			t.Logf("schedule.log starts:\n%s", strings.Join(lines[:3], "\n"))
		}
		for i, r := range rounds {
			if r.minor != 0 || (i > 0 && r.cycle != rounds[i-1].cycle+1) {
				t.Errorf("round %d: cycle %d minor %d, want consecutive cycles, minor 0", i, r.cycle, r.minor)
			}
		}
		if got := umSchedLines(c); len(got) != 0 {
			t.Errorf("umlogs no: %d scheduler lines sent to the multinode scheduler", len(got))
		}
	})
	t.Run("minor cycles to the multinode scheduler", func(t *testing.T) {
		site := &webfarm.ChangeSite{Pages: 40}
		port := serveHandler(t, site)
		base := fmt.Sprintf("http://change.test:%d", port)
		logDir := t.TempDir()
		clock := &shiftClock{}
		extra := adaptiveXML(40, 4) + schedXML("text")
		c := startCrawlWith(t, optXML(optCollection("ad", base+"/", "change.test", extra)), func(dc *Config) { dc.LogDir, dc.Now = logDir, clock.now })
		waitIdle(t, c.d, 60*time.Second)
		var windows [][]webfarm.SiteRequest
		for m := 1; m <= 3; m++ {
			from := len(site.Requests())
			clock.mu.Lock()
			clock.off += 10*time.Minute + time.Second
			clock.mu.Unlock()
			deadline := time.Now().Add(30 * time.Second)
			for c.d.Stats()["ad"]["adaptive_rescheduled"] < int64(12*m) && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			waitIdle(t, c.d, 60*time.Second)
			windows = append(windows, site.Requests()[from:])
		}
		rounds := pollSchedLog(t, 3, func() []string { return umSchedLines(c) })
		checkRounds(t, rounds, windows, "minor")
		for i, r := range rounds {
			if r.minor != i+1 || r.cycle != rounds[0].cycle {
				t.Errorf("round %d: cycle %d minor %d, want minor %d of one cycle", i, r.cycle, r.minor, i+1)
			}
			for _, u := range r.uris {
				if u.stillQueued {
					t.Errorf("round %d: %s still queued although the crawl was idle", i, u.uri)
				}
			}
		}
		if _, err := os.Stat(filepath.Join(logDir, "ad", "schedule.log")); !os.IsNotExist(err) {
			t.Errorf("umlogs yes: schedule.log written on the node (%v)", err)
		}
	})
	t.Run("none", func(t *testing.T) {
		site := &webfarm.ChangeSite{Pages: 40}
		port := serveHandler(t, site)
		base := fmt.Sprintf("http://change.test:%d", port)
		logDir := t.TempDir()
		extra := adaptiveXML(10000, 1) + `<attrib name="umlogs" type="boolean"> no </attrib>` + schedXML("none")
		c := startCrawlWith(t, optXML(optCollection("ad", base+"/", "change.test", extra)), func(dc *Config) { dc.LogDir = logDir })
		waitIdle(t, c.d, 60*time.Second)
		from := len(site.Requests())
		c.mns.send(t, &cmt.AdmConfRefresh{Collection: "ad", Flags: cmt.RefreshCollection})
		deadline := time.Now().Add(30 * time.Second)
		for c.d.Stats()["ad"]["refresh_cycles"] < 1 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		waitIdle(t, c.d, 60*time.Second)
		if n := c.d.Stats()["ad"]["refresh_cycles"]; n != 1 || len(site.Requests()) == from {
			t.Fatalf("refresh cycle not run (refresh_cycles %d, %d requests in it)", n, len(site.Requests())-from)
		}
		// The fetch log is on by default: once it has the cycle's lines,
		// the writer has seen everything of the refresh.
		fetchLog := filepath.Join(logDir, "ad", "fetch.log")
		docs := 0
		for _, rq := range site.Requests() {
			if rq.Path != "/robots.txt" {
				docs++
			}
		}
		deadline = time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			if _, err := os.Stat(fetchLog); err == nil && len(logLines(t, fetchLog)) >= docs {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if _, err := os.Stat(filepath.Join(logDir, "ad", "schedule.log")); !os.IsNotExist(err) {
			t.Errorf("scheduler none: schedule.log exists (%v)", err)
		}
		if got := umSchedLines(c); len(got) != 0 {
			t.Errorf("scheduler none: %d scheduler lines sent", len(got))
		}
	})
}
