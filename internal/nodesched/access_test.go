package nodesched

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/cmt/cmtconfig"
	"github.com/trawl/trawl/internal/config"
	"github.com/trawl/trawl/internal/fetch"
	"github.com/trawl/trawl/internal/nodesched/crawlpipe"
	"github.com/trawl/trawl/internal/stats"
	"github.com/trawl/trawl/internal/store"
	"github.com/trawl/trawl/internal/testenv"
	"github.com/trawl/trawl/internal/webfarm"
)

// loopMNS is a multinode scheduler for the access tests: every host name
// resolves to 127.0.0.1, every crawl IP is granted, every site is routed
// to the node.
type loopMNS struct {
	conf cmt.CrawlConfig
	name string
	mu   sync.Mutex
	seen map[string]bool
}

func (f *loopMNS) dialer(ctx context.Context) DialFunc {
	return func(context.Context) (*cmt.Conn, error) {
		a, b := cmt.Pipe(cmt.ConnConfig{Name: "node->mns", SendQueue: 1 << 12, RecvQueue: 1 << 12}, cmt.ConnConfig{Name: "mns->node", SendQueue: 1 << 12, RecvQueue: 1 << 12})
		go f.serve(ctx, b)
		return a, nil
	}
}

func (f *loopMNS) serve(ctx context.Context, c *cmt.Conn) {
	go func() { _ = c.Run(ctx) }()
	send := func(m cmt.Message) { _ = c.Send(ctx, m, cmt.DefaultPriority(m.Code())) }
	for fr := range c.Incoming() {
		switch x := fr.Message.(type) {
		case *cmt.UMInit:
			send(&cmt.AdmConfAdd{Collection: f.name, Config: f.conf})
		case *cmt.UMKeepalive:
			send(&cmt.UMKeepaliveAck{})
		case *cmt.UMDNSRequest:
			send(&cmt.UMDNSReply{Host: x.Site, Time: time.Now().Unix(), TTL: 86400, Addrs: []cmt.AddrInfo{{Family: 2, SockType: 1, IP: "127.0.0.1"}}})
		case *cmt.UMStartCrawlIP:
			send(&cmt.UMStartCrawlIPReply{Collection: x.Collection, IP: x.IP, Site: x.Site, Allowed: true})
		case *cmt.UMURI:
			host := strings.ToLower(x.Entry.URI.Host)
			f.mu.Lock()
			first := !f.seen[host]
			f.seen[host] = true
			f.mu.Unlock()
			if first {
				send(&cmt.UMAddRoute{Collection: x.Collection, NodeID: "node1", RouteAttr: host, Site: host, TTL: 86400})
			}
			send(&cmt.UMURI{Collection: x.Collection, Entry: x.Entry})
		}
	}
}

// crawlXML is a collection crawling start with the extra XML inside.
func crawlXML(start, host, extra string) string {
	return fmt.Sprintf(`<?xml version="1.0" encoding="utf-8"?>
<CrawlerConfig>
  <DomainSpecification name="acc">
    <attrib name="start_uris" type="list-string"><member> %s </member></attrib>
    <attrib name="delay" type="real"> 0.01 </attrib>
    <attrib name="fetch_timeout" type="integer"> 10 </attrib>
    <attrib name="refresh_mode" type="string"> scratch </attrib>
    <section name="include_domains"><attrib name="exact" type="list-string"><member> %s </member></attrib></section>
%s
  </DomainSpecification>
</CrawlerConfig>
`, start, host, extra)
}

// runAccessCrawl crawls the collection of xml until the node is idle and
// returns its statistics.
func runAccessCrawl(t *testing.T, xml string) map[string]int64 {
	t.Helper()
	stats, _ := runAccessCrawlLog(t, xml)
	return stats
}

// docSkips maps a collection's counters to document skip codes
// (MS-FSCADM 2.2.3.2) as the statistics do.
func docSkips(counters map[string]int64) map[string]int64 {
	out := map[string]int64{}
	for code, names := range stats.DocSkipCounters {
		for _, n := range names {
			if v := counters[n]; v > 0 {
				out[code] += v
			}
		}
	}
	return out
}

