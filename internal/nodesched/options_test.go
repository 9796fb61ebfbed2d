package nodesched

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/nodesched/crawlpipe"
	"github.com/trawl/trawl/internal/store"
	"github.com/trawl/trawl/internal/webfarm"
)

// multiMNS is a multinode scheduler for the crawl-option tests: every host
// name resolves to 127.0.0.1, every crawl IP is granted, every site of every
// collection is routed to node1, and each collection of conf is sent in a
// CMD_ADM_CONF_ADD of its own.
type multiMNS struct {
	conf cmt.CrawlConfig
	mu   sync.Mutex
	seen map[string]bool
	last *cmt.Conn
	logs []*cmt.UMLog // CMD_UM_LOG received
}

func (f *multiMNS) dialer(ctx context.Context) DialFunc {
	return func(context.Context) (*cmt.Conn, error) {
		a, b := cmt.Pipe(cmt.ConnConfig{Name: "node->mns", SendQueue: 1 << 12, RecvQueue: 1 << 12}, cmt.ConnConfig{Name: "mns->node", SendQueue: 1 << 12, RecvQueue: 1 << 12})
		go f.serve(ctx, b)
		return a, nil
	}
}

func (f *multiMNS) serve(ctx context.Context, c *cmt.Conn) {
	go func() { _ = c.Run(ctx) }()
	f.mu.Lock()
	f.last = c
	f.mu.Unlock()
	send := func(m cmt.Message) { _ = c.Send(ctx, m, cmt.DefaultPriority(m.Code())) }
	for fr := range c.Incoming() {
		switch x := fr.Message.(type) {
		case *cmt.UMInit:
			for _, col := range f.conf.Collections {
				send(&cmt.AdmConfAdd{Collection: col.Name, Config: cmt.CrawlConfig{Collections: []cmt.Collection{col}}})
			}
		case *cmt.UMKeepalive:
			send(&cmt.UMKeepaliveAck{})
		case *cmt.UMDNSRequest:
			send(&cmt.UMDNSReply{Host: x.Site, Time: time.Now().Unix(), TTL: 86400, Addrs: []cmt.AddrInfo{{Family: 2, SockType: 1, IP: "127.0.0.1"}}})
		case *cmt.UMStartCrawlIP:
			send(&cmt.UMStartCrawlIPReply{Collection: x.Collection, IP: x.IP, Site: x.Site, Allowed: true})
		case *cmt.UMURI:
			key := x.Collection + "\x00" + strings.ToLower(x.Entry.URI.Host)
			f.mu.Lock()
			first := !f.seen[key]
			f.seen[key] = true
			f.mu.Unlock()
			if first {
				host := strings.ToLower(x.Entry.URI.Host)
				send(&cmt.UMAddRoute{Collection: x.Collection, NodeID: "node1", RouteAttr: host, Site: host, TTL: 86400})
			}
			send(&cmt.UMURI{Collection: x.Collection, Entry: x.Entry})
		case *cmt.UMLog:
			f.mu.Lock()
			f.logs = append(f.logs, x)
			f.mu.Unlock()
		}
	}
}

func (f *multiMNS) send(t *testing.T, m cmt.Message) {
	f.mu.Lock()
	c := f.last
	f.mu.Unlock()
	if err := c.Send(context.Background(), m, cmt.DefaultPriority(m.Code())); err != nil {
		t.Fatal(err)
	}
}

// optCrawl is a node scheduler crawling the collections of one
// configuration.
type optCrawl struct {
	d   *Driver
	st  *store.Store
	mns *multiMNS
}

// startOptCrawl starts a node on the collections of xml, with clock now
// (nil: real time) and request recorder rec (may be nil). It stops at the
// end of the test.
func startOptCrawl(t *testing.T, xml string, now func() time.Time, rec func(crawlpipe.RequestLog)) *optCrawl {
	t.Helper()
	return startCrawlWith(t, xml, func(c *Config) { c.Now, c.Record = now, rec })
}

