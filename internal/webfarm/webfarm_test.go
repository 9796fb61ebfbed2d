package webfarm

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dlclark/regexp2"
	"github.com/google/go-cmp/cmp"
	"github.com/trawl/trawl/internal/testenv"
)

func TestDeterminism(t *testing.T) {
	mk := func(seed int64) *Farm {
		cfg := smallConfig(seed)
		cfg.Port = 8080
		f, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	a, b, c := mk(42), mk(42), mk(43)
	ea, err := a.Expect(a.DefaultCrawl())
	if err != nil {
		t.Fatal(err)
	}
	eb, err := b.Expect(b.DefaultCrawl())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(ea, eb); diff != "" {
		t.Fatalf("same seed, different expect sets:\n%s", diff)
	}
	ec, err := c.Expect(c.DefaultCrawl())
	if err != nil {
		t.Fatal(err)
	}
	if cmp.Equal(ea, ec) {
		t.Error("different seeds gave the same expect set")
	}
	for _, u := range ea {
		ra, _ := a.Describe(u, 0)
		rb, _ := b.Describe(u, 0)
		if !bytes.Equal(ra.Body, rb.Body) || ra.Status != rb.Status || ra.ETag != rb.ETag {
			t.Fatalf("%s differs between two farms with the same seed", u)
		}
	}
}

func TestHandCheckedFarm(t *testing.T) {
	f, err := New(Config{Seed: 1, Hosts: 1, PagesPerHost: 3, Port: 8080})
	if err != nil {
		t.Fatal(err)
	}
	got, err := f.Expect(f.DefaultCrawl())
	if err != nil {
		t.Fatal(err)
	}
	p := "http://site0000.farm.test:8080"
	want := []string{p + "/", p + "/" + f.topic(0, 1) + "/1.html", p + "/" + f.topic(0, 2) + "/2.html", p + "/robots.txt"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	c := f.DefaultCrawl()
	c.MaxDepth = 0
	c.Robots = false
	got, _ = f.Expect(c)
	if diff := cmp.Diff([]string{p + "/"}, got); diff != "" {
		t.Errorf("depth 0 without robots (-want +got):\n%s", diff)
	}
}

func TestTrapsAreBoundedByTheCrawl(t *testing.T) {
	f, err := New(Config{Seed: 3, Hosts: 1, PagesPerHost: 5, Port: 8080,
		Features: FeatCalendar | FeatDeepPaths | FeatRedirects})
	if err != nil {
		t.Fatal(err)
	}
	c := f.DefaultCrawl()
	c.ExcludeURIs = Rules{}
	c.Limit = 5000
	if _, err := f.Expect(c); !errors.Is(err, ErrUnbounded) {
		t.Fatalf("unbounded calendar: got %v, want ErrUnbounded", err)
	}
	c.MaxDepth = 3
	got, err := f.Expect(c)
	if err != nil {
		t.Fatal(err)
	}
	deep := 0
	for _, u := range got {
		if strings.Contains(u, "/deep/") {
			deep++
		}
	}
	// /deep/ plus more/ repeated 1..2 (depth 1..3 from the home page).
	if deep != 3 {
		t.Errorf("%d deep URLs at depth 3, want 3", deep)
	}
	c = f.DefaultCrawl()
	got, err = f.Expect(c)
	if err != nil {
		t.Fatal(err)
	}
	deep, cal := 0, 0
	for _, u := range got {
		switch {
		case strings.Contains(u, "/deep/"):
			deep++
		case strings.Contains(u, "/cal/"):
			cal++
		}
	}
	if deep != 6 { // /deep/ + more/ x 1..5 (max_uri_recursion 5)
		t.Errorf("%d deep URLs under max_uri_recursion 5, want 6", deep)
	}
	if cal != 12+366 {
		t.Errorf("%d calendar URLs in 2024, want %d", cal, 12+366)
	}
	c.MaxDoc = 10
	if _, err := f.Expect(c); !errors.Is(err, ErrOrderDependent) {
		t.Errorf("max_doc 10: got %v, want ErrOrderDependent", err)
	}
}

func TestRedirectsEndAtMaxRedirects(t *testing.T) {
	f, err := New(Config{Seed: 5, Hosts: 2, PagesPerHost: 200, Port: 8080, Features: FeatRedirects})
	if err != nil {
		t.Fatal(err)
	}
	for _, max := range []int{0, 2, 10} {
		c := f.DefaultCrawl()
		c.MaxRedirects = max
		got, err := f.Expect(c)
		if err != nil {
			t.Fatal(err)
		}
		hops := map[string]int{}
		for _, u := range got {
			if i := strings.Index(u, "/redir/"); i >= 0 {
				chain, _, _ := strings.Cut(u[i+len("/redir/"):], "/h")
				hops[u[:i]+chain]++
			}
		}
		for chain, n := range hops {
			// id 3 of each host is endless: exactly max+1 hops are fetched.
			if strings.HasSuffix(chain, "/3") || strings.HasSuffix(chain, "/7") {
				if n != max+1 {
					t.Errorf("max_redirects %d: endless chain %s fetched %d hops, want %d", max, chain, n, max+1)
				}
			}
			if n > max+1 {
				t.Errorf("max_redirects %d: chain %s fetched %d hops", max, chain, n)
			}
		}
	}
}

func get(t *testing.T, c *http.Client, u string, hdr ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest("GET", u, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	return resp, body
}

// TestEveryFeatureOverHTTP fetches every URL of a wide crawl and compares
// what the server sends with Describe.
func TestEveryFeatureOverHTTP(t *testing.T) {
	f := startFarm(t, smallConfig(11))
	c := f.DefaultCrawl()
	c.Robots = false
	c.LinkKinds = ^LinkKinds(0)
	c.ExcludeExts = nil
	c.UseSitemaps = true
	c.CheckMetaRobots = false
	c.HTMLRedirIsRedir = false
	urls, err := f.Expect(c)
	if err != nil {
		t.Fatal(err)
	}
	client := farmClient(t, f, 5*time.Second)
	statuses := map[int]int{}
	types := map[string]int{}
	for _, u := range urls {
		want, err := f.Describe(u, 0)
		if err != nil {
			t.Fatal(err)
		}
		if want.Stalled {
			continue
		}
		resp, body := get(t, client, u, "User-Agent", "webfarm-test")
		statuses[resp.StatusCode]++
		types[resp.Header.Get("Content-Type")]++
		if resp.StatusCode != want.Status {
			t.Errorf("%s: status %d, Describe says %d", u, resp.StatusCode, want.Status)
			continue
		}
		if int64(len(body)) != want.Size {
			t.Errorf("%s: %d bytes, Describe says %d", u, len(body), want.Size)
		} else if int64(len(want.Body)) == want.Size && !bytes.Equal(body, want.Body) {
			t.Errorf("%s: body differs from Describe", u)
		}
		if want.Status == 503 && resp.Header.Get("Retry-After") == "" {
			t.Errorf("%s: 503 without Retry-After", u)
		}
		if want.ETag != "" && resp.Header.Get("ETag") != want.ETag {
			t.Errorf("%s: ETag %q, want %q", u, resp.Header.Get("ETag"), want.ETag)
		}
	}
	for _, st := range []int{200, 301, 302, 303, 307, 308, 401, 403, 404, 410, 500, 503} {
		if statuses[st] == 0 {
			t.Errorf("no response with status %d (got %v)", st, statuses)
		}
	}
	for _, ct := range []string{ctHTML, ctText, "application/pdf", "image/png", "application/octet-stream",
		"text/css", "application/javascript", "application/xml"} {
		if types[ct] == 0 {
			t.Errorf("no response of type %s (got %v)", ct, types)
		}
	}
	total, dropped := f.RequestCount()
	if total < int64(len(urls))-1 || dropped != 0 {
		t.Errorf("request log: %d entries (%d dropped) for %d requests", total, dropped, len(urls)-1)
	}
}

func TestConditionalAndCompression(t *testing.T) {
	f := startFarm(t, smallConfig(13))
	client := farmClient(t, f, 5*time.Second)
	u := f.StartURLs()[0]
	resp, body := get(t, client, u)
	etag, lm := resp.Header.Get("ETag"), resp.Header.Get("Last-Modified")
	if resp.StatusCode != 200 || etag == "" || lm == "" {
		t.Fatalf("status %d etag %q last-modified %q", resp.StatusCode, etag, lm)
	}
	for _, hdr := range [][]string{{"If-None-Match", etag}, {"If-Modified-Since", lm}, {"If-None-Match", `"x", ` + etag}} {
		resp, b := get(t, client, u, hdr...)
		if resp.StatusCode != 304 || len(b) != 0 {
			t.Errorf("%s: %q: status %d, %d bytes; want 304", u, hdr, resp.StatusCode, len(b))
		}
	}
	if resp, _ := get(t, client, u, "If-None-Match", `"other"`, "If-Modified-Since", lm); resp.StatusCode != 200 {
		t.Errorf("non-matching If-None-Match: status %d, want 200 (it takes precedence)", resp.StatusCode)
	}
	for _, enc := range []string{"gzip", "deflate"} {
		resp, zb := get(t, client, u, "Accept-Encoding", enc)
		if got := resp.Header.Get("Content-Encoding"); got != enc {
			t.Fatalf("Accept-Encoding %s: Content-Encoding %q", enc, got)
		}
		var zr io.Reader
		var err error
		if enc == "gzip" {
			zr, err = gzip.NewReader(bytes.NewReader(zb))
		} else {
			zr, err = zlib.NewReader(bytes.NewReader(zb))
		}
		if err != nil {
			t.Fatal(err)
		}
		plain, err := io.ReadAll(zr)
		if err != nil || !bytes.Equal(plain, body) {
			t.Errorf("%s body does not decode to the plain body (err %v)", enc, err)
		}
	}
	if resp, _ := get(t, client, u, "Accept-Encoding", "gzip;q=0, identity"); resp.Header.Get("Content-Encoding") != "" {
		t.Error("gzip;q=0 still compressed")
	}

	// A page that changes in cycle 1 gets new validators; 304 stops.
	var changed string
	for _, cu := range mustExpect(t, f, f.DefaultCrawl()) {
		r0, _ := f.Describe(cu, 0)
		r1, _ := f.Describe(cu, 1)
		if r0.Status == 200 && r1.Status == 200 && r0.ETag != "" && r0.ETag != r1.ETag && strings.HasSuffix(cu, ".html") {
			changed = cu
			break
		}
	}
	if changed == "" {
		t.Fatal("no page changes in cycle 1")
	}
	resp, _ = get(t, client, changed)
	etag, lm = resp.Header.Get("ETag"), resp.Header.Get("Last-Modified")
	f.SetCycle(1)
	defer f.SetCycle(0)
	resp, _ = get(t, client, changed, "If-None-Match", etag)
	if resp.StatusCode != 200 || resp.Header.Get("ETag") == etag {
		t.Errorf("changed page with old ETag: status %d etag %q", resp.StatusCode, resp.Header.Get("ETag"))
	}
	resp, _ = get(t, client, changed, "If-Modified-Since", lm)
	if resp.StatusCode != 200 {
		t.Errorf("changed page with old Last-Modified: status %d", resp.StatusCode)
	}
}

func mustExpect(t *testing.T, f *Farm, c Crawl) []string {
	t.Helper()
	u, err := f.Expect(c)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestRefreshCycles(t *testing.T) {
	f := startFarm(t, smallConfig(17))
	client := farmClient(t, f, 5*time.Second)
	c0 := f.DefaultCrawl()
	c1 := c0
	c1.Cycle = 1
	e0, e1 := mustExpect(t, f, c0), mustExpect(t, f, c1)
	in1 := map[string]bool{}
	for _, u := range e1 {
		in1[u] = true
	}
	deleted, appeared := 0, 0
	for _, u := range e0 {
		r0, _ := f.Describe(u, 0)
		r1, _ := f.Describe(u, 1)
		if r0.Status == 200 && (r1.Status == 404 || r1.Status == 410) && in1[u] {
			deleted++
			f.SetCycle(1)
			resp, _ := get(t, client, u)
			f.SetCycle(0)
			if resp.StatusCode != r1.Status {
				t.Errorf("%s in cycle 1: status %d, want %d", u, resp.StatusCode, r1.Status)
			}
		}
	}
	in0 := map[string]bool{}
	for _, u := range e0 {
		in0[u] = true
	}
	for _, u := range e1 {
		if !in0[u] {
			appeared++
		}
	}
	if deleted == 0 || appeared == 0 {
		t.Errorf("cycle 1: %d pages deleted (still linked), %d new URLs; want some of each", deleted, appeared)
	}
}

func TestStallSlowLarge(t *testing.T) {
	cfg := smallConfig(19)
	cfg.SlowDelay = 30 * time.Millisecond
	f := startFarm(t, cfg)
	h := f.Hosts()[3]
	base := "http://" + h.Name + ":" + itoa(f.Port())

	client := farmClient(t, f, 300*time.Millisecond)
	start := time.Now()
	resp, err := client.Get(base + "/stall/0.html")
	if err == nil {
		_, err = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("stalled page: err %v, want a timeout", err)
	}
	if time.Since(start) < 300*time.Millisecond {
		t.Error("stalled page ended before the client timeout")
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		var found *Request
		for _, r := range f.Requests() {
			if r.URI == "/stall/0.html" {
				found = &r
			}
		}
		if found != nil {
			if !found.Aborted || found.Status != 200 {
				t.Errorf("stall log entry: %+v", *found)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("stalled request never logged")
		}
		time.Sleep(10 * time.Millisecond) // polling the log with a deadline
	}

	client = farmClient(t, f, 10*time.Second)
	start = time.Now()
	resp, body := get(t, client, base+"/slow/1.html")
	if el := time.Since(start); el < time.Duration(cfg.SlowChunks-1)*cfg.SlowDelay {
		t.Errorf("slow page took %v", el)
	}
	if want, _ := f.Describe(base+"/slow/1.html", 0); !bytes.Equal(body, want.Body) || resp.StatusCode != 200 {
		t.Error("slow page body differs")
	}

	resp, body = get(t, client, base+"/big/0.html")
	if int64(len(body)) != cfg.LargeBytes || resp.ContentLength != cfg.LargeBytes {
		t.Errorf("large page: %d bytes, Content-Length %d, want %d", len(body), resp.ContentLength, cfg.LargeBytes)
	}
	if !bytes.Contains(body[:1024], []byte("/big/0/head.html")) || !bytes.Contains(body[len(body)-1024:], []byte("/big/0/tail.html")) {
		t.Error("large page lacks its head or tail link")
	}
	d, _ := f.Describe(base+"/big/0.html", 0)
	for _, l := range d.Links {
		if !bytes.Equal(body[l.End-1:l.End], []byte(">")) {
			t.Errorf("link %s: End %d is not just past a tag", l.URL, l.End)
		}
	}
	resp, zb := get(t, client, base+"/big/0.html", "Accept-Encoding", "gzip")
	zr, err := gzip.NewReader(bytes.NewReader(zb))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := io.ReadAll(zr)
	if err != nil || !bytes.Equal(plain, body) || resp.Header.Get("Content-Encoding") != "gzip" {
		t.Errorf("gzip large page: err %v, %d bytes", err, len(plain))
	}
}

func TestRequestLogAndMisdirected(t *testing.T) {
	var logBuf testenv.Buffer
	cfg := smallConfig(23)
	cfg.LogWriter = &logBuf
	f := startFarm(t, cfg)
	client := farmClient(t, f, 5*time.Second)
	urls := f.StartURLs()
	for _, u := range urls {
		get(t, client, u+"robots.txt", "User-Agent", "logtest/1", "If-Modified-Since", "Mon, 01 Jan 2024 00:00:00 GMT")
	}
	// Host 0 and host 4 live on different addresses: asking host 0's
	// address for host 4 is misdirected.
	hs := f.Hosts()
	conn, err := net.Dial("tcp", net.JoinHostPort(hs[0].Addr.String(), itoa(f.Port())))
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(conn, "GET / HTTP/1.1\r\nHost: "+hs[4].Name+"\r\nConnection: close\r\n\r\n")
	raw, _ := io.ReadAll(conn)
	conn.Close()
	if !bytes.HasPrefix(raw, []byte("HTTP/1.1 421")) {
		t.Errorf("misdirected request: %q", raw[:min(len(raw), 40)])
	}
	reqs := f.Requests()
	if len(reqs) != len(urls)+1 {
		t.Fatalf("%d requests logged, want %d", len(reqs), len(urls)+1)
	}
	for i, u := range urls {
		r := reqs[i]
		if r.URL != u+"robots.txt" || r.UserAgent != "logtest/1" || r.IfModifiedSince == "" || r.Method != "GET" ||
			r.Status == 0 || r.Time.IsZero() || r.Local == "" || r.Remote == "" {
			t.Errorf("log entry %d: %+v", i, r)
		}
		if ip, _, _ := net.SplitHostPort(r.Local); ip != hs[r.HostIndex].Addr.String() {
			t.Errorf("log entry %d: local %s, host address %s", i, r.Local, hs[r.HostIndex].Addr)
		}
	}
	if reqs[len(reqs)-1].Status != 421 {
		t.Errorf("last entry status %d", reqs[len(reqs)-1].Status)
	}
	if err := f.FlushLog(); err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(strings.NewReader(logBuf.String()))
	n := 0
	for {
		var r Request
		if err := dec.Decode(&r); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("JSON log line %d: %v", n, err)
		}
		if r.URI != reqs[n].URI || r.Status != reqs[n].Status || !r.Time.Equal(reqs[n].Time) {
			t.Errorf("JSON line %d: %+v, memory %+v", n, r, reqs[n])
		}
		n++
	}
	if n != len(reqs) {
		t.Errorf("%d JSON lines, want %d", n, len(reqs))
	}
}

func TestLogCap(t *testing.T) {
	l := newRequestLog(3, nil)
	for i := 0; i < 5; i++ {
		l.add(&Request{Status: i})
	}
	var got []int
	for _, r := range l.snapshot() {
		got = append(got, r.Status)
	}
	if diff := cmp.Diff([]int{2, 3, 4}, got); diff != "" {
		t.Error(diff)
	}
}

func TestRobotsMatching(t *testing.T) {
	robots := ParseRobots([]byte("User-agent: *\nDisallow: /p\nAllow: /p/\nDisallow: /*.gif$\nAllow: /x/y\nDisallow: /x/y\nCrawl-delay: 2\n\n" +
		"User-agent: Special\nuser-agent: other\nDisallow: /\nAllow: /$\nSitemap: http://a.test/s.xml\n"))
	for _, tc := range []struct {
		agent, path string
		want        bool
	}{
		{"trawl", "/", true},
		{"trawl", "/page", false},
		{"trawl", "/p/", true},
		{"trawl", "/p/a.gif", false},
		{"trawl", "/p/a.gif?x", true},
		{"trawl", "/x/y", true}, // tie: Allow wins
		{"trawl", "/robots.txt", true},
		{"SPECIAL", "/", true},
		{"special", "/a", false},
		{"other", "/a", false},
	} {
		if got := robots.Allowed(tc.agent, tc.path); got != tc.want {
			t.Errorf("Allowed(%q, %q) = %v, want %v", tc.agent, tc.path, got, tc.want)
		}
	}
	if d, ok := robots.CrawlDelay("trawl"); !ok || d != 2 {
		t.Errorf("crawl delay %v %v", d, ok)
	}
	if diff := cmp.Diff([]string{"http://a.test/s.xml"}, robots.Sitemaps); diff != "" {
		t.Error(diff)
	}
}

func FuzzParseRobots(f *testing.F) {
	f.Add([]byte("User-agent: *\nDisallow: /a*b$\nAllow: /\n"), "/ab")
	f.Add([]byte("user-agent: x\n\n\r\nsitemap: y\ncrawl-delay: z"), "/")
	f.Fuzz(func(t *testing.T, data []byte, path string) {
		r := ParseRobots(data)
		r.Allowed("trawl", path)
		r.CrawlDelay("trawl")
	})
}

func TestURIRecursion(t *testing.T) {
	for _, tc := range []struct {
		u    string
		want int
	}{
		{"http://a/", 1}, {"http://a/news/5.html", 1}, {"/deep/more/more/more/", 3},
		{"/deep2/a/b/a/b/", 2}, {"/x/a/b/c/a/b/c/a/b/c?q=1", 3}, {"/3/3.html", 1}, {"//a//a/", 2},
	} {
		if got := URIRecursion(tc.u); got != tc.want {
			t.Errorf("URIRecursion(%q) = %d, want %d", tc.u, got, tc.want)
		}
	}
}

func TestSortQueryAndCalendarExclude(t *testing.T) {
	if got := SortQuery("http://a/q/1?c=3&a=1&b=2&a=0"); got != "http://a/q/1?a=1&a=0&b=2&c=3" {
		t.Errorf("SortQuery: %s", got)
	}
	re := CalendarExclude(2024)
	goRE := regexp.MustCompile(re)
	netRE := regexp2.MustCompile(re, regexp2.None)
	for u, want := range map[string]bool{
		"http://h/cal/2024-01/": false, "http://h/cal/2024-12-31.html": false, "http://h/cal/2023-12/": true,
		"http://h/cal/2025-01-01.html": true, "http://h/cal/1999-01/": true, "http://h/cal/0204-01/": true,
	} {
		m2, _ := netRE.MatchString(u)
		if goRE.MatchString(u) != want || m2 != want {
			t.Errorf("%s: RE2 %v, .NET %v, want %v", u, goRE.MatchString(u), m2, want)
		}
	}
}

func TestHostsAndAddresses(t *testing.T) {
	f, err := New(DefaultConfig(1, 300, 2))
	if err != nil {
		t.Fatal(err)
	}
	hs := f.Hosts()
	addrs := map[string][]int{}
	for _, h := range hs {
		if !h.Addr.Is4() || h.Addr.As4()[0] != 127 {
			t.Fatalf("%s on %s", h.Name, h.Addr)
		}
		addrs[h.Addr.String()] = append(addrs[h.Addr.String()], h.Index)
	}
	if len(addrs) != 300-30 {
		t.Errorf("%d addresses for 300 hosts with 30 sharing", len(addrs))
	}
	if a, ok := f.Lookup("SITE0299.farm.test"); !ok || a != hs[299].Addr || hs[299].Addr != hs[29].Addr {
		t.Errorf("lookup site0299: %v %v", a, ok)
	}
	if _, err := New(Config{Hosts: 0, PagesPerHost: 1}); err == nil {
		t.Error("zero hosts accepted")
	}
	if _, err := ParseFeatures("robots,bogus"); err == nil {
		t.Error("unknown feature accepted")
	}
	if fs, err := ParseFeatures("common,calendar"); err != nil || fs != FeatCommon|FeatCalendar || fs.String() == "" {
		t.Errorf("ParseFeatures: %v %v", fs, err)
	}
}

func TestCrawlXML(t *testing.T) {
	f, err := New(smallConfig(29))
	if err != nil {
		t.Fatal(err)
	}
	f.setPort(8080)
	var b bytes.Buffer
	c := f.DefaultCrawl()
	c.CutOff = 1000
	if err := WriteCrawlXML(&b, c, XMLOptions{Delay: 0.5, FetchTimeout: 10}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		XMLName xml.Name `xml:"CrawlerConfig"`
		Specs   []struct {
			Name     string  `xml:"name,attr"`
			Attribs  []xattr `xml:"attrib"`
			Sections []struct {
				Name    string  `xml:"name,attr"`
				Attribs []xattr `xml:"attrib"`
			} `xml:"section"`
		} `xml:"DomainSpecification"`
	}
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Specs) != 1 || doc.Specs[0].Name != "webfarm" {
		t.Fatalf("%+v", doc)
	}
	vals := map[string]string{}
	check := func(prefix string, as []xattr) {
		for _, a := range as {
			switch a.Type {
			case "boolean":
				if v := strings.TrimSpace(a.Text); v != "yes" && v != "no" {
					t.Errorf("%s%s: boolean %q", prefix, a.Name, v)
				}
			case "integer", "real", "string":
				if len(a.Members) > 0 {
					t.Errorf("%s%s: members in a %s", prefix, a.Name, a.Type)
				}
			case "list-string":
			default:
				t.Errorf("%s%s: type %q", prefix, a.Name, a.Type)
			}
			vals[prefix+a.Name] = strings.TrimSpace(a.Text)
			if a.Type == "list-string" {
				vals[prefix+a.Name] = strings.Join(trimAll(a.Members), ",")
			}
		}
	}
	check("", doc.Specs[0].Attribs)
	for _, s := range doc.Specs[0].Sections {
		check(s.Name+"/", s.Attribs)
	}
	for k, want := range map[string]string{
		"start_uris": strings.Join(f.StartURLs(), ","), "delay": "0.5", "fetch_timeout": "10", "cut_off": "1000",
		"crawlmode/mode": "FULL", "link_extraction/img": "no", "link_extraction/a": "yes",
		"include_domains/suffix": ".farm.test", "exclude_uris/regexp": CalendarExclude(2024), "max_redirects": "10",
	} {
		if vals[k] != want {
			t.Errorf("%s = %q, want %q", k, vals[k], want)
		}
	}
}

type xattr struct {
	Name    string   `xml:"name,attr"`
	Type    string   `xml:"type,attr"`
	Text    string   `xml:",chardata"`
	Members []string `xml:"member"`
}

func trimAll(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = strings.TrimSpace(v)
	}
	return out
}