// runAccessCrawlLog is runAccessCrawl that also returns the node's log.
func runAccessCrawlLog(t *testing.T, xml string) (map[string]int64, string) {
	t.Helper()
	counters, _, logText := runAccessCrawlSites(t, xml)
	return counters, logText
}

// runAccessCrawlSites is runAccessCrawlLog that also returns the
// counters of each site.
func runAccessCrawlSites(t *testing.T, xml string) (map[string]int64, map[string]Counters, string) {
	t.Helper()
	logs := &testenv.Buffer{}
	cfg, err := config.Parse("access.xml", []byte(xml), nil)
	if err != nil {
		t.Fatalf("%v\n%s", err, xml)
	}
	col := cfg.Collections[0]
	st, err := store.Open(t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx, cancel := context.WithCancel(context.Background())
	mns := &loopMNS{conf: cmt.CrawlConfig{Collections: []cmt.Collection{cmtconfig.CrawlConfig(col)}}, name: col.Name, seen: map[string]bool{}}
	d := New(Config{NodeID: "node1", Store: st, MNS: mns.dialer(ctx), Workers: 8, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	waitIdle(t, d, 60*time.Second)
	counters := d.Stats()["acc"]
	// The driver copies the sites' counters at most every siteStatsEvery:
	// wait until they add up to the collection's.
	var sites map[string]Counters
	for deadline := time.Now().Add(20 * time.Second); ; {
		sites = d.SiteStats()["acc"]
		sum := Counters{}
		for _, cs := range sites {
			for k, v := range cs {
				sum[k] += v
			}
		}
		same := true
		for k, v := range counters {
			if k == "processed" || k == "robots_denied" || strings.HasPrefix(k, "errors_") {
				same = same && sum[k] == v
			}
		}
		if same || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
	return counters, sites, logs.String()
}

// serveSite serves an AccessSite on 127.0.0.1 under a host name.
func serveSite(t *testing.T, site *webfarm.AccessSite, name string) (base, host string) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: site}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	host = fmt.Sprintf("%s:%d", name, ln.Addr().(*net.TCPAddr).Port)
	return "http://" + host, name
}

func allPaths(site *webfarm.AccessSite) []string {
	p := site.Paths()
	sort.Strings(p)
	return p
}

func TestCrawlBehindBasicAuth(t *testing.T) {
	for _, tt := range []struct {
		name, password string
		wantAll        bool
	}{{"right password", "s3cret", true}, {"wrong password", "guess", false}} {
		t.Run(tt.name, func(t *testing.T) {
			site := &webfarm.AccessSite{Pages: 30, Guard: &webfarm.BasicGuard{User: "alice", Password: "s3cret", Realm: "intranet"}}
			base, host := serveSite(t, site, "basic.test")
			xml := crawlXML(base+"/", host, fmt.Sprintf(`    <section name="passwd"><attrib name="%s/" type="string"> alice:%s:intranet:auto </attrib></section>`, base, tt.password))
			stats := runAccessCrawl(t, xml)
			granted := site.GrantedPaths()
			if tt.wantAll {
				if d := cmp.Diff(allPaths(site), granted); d != "" {
					t.Errorf("pages served to the crawl (-want +got):\n%s", d)
				}
			} else {
				if len(granted) != 0 {
					t.Errorf("wrong credentials got %v", granted)
				}
				if stats["http_401"] == 0 {
					t.Errorf("no 401 counted: %v", stats)
				}
			}
			t.Logf("%d requests, stats %v", len(site.Requests()), stats)
		})
	}
}

func TestCrawlBehindFormLogin(t *testing.T) {
	for _, tt := range []struct {
		name, password string
		wantAll        bool
	}{{"right password", "letmein", true}, {"wrong password", "guess", false}} {
		t.Run(tt.name, func(t *testing.T) {
			g := &webfarm.FormLoginGuard{User: "dave", Password: "letmein", SessionRequests: 8}
			site := &webfarm.AccessSite{Pages: 30, Guard: g}
			base, host := serveSite(t, site, "forms.test")
			login := fmt.Sprintf(`    <Login name="intranet">
      <attrib name="html_form" type="string"> %s/login </attrib>
      <attrib name="autofill" type="boolean"> yes </attrib>
      <attrib name="sites" type="list-string"><member> %s </member></attrib>
      <section name="parameters">
        <attrib name="user" type="string"> dave </attrib>
        <attrib name="password" type="string"> %s </attrib>
      </section>
    </Login>
    <attrib name="use_cookies" type="boolean"> yes </attrib>`, base, strings.TrimPrefix(base, "http://"), tt.password)
			stats := runAccessCrawl(t, crawlXML(base+"/", host, login))
			ok, failed := g.Logins()
			granted := site.GrantedPaths()
			if tt.wantAll {
				if d := cmp.Diff(allPaths(site), granted); d != "" {
					t.Errorf("pages served to the crawl (-want +got):\n%s", d)
				}
				// Sessions end after 8 pages: the crawl must have logged in
				// again when sent back to the form.
				if ok < 2 || failed != 0 {
					t.Errorf("logins: %d ok, %d failed; want several ok (session expiry), none failed", ok, failed)
				}
			} else {
				if len(granted) != 0 {
					t.Errorf("wrong password got %v", granted)
				}
				if failed != 1 || stats["errors_login"] == 0 {
					t.Errorf("failed logins %d (want 1, no retry without relogin_if_failed), stats %v", failed, stats)
				}
			}
			t.Logf("logins ok %d failed %d; %d requests; stats %v", ok, failed, len(site.Requests()), stats)
		})
	}
}

func TestCrawlFTP(t *testing.T) {
	srv := &webfarm.FTPServer{
		Files: map[string]string{
			"/pub/index.html":         `<html><body><a href="/hidden/linked-only.txt">x</a></body></html>`,
			"/hidden/linked-only.txt": "only reachable with ftp_searchlinks",
			"/pub/docs/a.txt":         "a",
			"/pub/docs/deep/b.txt":    "b",
			"/pub/docs/deep/c.html":   "<p>c</p>",
		},
		Users: map[string]string{"crawler": "pw"},
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go srv.Serve(ctx, ln)
	port := ln.Addr().(*net.TCPAddr).Port
	hostport := fmt.Sprintf("files.test:%d", port)
	base := "ftp://" + hostport
	for _, tt := range []struct {
		searchlinks bool
		want        []string
	}{
		{false, []string{"/pub/docs/a.txt", "/pub/docs/deep/b.txt", "/pub/docs/deep/c.html", "/pub/index.html"}},
		{true, []string{"/hidden/linked-only.txt", "/pub/docs/a.txt", "/pub/docs/deep/b.txt", "/pub/docs/deep/c.html", "/pub/index.html"}},
	} {
		t.Run(fmt.Sprintf("searchlinks=%v", tt.searchlinks), func(t *testing.T) {
			before := len(srv.Log())
			yn := map[bool]string{true: "yes", false: "no"}[tt.searchlinks]
			extra := fmt.Sprintf(`    <attrib name="allowed_schemes" type="list-string"><member> http </member><member> ftp </member></attrib>
    <attrib name="allowed_types" type="list-string"><member> */* </member></attrib>
    <attrib name="ftp_searchlinks" type="boolean"> %s </attrib>
    <section name="ftp_acct"><attrib name="%s" type="string"> crawler:pw </attrib></section>`, yn, hostport)
			stats := runAccessCrawl(t, crawlXML(base+"/pub/", "files.test", extra))
			set := map[string]bool{}
			for _, c := range srv.Log()[before:] {
				if c.Verb == "RETR" && c.Code == 226 {
					set[c.Arg] = true
				}
			}
			var got []string
			for p := range set {
				got = append(got, p)
			}
			sort.Strings(got)
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("files retrieved (-want +got):\n%s\nstats %v", d, stats)
			}
		})
	}
}

func TestCompileAccessPasswords(t *testing.T) {
	key, err := config.CreateKeyFile(t.TempDir()+"/key", rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := config.CreateKeyFile(t.TempDir()+"/other", rand.Reader)
	enc, err := key.Encrypt("s3cret", rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	site := &webfarm.AccessSite{Pages: 1, Guard: &webfarm.BasicGuard{User: "alice", Password: "s3cret", Realm: "r"}}
	base, host := serveSite(t, site, "127.0.0.1")
	xml := crawlXML(base+"/", host, fmt.Sprintf(`    <section name="passwd"><attrib name="%s/" type="string"> alice:%s </attrib></section>
    <attrib name="proxy" type="list-string"><member> http://pu:%s@127.0.0.1:1 </member></attrib>`, base, enc, enc))
	cfg, err := config.Parse("enc.xml", []byte(xml), nil)
	if err != nil {
		t.Fatal(err)
	}
	col := cfg.Collections[0]
	if _, err := crawlpipe.Compile(col, crawlpipe.Env{NodeID: "n"}); err == nil || !strings.Contains(err.Error(), "no key") {
		t.Errorf("no key: err %v", err)
	}
	if _, err := crawlpipe.Compile(col, crawlpipe.Env{NodeID: "n", Key: other}); !errors.Is(err, config.ErrNotAuthentic) {
		t.Errorf("wrong key: err %v, want ErrNotAuthentic", err)
	}
	s, err := crawlpipe.Compile(col, crawlpipe.Env{NodeID: "n", Key: key})
	if err != nil {
		t.Fatal(err)
	}
	if s.Access.Auth == nil || s.Access.Proxies == nil || s.Access.Proxies.Len() != 1 {
		t.Fatalf("access %+v", s.Access)
	}
	// The decrypted password gets in (the proxy is left out for this fetch).
	fo := s.FetchOptions
	fo.Proxies = nil
	f, err := fetch.New(fo)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := f.Fetch(context.Background(), fetch.Request{URL: base + "/a/0.html"})
	if err != nil || resp.Status != 200 {
		t.Fatalf("fetch with the decrypted password: %v %v", resp, err)
	}
	if !bytes.Contains(resp.Body, []byte("Protected")) {
		t.Errorf("body %q", resp.Body)
	}
}

// TestCrawlFTPActive crawls with ftp_passive=no a server that refuses
// passive mode, and with the default a server that refuses active mode:
// each crawl gets every file, with the data connections the server logged
// in the configured mode only.
func TestCrawlFTPActive(t *testing.T) {
	files := map[string]string{"/pub/a.txt": "a", "/pub/docs/b.txt": "b", "/pub/docs/deep/c.txt": "c"}
	for _, passive := range []bool{false, true} {
		t.Run(fmt.Sprintf("ftp_passive=%v", passive), func(t *testing.T) {
			srv := &webfarm.FTPServer{Files: files, Anonymous: true, RefusePassive: !passive, RefuseActive: passive}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go srv.Serve(ctx, ln)
			base := fmt.Sprintf("ftp://files.test:%d", ln.Addr().(*net.TCPAddr).Port)
			yn := map[bool]string{true: "yes", false: "no"}[passive]
			extra := fmt.Sprintf(`    <attrib name="allowed_schemes" type="list-string"><member> ftp </member></attrib>
    <attrib name="allowed_types" type="list-string"><member> */* </member></attrib>
    <attrib name="ftp_passive" type="boolean"> %s </attrib>`, yn)
			stats := runAccessCrawl(t, crawlXML(base+"/pub/", "files.test", extra))
			want := map[bool]string{true: "passive", false: "active"}[passive]
			modes := map[string]int{}
			for _, c := range srv.Log() {
				if c.Mode != "" {
					modes[c.Mode]++
				}
			}
			if d := cmp.Diff([]string{"/pub/a.txt", "/pub/docs/b.txt", "/pub/docs/deep/c.txt"}, srv.Retrieved()); d != "" {
				t.Errorf("files retrieved (-want +got):\n%s\nstats %v", d, stats)
			}
			if len(modes) != 1 || modes[want] == 0 {
				t.Errorf("data connections by mode %v, want %s only", modes, want)
			}
		})
	}
}

// TestCrawlExcludeHeadersPostPayload crawls a site whose documents carry an
// X-Classification header and whose search page answers only the POST of
// its form: with exclude_headers the private and internal documents are
// refused on their headers (skip code hx), so the pages only they link to
// are never asked for; with post_payload the search page is POSTed its
// payload and its results are crawled. Without the options the crawl gets
// the excluded pages and a 405 from the search page.
func TestCrawlExcludeHeadersPostPayload(t *testing.T) {
	for _, tt := range []struct {
		name         string
		options      bool
		want         []string
		wantExcluded int64
	}{
		{"with the options", true, []string{"GET /", "GET /doc/internal.html", "GET /doc/private.html", "GET /doc/public-child.html",
			"GET /doc/public.html", "GET /results/1.html", "GET /results/2.html", "GET /robots.txt", "POST /search"}, 2},
		{"without", false, []string{"GET /", "GET /doc/internal-child.html", "GET /doc/internal.html", "GET /doc/private-child.html",
			"GET /doc/private.html", "GET /doc/public-child.html", "GET /doc/public.html", "GET /robots.txt"}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			site := &webfarm.OptionsSite{}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			srv := &http.Server{Handler: site}
			go srv.Serve(ln)
			defer srv.Close()
			base := fmt.Sprintf("http://opts.test:%d", ln.Addr().(*net.TCPAddr).Port)
			extra := ""
			if tt.options {
				extra = fmt.Sprintf(`    <section name="exclude_headers"><attrib name="X-Classification" type="list-string"><member> ^private$ </member><member> (?i)^INTERNAL </member></attrib></section>
    <section name="post_payload"><attrib name="%s/search" type="string">
q=widgets&amp;page=1 </attrib><attrib name="prefix:%s/nowhere/" type="string"> x=1 </attrib></section>`, base, base)
			}
			stats := runAccessCrawl(t, crawlXML(base+"/", "opts.test", extra))
			if d := cmp.Diff(tt.want, site.Served()); d != "" {
				t.Errorf("served (-want +got):\n%s\nstats %v", d, stats)
			}
			if got := stats["errors_excluded-header"]; got != tt.wantExcluded {
				t.Errorf("excluded on headers: %d, want %d (stats %v)", got, tt.wantExcluded, stats)
			}
			if !tt.options && stats["http_405"] != 1 {
				t.Errorf("GET of the search page: want one 405, stats %v", stats)
			}
		})
	}
}

func TestPayloads(t *testing.T) {
	p := crawlpipe.NewPayloads([]crawlpipe.PayloadRule{{URI: "http://a/x", Payload: "exact"}, {URI: "http://a/", Prefix: true, Payload: "short"},
		{URI: "http://a/x/", Prefix: true, Payload: "long"}})
	for _, tt := range []struct{ uri, want string }{
		{"http://a/x", "exact"}, {"http://a/x/y", "long"}, {"http://a/z", "short"}, {"http://b/", ""},
	} {
		got, ok := p.For(tt.uri)
		if ok != (tt.want != "") || got != tt.want {
			t.Errorf("%s: %q %v, want %q", tt.uri, got, ok, tt.want)
		}
	}
	var none *crawlpipe.Payloads
	if _, ok := none.For("http://a/"); ok {
		t.Error("nil Payloads matched")
	}
}

// TestAccessFailuresCounted: wrong credentials, a failed form login and an
// unreachable proxy do not stop the crawl; each failure is counted under
// its document skip code, for the collection and the site, and the log
// names the site. With robots=yes the unreachable proxy first fails the
// robots.txt download: that is the connection failure counted (once: the
// outcome is cached), and the site's URIs are skipped as robots-denied.
func TestAccessFailuresCounted(t *testing.T) {
	unreachableProxy := func(robots string) func(t *testing.T) (string, string, string) {
		return func(t *testing.T) (string, string, string) {
			site := &webfarm.AccessSite{Pages: 4}
			base, host := serveSite(t, site, "proxied.test")
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			dead := ln.Addr().String()
			ln.Close() // nothing listens there any more
			return base, host, fmt.Sprintf(`    <attrib name="proxy" type="list-string"><member> http://%s </member></attrib>
    <attrib name="robots" type="boolean"> %s </attrib>`, dead, robots)
		}
	}
	for _, tt := range []struct {
		name, code, log string
		site            func(t *testing.T) (base, host, extra string)
		// uriCode, when set, is the URI skip code the site's URIs get;
		// counts, when set, are exact values of counters.
		uriCode string
		counts  map[string]int64
	}{
		{name: "wrong Basic password", code: stats.DocOther, log: "authentication refused by the site", site: func(t *testing.T) (string, string, string) {
			site := &webfarm.AccessSite{Pages: 4, Guard: &webfarm.BasicGuard{User: "alice", Password: "s3cret", Realm: "r"}}
			base, host := serveSite(t, site, "basic.test")
			return base, host, fmt.Sprintf(`    <section name="passwd"><attrib name="%s/" type="string"> alice:guess:r:basic </attrib></section>`, base)
		}},
		{name: "wrong form login", code: stats.DocOther, log: "form login failed", site: func(t *testing.T) (string, string, string) {
			site := &webfarm.AccessSite{Pages: 4, Guard: &webfarm.FormLoginGuard{User: "dave", Password: "letmein"}}
			base, host := serveSite(t, site, "forms.test")
			return base, host, fmt.Sprintf(`    <Login name="l"><attrib name="html_form" type="string"> %s/login </attrib>
      <attrib name="autofill" type="boolean"> yes </attrib>
      <attrib name="sites" type="list-string"><member> %s </member></attrib>
      <section name="parameters"><attrib name="user" type="string"> dave </attrib><attrib name="password" type="string"> guess </attrib></section></Login>`, base, strings.TrimPrefix(base, "http://"))
		}},
		{name: "unreachable proxy, robots=no", code: stats.DocConnectFailure, log: "proxy failed, document not fetched",
			site: unreachableProxy("no"), counts: map[string]int64{"robots_denied": 0}},
		{name: "unreachable proxy, robots=yes", code: stats.DocConnectFailure, log: "proxy failed, robots.txt not fetched",
			site: unreachableProxy("yes"), uriCode: stats.SkipRobots, counts: map[string]int64{"errors_proxy": 1, "robots_denied": 1, "robots_fetched": 0}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			base, host, extra := tt.site(t)
			counters, sites, logText := runAccessCrawlSites(t, crawlXML(base+"/", host, extra))
			skips := docSkips(counters)
			if skips[tt.code] == 0 {
				t.Errorf("skip code %s not counted: skips %v, counters %v", tt.code, skips, counters)
			}
			var siteCounters Counters
			for s, cs := range sites {
				if strings.HasPrefix(s, host) {
					siteCounters = cs
				}
			}
			if got := docSkips(siteCounters); got[tt.code] != skips[tt.code] {
				t.Errorf("site %s: skip code %s counted %d, collection %d (sites %v)", host, tt.code, got[tt.code], skips[tt.code], sites)
			}
			if tt.uriCode != "" {
				n := int64(0)
				for _, k := range stats.URISkipCounters[tt.uriCode] {
					n += counters[k]
				}
				if n == 0 {
					t.Errorf("URI skip code %s not counted: counters %v", tt.uriCode, counters)
				}
			}
			for k, want := range tt.counts {
				if counters[k] != want {
					t.Errorf("counter %s = %d, want %d (counters %v)", k, counters[k], want, counters)
				}
			}
			var line string
			for _, l := range strings.Split(logText, "\n") {
				if strings.Contains(l, tt.log) {
					line = l
					break
				}
			}
			if line == "" || !strings.Contains(line, "site="+host) || !strings.Contains(line, "level=WARN") {
				t.Errorf("no WARN line %q naming site %s:\n%s", tt.log, host, logText)
			}
			t.Log(line)
		})
	}
}