// optCollection is one DomainSpecification: start URIs, a fast delay, the
// include_domains rule (suffix) and the extra XML inside.
func optCollection(name, start, domainSuffix, extra string) string {
	starts := ""
	if start != "" {
		starts = fmt.Sprintf(`<attrib name="start_uris" type="list-string"><member> %s </member></attrib>`, start)
	}
	return fmt.Sprintf(`  <DomainSpecification name="%s">
    %s
    <attrib name="delay" type="real"> 0.01 </attrib>
    <attrib name="fetch_timeout" type="integer"> 10 </attrib>
    <attrib name="headers" type="list-string"><member> User-Agent: trawl-%s </member></attrib>
    <section name="include_domains"><attrib name="suffix" type="list-string"><member> %s </member></attrib></section>
%s
  </DomainSpecification>
`, name, starts, name, domainSuffix, extra)
}

func optXML(collections ...string) string {
	return "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<CrawlerConfig>\n" + strings.Join(collections, "") + "</CrawlerConfig>\n"
}

// serveHandler serves h on 127.0.0.1 and returns the port.
func serveHandler(t *testing.T, h http.Handler) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().(*net.TCPAddr).Port
}

// storedBy returns the paths of host's URIs the store holds for collection
// with status st.
func storedBy(t *testing.T, s *store.Store, collection string, status store.Status) []string {
	t.Helper()
	var out []string
	err := s.URIs(collection, "", func(r *store.URIRecord) error {
		if r.Status == status {
			u, err := urlParse(r.URI)
			if err != nil {
				return err
			}
			out = append(out, u.Path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

func withoutRobots(ps []string) []string {
	var out []string
	for _, p := range ps {
		if p != "/robots.txt" {
			out = append(out, p)
		}
	}
	return out
}

// TestCrawlExtractLinksFromDupes crawls exact duplicates whose relative
// links differ by directory: without extract_links_from_dupes the page
// linked only from the duplicate copy is never fetched.
func TestCrawlExtractLinksFromDupes(t *testing.T) {
	for _, yes := range []bool{false, true} {
		t.Run(fmt.Sprintf("extract_links_from_dupes=%v", yes), func(t *testing.T) {
			site := &webfarm.DupSite{Groups: 3}
			port := serveHandler(t, site)
			base := fmt.Sprintf("http://dups.test:%d", port)
			extra := fmt.Sprintf(`<attrib name="max_pending" type="integer"> 1 </attrib>
    <attrib name="extract_links_from_dupes" type="boolean"> %s </attrib>`, map[bool]string{true: "yes", false: "no"}[yes])
			c := startOptCrawl(t, optXML(optCollection("dup", base+"/", "dups.test", extra)), nil, nil)
			waitIdle(t, c.d, 60*time.Second)
			if d := cmp.Diff(site.ExpectDupes(yes), site.Paths()); d != "" {
				t.Errorf("fetched paths (-want +got):\n%s", d)
			}
			for g := 0; g < site.Groups; g++ {
				first, dup := webfarm.DupCopies(g)
				rec, ok, err := c.st.URI("dup", base+dup)
				if err != nil || !ok || rec.Status != store.StatusDuplicate || rec.Owner != base+first {
					t.Errorf("record of %s: %+v %v %v; want a duplicate of %s", dup, rec, ok, err, first)
				}
			}
			if n := c.d.Stats()["dup"]["links_dupes_dropped"]; (n > 0) == yes {
				t.Errorf("links_dupes_dropped = %d", n)
			}
			for _, r := range site.Requests() {
				if r.UserAgent != "trawl-dup" {
					t.Fatalf("request %+v not from the crawler", r)
				}
			}
		})
	}
}

// TestCrawlSendLinksTo runs two collections on one node: "front" crawls its
// start URI and sends the links it finds to "back", which crawls the rest of
// the site (and keeps its own links). The site's log tells them apart by
// User-Agent.
func TestCrawlSendLinksTo(t *testing.T) {
	site := &webfarm.LangSite{Pages: 21}
	port := serveHandler(t, site)
	base := fmt.Sprintf("http://links.test:%d", port)
	front := optCollection("front", base+"/", "links.test", `<attrib name="send_links_to" type="string"> back </attrib>`)
	back := optCollection("back", "", "links.test", "")
	c := startOptCrawl(t, optXML(front, back), nil, nil)
	deadline := time.Now().Add(60 * time.Second)
	for c.d.Stats()["back"]["processed"] < 20 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	waitIdle(t, c.d, 60*time.Second)
	by := map[string][]string{}
	for _, r := range site.Requests() {
		by[r.UserAgent] = append(by[r.UserAgent], r.Path)
	}
	all, _ := site.ExpectFocused(nil, 0)
	var rest []string
	for _, p := range all {
		if p != "/" {
			rest = append(rest, p)
		}
	}
	sort.Strings(rest)
	for ua, want := range map[string][]string{"trawl-front": {"/", "/robots.txt"}, "trawl-back": append([]string{"/robots.txt"}, rest...)} {
		got := by[ua]
		sort.Strings(got)
		sort.Strings(want)
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("requests of %s (-want +got):\n%s", ua, d)
		}
	}
	if d := cmp.Diff([]string{"/"}, storedBy(t, c.st, "front", store.StatusFetched)); d != "" {
		t.Errorf("front's records (-want +got):\n%s", d)
	}
	if d := cmp.Diff(rest, storedBy(t, c.st, "back", store.StatusFetched)); d != "" {
		t.Errorf("back's records (-want +got):\n%s", d)
	}
	if n := c.d.Stats()["front"]["links_sent_to_collection"]; n != 4 {
		t.Errorf("front sent %d links, want the 4 of its start page", n)
	}
}

// shiftClock is a real clock moved by an offset a test sets: it places the
// crawl at a chosen time of the week.
type shiftClock struct {
	mu  sync.Mutex
	off time.Duration
}

func (c *shiftClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.off)
}

// moveTo makes the clock read at now (in the local zone) the next
// weekday at hour:min.
func (c *shiftClock) moveTo(day time.Weekday, hour, min int) {
	now := time.Now()
	t := time.Date(now.Year(), now.Month(), now.Day(), hour, min, 0, 0, time.Local)
	for t.Weekday() != day {
		t = t.AddDate(0, 0, 1)
	}
	c.mu.Lock()
	c.off = t.Sub(now)
	c.mu.Unlock()
}

// TestCrawlVariableDelay places the crawl, by the injected clock, in a slot
// of variable_delay with its own delay (the crawler's own request starts are
// that far apart) and in a "suspend" slot (the site gets no request until
// the clock leaves the slot).
func TestCrawlVariableDelay(t *testing.T) {
	const slots = `<section name="variable_delay">
      <attrib name="Wed:09-Wed:19" type="string"> 0.25 </attrib>
      <attrib name="Mon:09.00-Mon:17.30" type="string"> suspend </attrib>
    </section>`
	t.Run("slot delay", func(t *testing.T) {
		site := &webfarm.LangSite{Pages: 9}
		port := serveHandler(t, site)
		base := fmt.Sprintf("http://slots.test:%d", port)
		clock := &shiftClock{}
		clock.moveTo(time.Wednesday, 10, 0)
		var mu sync.Mutex
		var starts []time.Time
		rec := func(r crawlpipe.RequestLog) {
			mu.Lock()
			starts = append(starts, r.Start)
			mu.Unlock()
			if r.Delay != 250*time.Millisecond {
				t.Errorf("request %s paced by %v, want the slot's 250ms", r.URI, r.Delay)
			}
		}
		c := startOptCrawl(t, optXML(optCollection("slots", base+"/", "slots.test", slots)), clock.now, rec)
		waitIdle(t, c.d, 60*time.Second)
		all, _ := site.ExpectFocused(nil, 0)
		if d := cmp.Diff(all, withoutRobots(site.Paths())); d != "" {
			t.Errorf("fetched (-want +got):\n%s", d)
		}
		mu.Lock()
		defer mu.Unlock()
		sort.Slice(starts, func(i, j int) bool { return starts[i].Before(starts[j]) })
		if len(starts) != 10 {
			t.Errorf("%d requests recorded, want 10 (robots.txt and 9 pages)", len(starts))
		}
		for i := 1; i < len(starts); i++ {
			if gap := starts[i].Sub(starts[i-1]); gap < 250*time.Millisecond {
				t.Errorf("requests %d and %d started %v apart, want at least the slot's 250ms", i-1, i, gap)
			}
			if wd := starts[i].Weekday(); wd != time.Wednesday {
				t.Errorf("request at %v: the clock left Wednesday", starts[i])
			}
		}
	})
	t.Run("suspend", func(t *testing.T) {
		site := &webfarm.LangSite{Pages: 5}
		port := serveHandler(t, site)
		base := fmt.Sprintf("http://slots.test:%d", port)
		clock := &shiftClock{}
		clock.moveTo(time.Monday, 9, 30)
		c := startOptCrawl(t, optXML(optCollection("slots", base+"/", "slots.test", slots)), clock.now, nil)
		deadline := time.Now().Add(30 * time.Second)
		for c.d.Stats()["slots"]["uris_queued"] == 0 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if c.d.Stats()["slots"]["uris_queued"] == 0 {
			t.Fatal("start URI never queued")
		}
		// The start URI is queued: for 2 s (twice the driver's longest
		// sleep) nothing may be fetched.
		quiet := time.Now().Add(2 * time.Second)
		for time.Now().Before(quiet) {
			if n := len(site.Requests()); n > 0 {
				t.Fatalf("%d requests during the suspended slot: %v", n, site.Requests())
			}
			time.Sleep(20 * time.Millisecond)
		}
		clock.moveTo(time.Monday, 17, 30) // the slot ends: the default delay holds
		waitIdle(t, c.d, 60*time.Second)
		all, _ := site.ExpectFocused(nil, 0)
		if d := cmp.Diff(all, withoutRobots(site.Paths())); d != "" {
			t.Errorf("fetched after the suspension (-want +got):\n%s", d)
		}
	})
}

// TestCrawlMirrorSiteFiles crawls a site whose links mostly name two
// mirrors: with mirror_site_files every page is fetched once, from the
// preferred host, and the mirrors are recorded; without it the same pages
// are fetched under all three names.
func TestCrawlMirrorSiteFiles(t *testing.T) {
	for _, withFile := range []bool{true, false} {
		t.Run(fmt.Sprintf("file=%v", withFile), func(t *testing.T) {
			site := &webfarm.MirrorSite{Primary: "www.mirror.test", Mirrors: []string{"mirror1.mirror.test", "mirror2.mirror.test"}, Pages: 15}
			port := serveHandler(t, site)
			extra := ""
			if withFile {
				file := filepath.Join(t.TempDir(), "mirrors.txt")
				body := "# preferred name first\nwww.mirror.test  mirror1.mirror.test mirror2.mirror.test\n\nother.test other-mirror.test\n"
				if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
				extra = fmt.Sprintf(`<attrib name="mirror_site_files" type="list-string"><member> %s </member></attrib>`, file)
			}
			base := fmt.Sprintf("http://www.mirror.test:%d", port)
			c := startOptCrawl(t, optXML(optCollection("mir", base+"/", "mirror.test", extra)), nil, nil)
			waitIdle(t, c.d, 60*time.Second)
			got, err := crawlpipe.Mirrors(c.st, "mir")
			if err != nil {
				t.Fatal(err)
			}
			if !withFile {
				if len(site.Hosts()) != 3 || len(got) != 0 {
					t.Errorf("without the file: hosts %v, mirrors %v; want all three hosts crawled, none recorded", site.Hosts(), got)
				}
				return
			}
			if d := cmp.Diff([]string{"www.mirror.test"}, site.Hosts()); d != "" {
				t.Errorf("hosts requested (-want +got):\n%s", d)
			}
			if d := cmp.Diff(site.AllPaths(), site.Paths()); d != "" {
				t.Errorf("paths (-want +got):\n%s", d)
			}
			if n := len(site.Requests()); n != len(site.AllPaths()) {
				t.Errorf("%d requests for %d paths: something was fetched twice", n, len(site.AllPaths()))
			}
			want := map[string]string{
				fmt.Sprintf("mirror1.mirror.test:%d", port): fmt.Sprintf("www.mirror.test:%d", port),
				fmt.Sprintf("mirror2.mirror.test:%d", port): fmt.Sprintf("www.mirror.test:%d", port),
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("recorded mirrors (-want +got):\n%s", d)
			}
		})
	}
}

// TestCrawlFocused crawls a site written in four languages with focused
// languages and depths: the fetched set and the kept set (URI records with a
// document) equal the site's expectation, other-language pages are recorded
// as excluded, and their documents are not stored.
func TestCrawlFocused(t *testing.T) {
	for _, tc := range []struct {
		langs []string
		depth int
	}{
		{nil, 0},
		{[]string{"en"}, 0},
		{[]string{"en", "nb"}, 1},
		{[]string{"fr", "de"}, 2},
		{[]string{"de"}, 1},
	} {
		t.Run(fmt.Sprintf("%v depth %d", tc.langs, tc.depth), func(t *testing.T) {
			site := &webfarm.LangSite{Pages: 85}
			port := serveHandler(t, site)
			base := fmt.Sprintf("http://lang.test:%d", port)
			extra := ""
			if tc.langs != nil {
				var ms []string
				for _, l := range tc.langs {
					ms = append(ms, "<member> "+l+" </member>")
				}
				extra = fmt.Sprintf(`<section name="focused"><attrib name="languages" type="list-string">%s</attrib><attrib name="depth" type="integer"> %d </attrib></section>`, strings.Join(ms, ""), tc.depth)
			}
			c := startOptCrawl(t, optXML(optCollection("foc", base+"/", "lang.test", extra)), nil, nil)
			waitIdle(t, c.d, 60*time.Second)
			var want []string
			for _, l := range tc.langs {
				if l == "nb" {
					l = "no"
				}
				want = append(want, l)
			}
			fetched, kept := site.ExpectFocused(want, tc.depth)
			if d := cmp.Diff(fetched, withoutRobots(site.Paths())); d != "" {
				t.Errorf("fetched (-want +got):\n%s", d)
			}
			if d := cmp.Diff(kept, storedBy(t, c.st, "foc", store.StatusFetched)); d != "" {
				t.Errorf("kept (-want +got):\n%s", d)
			}
			var other []string
			for _, p := range fetched {
				if i := sort.SearchStrings(kept, p); i == len(kept) || kept[i] != p {
					other = append(other, p)
				}
			}
			if d := cmp.Diff(other, storedBy(t, c.st, "foc", store.StatusExcluded)); d != "" {
				t.Errorf("excluded (-want +got):\n%s", d)
			}
			for _, p := range other {
				if _, ok, err := c.st.Document("foc", base+p); err != nil || ok {
					t.Errorf("document of other-language page %s stored (%v)", p, err)
				}
			}
			t.Logf("fetched %d, kept %d", len(fetched), len(kept))
		})
	}
}

// TestCrawlAdaptiveSitemapWeights crawls a site whose sitemap gives its pages
// the change frequencies always, daily, monthly and never, in refresh_mode
// adaptive with only the sitemap rule weighted, over several refresh cycles:
// each cycle reschedules coverage_min known URIs, and pages with a higher
// changefreq weight are refetched more often; "never" (weight 0) pages are
// not refetched at all. The ranking (score times cycles since the last
// fetch) shares the refetches about in proportion to the weights (10 : 5 :
// 2.5 : 0 here), after a start in which the best pages go first. The counts
// come from the site's request log.
func TestCrawlAdaptiveSitemapWeights(t *testing.T) {
	site := &webfarm.ChangeSite{Pages: 40}
	port := serveHandler(t, site)
	base := fmt.Sprintf("http://change.test:%d", port)
	extra := adaptiveXML(10000, 1)
	c := startOptCrawl(t, optXML(optCollection("ad", base+"/", "change.test", extra)), nil, nil)
	waitIdle(t, c.d, 60*time.Second)
	first := len(site.Requests())
	const cycles = 10
	for cycle := 1; cycle <= cycles; cycle++ {
		site.SetCycle(cycle)
		c.mns.send(t, &cmt.AdmConfRefresh{Collection: "ad", Flags: cmt.RefreshCollection})
		deadline := time.Now().Add(30 * time.Second)
		for c.d.Stats()["ad"]["refresh_cycles"] < int64(cycle) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		waitIdle(t, c.d, 60*time.Second)
	}
	refetched := map[string]int{}
	per := map[string]int{}
	for _, r := range site.Requests()[first:] {
		per[r.Path]++
	}
	for n := 0; n < site.Pages; n++ {
		refetched[webfarm.ChangeFreqOf(n)] += per[webfarm.ChangePath(n)]
	}
	total := 0
	for _, v := range refetched {
		total += v
	}
	t.Logf("refetches over %d cycles by changefreq: %v; start page %d, sitemap %d", cycles, refetched, per["/"], per["/sitemap.xml"])
	if per["/"] != cycles || per["/sitemap.xml"] != cycles {
		t.Errorf("start page fetched %d times, sitemap %d times in %d cycles; want once per cycle", per["/"], per["/sitemap.xml"], cycles)
	}
	// 42 known URIs: max(10% of 42, coverage_min 12) = 12 per cycle; the
	// start page and the sitemap, queued anyway, may take two of them.
	if total < (12-2)*cycles || total > 12*cycles {
		t.Errorf("%d pages refetched in %d cycles, want 10..12 per cycle", total, cycles)
	}
	if !(refetched["always"] > refetched["daily"] && refetched["daily"] > refetched["monthly"] && refetched["never"] == 0) {
		t.Errorf("refetches by changefreq %v: want always > daily > monthly, never none", refetched)
	}
	if refetched["monthly"] == 0 {
		t.Errorf("monthly pages never refetched in %d cycles: the ranking starves lower weights", cycles)
	}
}

// adaptiveXML is the adaptive configuration of the change-frequency tests:
// only the sitemap rule weighted (10), sitemap weights always 1, daily 0.5,
// monthly 0.25, never 0; 12 URIs rescheduled per (minor) cycle.
func adaptiveXML(refreshMinutes, refreshCount int) string {
	return fmt.Sprintf(`<attrib name="use_sitemaps" type="boolean"> yes </attrib>
    <attrib name="refresh_mode" type="string"> adaptive </attrib>
    <attrib name="refresh" type="real"> %d </attrib>
    <attrib name="dbswitch" type="integer"> 0 </attrib>
    <section name="adaptive">
      <attrib name="refresh_count" type="integer"> %d </attrib>
      <attrib name="coverage_min" type="integer"> 12 </attrib>
      <attrib name="coverage_max_pct" type="integer"> 10 </attrib>
      <attrib name="refresh_quota" type="integer"> 90 </attrib>
      <section name="weights">
        <attrib name="inverse_length" type="real"> 0 </attrib>
        <attrib name="inverse_depth" type="real"> 0 </attrib>
        <attrib name="is_landing_page" type="real"> 0 </attrib>
        <attrib name="is_mime_markup" type="real"> 0 </attrib>
        <attrib name="change_history" type="real"> 0 </attrib>
        <attrib name="sitemap" type="real"> 10 </attrib>
      </section>
      <section name="sitemap_weights">
        <attrib name="daily" type="real"> 0.5 </attrib>
        <attrib name="monthly" type="real"> 0.25 </attrib>
      </section>
    </section>`, refreshMinutes, refreshCount)
}

// TestCrawlAdaptiveMinorCycles: with refresh_count 4 and a 40-minute refresh
// period, moving the injected clock by 10 minutes starts a minor refresh
// cycle, which refetches the best known pages (by changefreq weight and age)
// within the same refresh cycle: the start page is not fetched again.
func TestCrawlAdaptiveMinorCycles(t *testing.T) {
	site := &webfarm.ChangeSite{Pages: 40}
	port := serveHandler(t, site)
	base := fmt.Sprintf("http://change.test:%d", port)
	clock := &shiftClock{}
	c := startOptCrawl(t, optXML(optCollection("ad", base+"/", "change.test", adaptiveXML(40, 4))), clock.now, nil)
	waitIdle(t, c.d, 60*time.Second)
	first := len(site.Requests())
	for m := 1; m <= 3; m++ {
		clock.mu.Lock()
		clock.off += 10*time.Minute + time.Second
		clock.mu.Unlock()
		deadline := time.Now().Add(30 * time.Second)
		for c.d.Stats()["ad"]["adaptive_rescheduled"] < int64(12*m) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		waitIdle(t, c.d, 60*time.Second)
	}
	per := map[string]int{}
	for _, r := range site.Requests()[first:] {
		per[r.Path]++
	}
	refetched := map[string]int{}
	total := 0
	for n := 0; n < site.Pages; n++ {
		refetched[webfarm.ChangeFreqOf(n)] += per[webfarm.ChangePath(n)]
		total += per[webfarm.ChangePath(n)]
	}
	t.Logf("refetches over 3 minor cycles by changefreq: %v", refetched)
	if st := c.d.Stats()["ad"]; st["refresh_cycles"] != 0 || per["/"] != 0 {
		t.Errorf("a refresh cycle ran (refresh_cycles %d, start page fetched %d times): only minor cycles were due", st["refresh_cycles"], per["/"])
	}
	if total != 3*12 {
		t.Errorf("%d pages refetched in 3 minor cycles, want 12 each", total)
	}
	if !(refetched["always"] > refetched["daily"] && refetched["never"] == 0) {
		t.Errorf("refetches by changefreq %v: want always > daily, never none", refetched)
	}
}
