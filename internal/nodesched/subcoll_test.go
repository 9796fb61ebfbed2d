package nodesched

import (
	"context"
	"fmt"
	"net"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/store"
	"github.com/trawl/trawl/internal/webfarm"
)

// TestSubCollections crawls a farm whose collection (delay 0, crawlmode
// FULL, the farm's User-Agent) has three SubDomain elements, each scoped
// to one host by include_domains: "slow" (host 0: delay 0.15 s, its own
// User-Agent, accept_compression off), "shallow" (host 2: crawlmode DEPTH:1) and "capped" (host 3:
// max_doc 5). Each host is crawled with its subcollection's parameters:
// the crawler's own request records show the delay per request and hold
// it, the farm's request log shows the User-Agent and Accept-Encoding per
// host (robots.txt included), the shallow host's fetched set is what Expect gives under
// DEPTH:1, and the capped host is served at most 5 entries (max_doc counts
// served entries, robots-denied ones included) out of many more.
func TestSubCollections(t *testing.T) {
	farm := startFarm(t, 4, 25)
	hosts := farm.Hosts()
	name := func(i int) string { return hosts[i].Name }
	const slowDelay = 150 * time.Millisecond
	sub := func(n, host, body string) string {
		return fmt.Sprintf(`        <SubDomain name="%s">
            <section name="include_domains"><attrib name="exact" type="list-string"><member> %s </member></attrib></section>
%s        </SubDomain>
`, n, host, body)
	}
	// The same robots.txt product token as the collection's User-Agent, so
	// that robots.txt allows the same URLs.
	slowUA := farm.Config().RobotsAgent + "/2.0 (slow subcollection)"
	extra := sub("slow", name(0), `            <attrib name="delay" type="real"> 0.15 </attrib>
            <attrib name="headers" type="list-string"><member> User-Agent: `+slowUA+` </member></attrib>
            <attrib name="accept_compression" type="boolean"> no </attrib>
`) + sub("shallow", name(2), `            <section name="crawlmode"><attrib name="mode" type="string"> DEPTH:1 </attrib></section>
`) + sub("capped", name(3), `            <attrib name="max_doc" type="integer"> 5 </attrib>
`)
	crawl := farm.DefaultCrawl()
	crawl.ResetLevel = false // a link to another host keeps counting hops
	r := runCrawlWith(t, farm, t.TempDir(), crawl, webfarm.XMLOptions{Collection: "farm", FetchTimeout: 8, Extra: extra})
	waitIdle(t, r.d, 120*time.Second)

	hostOf := func(u string) string {
		p, err := url.Parse(u)
		if err != nil {
			return ""
		}
		return p.Hostname()
	}
	// delay: every request of the slow host waited 0.15 s, the others 0.
	logs := r.rec.logs()
	for _, l := range logs {
		want := time.Duration(0)
		if hostOf(l.URI) == name(0) {
			want = slowDelay
		}
		if l.Delay != want {
			t.Errorf("%s paced with delay %v, want %v", l.URI, l.Delay, want)
			break
		}
	}
	checkOwnPoliteness(t, logs, 0, r.maxPending)

	// headers: the farm saw the slow host's User-Agent only there.
	uas := map[string]map[string]bool{}
	docs := map[string]int{}
	var shallow []string
	bad := 0
	for _, q := range farm.Requests() {
		h := hostOf(q.URL)
		if uas[h] == nil {
			uas[h] = map[string]bool{}
		}
		uas[h][q.UserAgent] = true
		if compressed := q.AcceptEncoding != "" && q.AcceptEncoding != "identity"; compressed != (h != name(0)) {
			bad++
			if bad <= 3 {
				t.Errorf("%s: Accept-Encoding %q (accept_compression is off only on %s)", q.URL, q.AcceptEncoding, name(0))
			}
		}
		if !strings.HasSuffix(q.URL, "/robots.txt") {
			docs[h]++
		}
		if h == name(2) {
			shallow = append(shallow, q.URL)
		}
	}
	for i := range 4 {
		var got []string
		for ua := range uas[name(i)] {
			got = append(got, ua)
		}
		sort.Strings(got)
		slow := len(got) == 1 && got[0] == slowUA
		if i == 0 && !slow || i != 0 && (len(got) != 1 || !strings.Contains(got[0], "trawl webfarm crawl")) {
			t.Errorf("%s: User-Agents %q", name(i), got)
		}
	}

	// crawlmode: the shallow host's fetched set is Expect's under DEPTH:1.
	dc := crawl
	dc.MaxDepth = 1
	all, err := farm.Expect(dc)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, u := range all {
		if hostOf(u) == name(2) {
			want = append(want, u)
		}
	}
	sort.Strings(shallow)
	if missing, extra := diffSets(want, shallow); len(missing)+len(extra) > 0 {
		t.Errorf("DEPTH:1 host: missing %v, extra %v", missing, extra)
	}

	// max_doc: the capped host got at most 5 documents of many more.
	full, err := farm.Expect(crawl)
	if err != nil {
		t.Fatal(err)
	}
	n3 := 0
	for _, u := range full {
		if hostOf(u) == name(3) {
			n3++
		}
	}
	if docs[name(3)] == 0 || docs[name(3)] > 5 || n3 < 20 {
		t.Errorf("capped host: %d documents fetched of %d, want 1 to 5 (max_doc)", docs[name(3)], n3)
	}
	t.Logf("documents per host %v; DEPTH:1 host %d URLs", docs, len(shallow))
}

// TestSubCollectionsPerURI crawls a farm of five hosts whose collection
// (robots.txt without sitemaps, no proxy, no cut_off, http allowed, the
// farm's start URIs) has one subcollection per host, each scoped by
// include_domains and overriding one parameter: "proxied" (host 0: proxy,
// a forward proxy that counts the hosts it reached), "cut" (host 1:
// cut_off 300 bytes), "maps" (host 2: use_sitemaps), "secure" (host 3:
// allowed_schemes https only; the farm serves http) and "starts" (host 4:
// start_uris and start_uri_files naming its two sitemap-only pages). The
// proxy saw host 0's requests and no other host's; host 1's documents are
// stored cut at 300 bytes while other hosts have larger ones; only host 2's
// sitemap-only pages are fetched through its sitemap, host 4's through its
// start URIs; host 3 gets no request although other hosts link to it.
func TestSubCollectionsPerURI(t *testing.T) {
	farm := startFarm(t, 5, 40)
	hosts := farm.Hosts()
	name := func(i int) string { return hosts[i].Name }
	base := func(i int) string { return fmt.Sprintf("http://%s:%d", name(i), farm.Port()) }
	proxy := &webfarm.ForwardProxy{Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
		h, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		ip, ok := farm.Lookup(h)
		if !ok {
			return nil, fmt.Errorf("proxy: no farm host %s", h)
		}
		var d net.Dialer
		return d.DialContext(ctx, network, net.JoinHostPort(ip.String(), port))
	}}
	ps := httptest.NewServer(proxy)
	t.Cleanup(ps.Close)
	file := filepath.Join(t.TempDir(), "starts.txt")
	if err := os.WriteFile(file, []byte(base(4)+"/hidden/1.html\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const cut = 300
	sub := func(n string, host int, body string) string {
		return fmt.Sprintf(`        <SubDomain name="%s">
            <section name="include_domains"><attrib name="exact" type="list-string"><member> %s </member></attrib></section>
%s        </SubDomain>
`, n, name(host), body)
	}
	extra := sub("proxied", 0, `            <attrib name="proxy" type="list-string"><member> `+ps.URL+` </member></attrib>
`) + sub("cut", 1, fmt.Sprintf(`            <attrib name="cut_off" type="integer"> %d </attrib>
`, cut)) + sub("maps", 2, `            <attrib name="use_sitemaps" type="boolean"> yes </attrib>
`) + sub("secure", 3, `            <attrib name="allowed_schemes" type="list-string"><member> https </member></attrib>
`) + sub("starts", 4, `            <attrib name="start_uris" type="list-string"><member> `+base(4)+`/hidden/0.html </member></attrib>
            <attrib name="start_uri_files" type="list-string"><member> `+file+` </member></attrib>
`)
	crawl := farm.DefaultCrawl()
	crawl.UseSitemaps = false
	r := runCrawlWith(t, farm, t.TempDir(), crawl, webfarm.XMLOptions{Collection: "farm", FetchTimeout: 8, Extra: extra})
	waitIdle(t, r.d, 120*time.Second)

	hostOf := func(u string) string {
		p, err := url.Parse(u)
		if err != nil {
			return ""
		}
		return p.Hostname()
	}
	// proxy: host 0's requests, robots.txt included, and nothing else.
	farmReqs := map[string]int{}
	var hidden []string
	for _, q := range farm.Requests() {
		farmReqs[hostOf(q.URL)]++
		if strings.Contains(q.URL, "/hidden/") {
			hidden = append(hidden, strings.TrimPrefix(q.URL, "http://"))
		}
	}
	st := proxy.Stats()
	via := map[string]int{}
	for hp, n := range st.Hosts {
		h, _, _ := net.SplitHostPort(hp)
		via[h] += n
	}
	if len(via) != 1 || via[name(0)] == 0 || via[name(0)] != farmReqs[name(0)] {
		t.Errorf("proxy reached %v; the farm saw %d requests of %s (proxy only for it)", via, farmReqs[name(0)], name(0))
	}

	// allowed_schemes: host 3 is linked to, and never requested.
	full, err := farm.Expect(crawl)
	if err != nil {
		t.Fatal(err)
	}
	linked := 0
	for _, u := range full {
		if hostOf(u) == name(3) {
			linked++
		}
	}
	if linked == 0 || farmReqs[name(3)] != 0 {
		t.Errorf("https-only host: %d requests (want 0) of %d URLs reachable", farmReqs[name(3)], linked)
	}

	// use_sitemaps, start_uris, start_uri_files: the sitemap-only pages.
	sort.Strings(hidden)
	want := []string{
		fmt.Sprintf("%s:%d/hidden/0.html", name(2), farm.Port()), fmt.Sprintf("%s:%d/hidden/1.html", name(2), farm.Port()),
		fmt.Sprintf("%s:%d/hidden/0.html", name(4), farm.Port()), fmt.Sprintf("%s:%d/hidden/1.html", name(4), farm.Port()),
	}
	sort.Strings(want)
	if missing, extra := diffSets(want, hidden); len(missing)+len(extra) > 0 {
		t.Errorf("sitemap-only pages: missing %v, extra %v", missing, extra)
	}

	// cut_off: host 1's documents are at most 300 bytes; others are not.
	sizes := map[string]int64{}
	if err := r.st.URIs("farm", "", func(rec *store.URIRecord) error {
		h := hostOf(rec.URI)
		sizes[h] = max(sizes[h], rec.Size)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if sizes[name(1)] == 0 || sizes[name(1)] > cut || sizes[name(0)] <= cut || sizes[name(2)] <= cut {
		t.Errorf("largest stored document per host %v: want at most %d bytes on %s only", sizes, cut, name(1))
	}
	t.Logf("requests per host %v; through the proxy %v", farmReqs, via)
}
