package robots

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestPatternMatching(t *testing.T) {
	// The cases of Google's robots.txt documentation ("URL matching based on
	// path values"), also used by crawler-commons.
	tests := []struct {
		rule    string
		blocked []string
		allowed []string
	}{
		{"/fish", []string{"/fish", "/fish.html", "/fish/salmon.html", "/fishheads", "/fishheads/yummy.html", "/fish.php?id=anything"},
			[]string{"/Fish.asp", "/catfish", "/?id=fish", "/fis"}},
		{"/fish*", []string{"/fish", "/fish.html", "/fish/salmon.html", "/fishheads", "/fish.php?id=anything"},
			[]string{"/Fish.asp", "/catfish", "/?id=fish", "/fis"}},
		{"/fish/", []string{"/fish/", "/fish/?id=anything", "/fish/salmon.htm"}, []string{"/fish", "/fish.html", "/Fish/Salmon.asp"}},
		{"/*.php", []string{"/filename.php", "/folder/filename.php", "/folder/filename.php?parameters", "/folder/any.php.file.html", "/filename.php/"},
			[]string{"/", "/windows.PHP"}},
		{"/*.php$", []string{"/filename.php", "/folder/filename.php"},
			[]string{"/filename.php?parameters", "/filename.php/", "/filename.php5", "/windows.PHP"}},
		{"/fish*.php", []string{"/fish.php", "/fishheads/catfish.php?parameters"}, []string{"/Fish.PHP"}},
		{"/*fish*.php", []string{"/fish.php", "/superfishheads/catfish.php?parameters"}, []string{"/fishheads/catfish.htm"}},
		{"/index.cfm?fuseaction=sitesearch.results*", []string{"/index.cfm?fuseaction=sitesearch.results&type=People&qry=california&pg=2"}, nil},
		{"*", []string{"/", "/a"}, nil},
		{"/$", []string{"/"}, []string{"/a"}},
		{"/a%3cd", []string{"/a%3Cd", "/a%3cd"}, []string{"/a<d/x"}},
		{"/~mak", []string{"/%7Emak/mak.html", "/~mak"}, []string{"/%7Ejim/"}},
		{"/ümlaut", []string{"/%C3%BCmlaut", "/%c3%bcmlaut/x"}, []string{"/umlaut"}},
		{"/a b", []string{"/a%20b"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			r := Parse([]byte("User-agent: *\r\nDisallow: "+tt.rule+"\r\n")).For("anybot", "")
			for _, p := range tt.blocked {
				if r.AllowedPath(p) {
					t.Errorf("%q allowed, want blocked", p)
				}
			}
			for _, p := range tt.allowed {
				if !r.AllowedPath(p) {
					t.Errorf("%q blocked, want allowed", p)
				}
			}
		})
	}
}

// TestRFPExamples runs the examples of the 1996 robots.txt draft
// (norobots-rfc.txt), with both CRLF and mixed line endings.
func TestRFPExamples(t *testing.T) {
	crlf := "# /robots.txt for http://www.fict.org/\r\n# comments to webmaster@fict.org\r\n\r\n" +
		"User-agent: unhipbot\r\nDisallow: /\r\n\r\nUser-agent: webcrawler\r\nUser-agent: excite\r\nDisallow: \r\n\r\n" +
		"User-agent: *\r\nDisallow: /org/plans.html\r\nAllow: /org/\r\nAllow: /serv\r\nAllow: /~mak\r\nDisallow: /\r\n"
	mixed := "# /robots.txt for http://www.fict.org/\r\n# comments to webmaster@fict.org\r\n" +
		"User-agent: unhipbot\nDisallow: /\r\r\nUser-agent: webcrawler\nUser-agent: excite\rDisallow: \u0085\r" +
		"User-agent: *\r\nDisallow: /org/plans.html\nAllow: /org/\rAllow: /serv\r\nAllow: /~mak\nDisallow: /\r\n"
	paths := []string{"/", "/index.html", "/robots.txt", "/server.html", "/services/fast.html", "/services/slow.html",
		"/orgo.gif", "/org/about.html", "/org/plans.html", "/%7Ejim/jim.html", "/%7Emak/mak.html"}
	want := map[string][]bool{
		"unhipbot":   {false, false, true, false, false, false, false, false, false, false, false},
		"webcrawler": {true, true, true, true, true, true, true, true, true, true, true},
		"excite":     {true, true, true, true, true, true, true, true, true, true, true},
		"unknown":    {false, false, true, true, true, true, false, true, false, false, true},
	}
	for name, body := range map[string]string{"crlf": crlf, "mixed": mixed} {
		f := Parse([]byte(body))
		for token, w := range want {
			t.Run(name+"/"+token, func(t *testing.T) {
				r := f.For(token, "")
				for i, p := range paths {
					if got := r.AllowedPath(p); got != w[i] {
						t.Errorf("%s: Allowed = %v, want %v", p, got, w[i])
					}
				}
			})
		}
	}
}

func TestGroups(t *testing.T) {
	tests := []struct {
		name, body, token string
		checks            []check
	}{
		{"agent not listed allows", "User-agent: crawler1\nDisallow: /index.html\nAllow: /\n\nUser-agent: crawler2\nDisallow: /", "crawler3",
			[]check{{"/anypage.html", true}, {"/index.html", true}}},
		{"empty file", "", "x", []check{{"/", true}}},
		{"comments only", "#user-agent: a\n#disallow: /\n", "a", []check{{"/", true}}},
		{"rules before user-agent ignored", "Disallow: /\nUser-agent: *\nAllow: /", "a", []check{{"/x", true}}},
		{"allow wins tie", "User-agent: *\nDisallow: /fish\nAllow: /fish\n", "a", []check{{"/fish", true}}},
		{"product token prefix of line", "User-agent: Googlebot/2.1\nDisallow: /", "googlebot", []check{{"/", false}}},
		{"token compared case-insensitively", "User-agent: TRAWL\nDisallow: /x", "Trawl", []check{{"/x", false}, {"/y", true}}},
		{"longer token does not match", "User-agent: crawlerbot\nDisallow: /foo/bar\n\nUser-agent: crawler\nAllow: /foo/bar\n", "crawler", []check{{"/foo/bar", true}}},
		{"order independent", "User-agent: crawler\nAllow: /foo/bar\n\nUser-agent: crawlerbot\nDisallow: /foo/bar\n", "crawlerbot", []check{{"/foo/bar", false}}},
		{"full UA string does not match token", "User-agent: Mozilla/5.0 (compatible; Butterfly/1.0)\nDisallow: /", "butterfly", []check{{"/", true}}},
		{"specific group replaces wildcard", "User-agent: *\nAllow: /\nUser-agent: anybot\nDisallow: /search", "anybot", []check{{"/search", false}, {"/home", true}}},
		{"wildcard group when not listed", "User-agent: *\nAllow: /\nUser-agent: anybot\nDisallow: /search", "foobot", []check{{"/search", true}}},
		{"sitemap does not end a group", "User-agent: a\nSitemap: /s.xml\nUser-agent: b\nDisallow: /x", "a", []check{{"/x", false}}},
		{"unknown record does not end a group", "User-agent: a\nFoo: bar\nUser-agent: b\nDisallow: /x", "a", []check{{"/x", false}}},
		{"path after rule ignored trailing words", "User-agent: *\nDisallow: /a junk\n", "x", []check{{"/a", false}, {"/junk", true}}},
		{"relative pattern gets slash", "User-agent: *\nDisallow: private\n", "x", []check{{"/private/x", false}}},
		{"robots.txt always allowed", "User-agent: *\nDisallow: /", "x", []check{{"/robots.txt", true}, {"http://a.com/robots.txt", true}}},
		{"query in URL", "User-agent: *\nDisallow: /*?", "x", []check{{"http://a.com/p?q=1", false}, {"http://a.com/p", true}}},
		{"fragment ignored", "User-agent: *\nDisallow: /a$", "x", []check{{"http://a.com/a#frag", false}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Parse([]byte(tt.body)).For(tt.token, "")
			for _, c := range tt.checks {
				if got := r.Allowed(c.url); got != c.allow {
					t.Errorf("Allowed(%q) = %v, want %v", c.url, got, c.allow)
				}
			}
		})
	}
}

func TestCrawlDelay(t *testing.T) {
	body := "User-Agent: bingbot\r\nCrawl-delay: 1\r\n\r\nUser-Agent: msnbot\r\nCrawl-delay: 2\r\n\r\n" +
		"User-Agent: pinterestbot\r\nCrawl-delay: 0.2\r\n\r\nUser-agent: *\r\nDisallow: /login\r\n" +
		"Sitemap: http://www.example.com/sitemap.xml\r\nDisallow: /assets/"
	f := Parse([]byte(body))
	for token, want := range map[string]time.Duration{"bingbot": time.Second, "msnbot": 2 * time.Second, "pinterestbot": 200 * time.Millisecond, "anybot": -1} {
		r := f.For(token, "")
		d, ok := r.CrawlDelay()
		if want < 0 && ok || want >= 0 && d != want {
			t.Errorf("%s: crawl delay %v %v, want %v", token, d, ok, want)
		}
		if r.Allowed("/login") || r.Allowed("/assets/") || !r.Allowed("/") {
			t.Errorf("%s: rules not shared by the merged group", token)
		}
	}
	r := Parse([]byte("User-agent: *\nCrawl-delay: 0.5\nDisallow:\n")).For("bixo", "")
	if d, _ := r.CrawlDelay(); d != 500*time.Millisecond {
		t.Errorf("fractional delay = %v", d)
	}
	if got := r.Delay(60*time.Second, true); got != 60*time.Second {
		t.Errorf("Delay keeps the longer configured delay: %v", got)
	}
	r = Parse([]byte("User-agent: *\nCrawl-delay: 90\n")).For("x", "")
	if got := r.Delay(60*time.Second, true); got != 90*time.Second {
		t.Errorf("Delay with obey = %v", got)
	}
	if got := r.Delay(60*time.Second, false); got != 60*time.Second {
		t.Errorf("Delay without obey = %v", got)
	}
	for _, bad := range []string{"-1", "abc", "NaN"} {
		if _, ok := Parse([]byte("User-agent: *\nCrawl-delay: "+bad)).For("x", "").CrawlDelay(); ok {
			t.Errorf("Crawl-delay %q accepted", bad)
		}
	}
	if d, _ := Parse([]byte("User-agent: *\nCrawl-delay: 1e12")).For("x", "").CrawlDelay(); d != maxCrawlDelay {
		t.Errorf("huge delay = %v, want clamp %v", d, maxCrawlDelay)
	}
}

func TestMaxFileSize(t *testing.T) {
	var b bytes.Buffer
	b.WriteString("User-agent: *\n")
	for b.Len() < MaxFileSize {
		b.WriteString("Disallow: /padding/padding/padding\n")
	}
	b.WriteString("Disallow: /beyond\n")
	r := Parse(b.Bytes()).For("x", "")
	if !r.Allowed("/beyond") {
		t.Error("a rule after 500 KiB was applied")
	}
	if r.Allowed("/padding/padding/padding") {
		t.Error("rules within 500 KiB lost")
	}
}

func TestFromFetch(t *testing.T) {
	body := []byte("User-agent: *\nDisallow: /private\n")
	tests := []struct {
		name      string
		res       FetchResult
		policy    Policy
		mode      Mode
		temporary bool
	}{
		{"200 parsed", FetchResult{Status: 200, Body: body}, DefaultPolicy, ModeRules, false},
		{"404 allow all", FetchResult{Status: 404}, DefaultPolicy, ModeAllowAll, false},
		{"410 allow all", FetchResult{Status: 410}, DefaultPolicy, ModeAllowAll, false},
		{"401 ignored by default", FetchResult{Status: 401}, DefaultPolicy, ModeAllowAll, false},
		{"403 ignored by default", FetchResult{Status: 403}, DefaultPolicy, ModeAllowAll, false},
		{"401 not ignored", FetchResult{Status: 401}, Policy{AuthIgnore: false}, ModeDisallowAll, false},
		{"403 not ignored", FetchResult{Status: 403}, Policy{AuthIgnore: false}, ModeDisallowAll, false},
		{"429 disallow", FetchResult{Status: 429}, DefaultPolicy, ModeDisallowAll, true},
		{"500 disallow", FetchResult{Status: 500}, DefaultPolicy, ModeDisallowAll, true},
		{"503 disallow", FetchResult{Status: 503}, DefaultPolicy, ModeDisallowAll, true},
		{"timeout disallow by default", FetchResult{TimedOut: true, Err: context.DeadlineExceeded}, DefaultPolicy, ModeDisallowAll, true},
		{"timeout ignored", FetchResult{TimedOut: true, Err: context.DeadlineExceeded}, Policy{AuthIgnore: true, TimeoutIgnore: true}, ModeAllowAll, false},
		{"network error", FetchResult{Err: errors.New("connection refused")}, Policy{TimeoutIgnore: true}, ModeDisallowAll, true},
		{"too many redirects", FetchResult{Status: 302, TooManyRedirects: true, Err: errors.New("x")}, DefaultPolicy, ModeAllowAll, false},
		{"unfollowed redirect", FetchResult{Status: 301}, DefaultPolicy, ModeAllowAll, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := FromFetch(tt.res, "trawl", tt.policy)
			if r.Mode != tt.mode || r.Temporary != tt.temporary {
				t.Fatalf("mode %v temporary %v (%s), want %v %v", r.Mode, r.Temporary, r.Reason, tt.mode, tt.temporary)
			}
			wantPrivate := tt.mode == ModeAllowAll
			if got := r.Allowed("http://a.com/private"); got != wantPrivate {
				t.Errorf("Allowed(/private) = %v, want %v", got, wantPrivate)
			}
			if !r.Allowed("http://a.com/robots.txt") {
				t.Error("/robots.txt must stay allowed")
			}
		})
	}
}

func TestProductToken(t *testing.T) {
	for in, want := range map[string]string{"trawl/1.0 (+http://x/bot)": "trawl", " Googlebot-Image/1.0": "googlebot-image", "*": "*", "my_bot2": "my_bot2", "(x)": ""} {
		if got := ProductToken(in); got != want {
			t.Errorf("ProductToken(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSiteKey(t *testing.T) {
	tests := []struct{ in, key, robots string }{
		{"http://Example.COM/a/b?c", "http://example.com:80", "http://example.com/robots.txt"},
		{"https://example.com:443/", "https://example.com:443", "https://example.com/robots.txt"},
		{"http://example.com:8080/x", "http://example.com:8080", "http://example.com:8080/robots.txt"},
		{"http://[::1]:8080/x", "http://[::1]:8080", "http://[::1]:8080/robots.txt"},
		{"http://[::1]/x", "http://[::1]:80", "http://[::1]/robots.txt"},
	}
	for _, tt := range tests {
		key, err := SiteKey(tt.in)
		if err != nil || key != tt.key {
			t.Errorf("SiteKey(%q) = %q, %v; want %q", tt.in, key, err, tt.key)
		}
		ru, err := RobotsURL(tt.in)
		if err != nil || ru != tt.robots {
			t.Errorf("RobotsURL(%q) = %q, %v; want %q", tt.in, ru, err, tt.robots)
		}
	}
	for _, bad := range []string{"ftp://a.com/", "/relative", "http://", "::"} {
		if _, err := SiteKey(bad); err == nil || !strings.HasPrefix(err.Error(), "robots: ") {
			t.Errorf("SiteKey(%q) err = %v", bad, err)
		}
	}
}

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func TestCacheTTL(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	var loads atomic.Int32
	status := atomic.Int32{}
	status.Store(200)
	c := NewCache(CacheOptions{
		Token: "trawl", TTL: time.Hour, ErrorTTL: time.Minute, Policy: DefaultPolicy, Now: clock.Now,
		Load: func(ctx context.Context, u string) FetchResult {
			loads.Add(1)
			if u != "http://a.com/robots.txt" {
				t.Errorf("loader asked for %q", u)
			}
			return FetchResult{Status: int(status.Load()), Body: []byte("User-agent: trawl\nDisallow: /x\nSitemap: /s.xml")}
		},
	})
	ctx := context.Background()
	get := func() *Rules {
		t.Helper()
		r, err := c.Get(ctx, "http://a.com/page")
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	r := get()
	if r.Allowed("http://a.com/x") || loads.Load() != 1 {
		t.Fatalf("first get: allowed /x=%v loads=%d", r.Allowed("/x"), loads.Load())
	}
	if len(r.Sitemaps) != 1 || r.Sitemaps[0] != "http://a.com/s.xml" {
		t.Errorf("sitemaps %v", r.Sitemaps)
	}
	clock.Add(59 * time.Minute)
	get()
	if loads.Load() != 1 {
		t.Fatalf("refetched before TTL: %d loads", loads.Load())
	}
	clock.Add(2 * time.Minute)
	// The site now fails: the previous file keeps applying (RFC 9309 2.3.1.4)
	// and is retried after ErrorTTL.
	status.Store(503)
	r = get()
	if loads.Load() != 2 || r.Mode != ModeRules || r.Allowed("/x") {
		t.Fatalf("after 503: loads=%d mode=%v", loads.Load(), r.Mode)
	}
	clock.Add(30 * time.Second)
	get()
	if loads.Load() != 2 {
		t.Fatal("error retried before ErrorTTL")
	}
	clock.Add(31 * time.Second)
	status.Store(404)
	r = get()
	if loads.Load() != 3 || r.Mode != ModeAllowAll || !r.Allowed("/x") {
		t.Fatalf("after 404: loads=%d mode=%v", loads.Load(), r.Mode)
	}
	if _, ok := c.Lookup("http://b.com/"); ok {
		t.Error("Lookup of an unknown site succeeded")
	}
	if _, ok := c.Lookup("http://a.com:80/other"); !ok {
		t.Error("Lookup with explicit default port missed")
	}
}

func TestCacheStaleLimit(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	c := NewCache(CacheOptions{Token: "trawl", TTL: time.Hour, MaxStale: 2 * time.Hour, Now: clock.Now})
	good := Parse([]byte("User-agent: *\nDisallow: /x")).For("trawl", "")
	if _, err := c.Put("http://a.com/", good); err != nil {
		t.Fatal(err)
	}
	clock.Add(3 * time.Hour)
	bad := FromFetch(FetchResult{Status: 500}, "trawl", DefaultPolicy)
	r, _ := c.Put("http://a.com/", bad)
	if r.Mode != ModeDisallowAll {
		t.Errorf("stale copy older than MaxStale used: %v", r.Mode)
	}
	// No earlier copy at all: disallow.
	r, _ = c.Put("http://new.com/", bad)
	if r.Mode != ModeDisallowAll {
		t.Errorf("new site on 500: %v", r.Mode)
	}
}

func TestCacheBounded(t *testing.T) {
	c := NewCache(CacheOptions{MaxEntries: 3})
	for _, h := range []string{"a", "b", "c", "d", "e"} {
		if _, err := c.Put("http://"+h+".com/", AllowAll(404, "")); err != nil {
			t.Fatal(err)
		}
	}
	if c.Len() != 3 {
		t.Errorf("Len = %d, want 3", c.Len())
	}
	if _, ok := c.Lookup("http://a.com/"); ok {
		t.Error("oldest entry not evicted")
	}
	if _, ok := c.Lookup("http://e.com/"); !ok {
		t.Error("newest entry missing")
	}
}

func TestCacheSingleFlight(t *testing.T) {
	release := make(chan struct{})
	var loads atomic.Int32
	c := NewCache(CacheOptions{Token: "trawl", Load: func(ctx context.Context, u string) FetchResult {
		loads.Add(1)
		<-release
		return FetchResult{Status: 200, Body: []byte("User-agent: *\nDisallow: /")}
	}})
	var wg sync.WaitGroup
	errs := make(chan error, 10)
	for i := 0; i < 10; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := c.Get(context.Background(), "http://a.com/x")
			if err == nil && r.Allowed("/y") {
				err = errors.New("rules wrong")
			}
			errs <- err
		}()
	}
	// A caller whose context ends stops waiting without affecting others.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Get(ctx, "http://a.com/x"); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled Get: %v", err)
	}
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if n := loads.Load(); n != 1 {
		t.Errorf("%d loads, want 1", n)
	}
	if _, err := NewCache(CacheOptions{}).Get(context.Background(), "http://a.com/"); err == nil {
		t.Error("Get without loader succeeded")
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("User-agent: *\nDisallow: *.gif$\nDisallow: /example/\nAllow: /publications/\n\nUser-Agent: foobot\nDisallow:/\nAllow:/example/page.html\nAllow:/example/allowed.gif\n"), "/example/page.html")
	f.Add([]byte("user-agent: ExampleBot\ndisallow: /foo\ndisallow: /bar\n\nuser-agent: ExampleBot\ndisallow: /baz\n"), "/baz")
	f.Add([]byte("User-Agent: foobot\nAllow: /example/page/\nDisallow: /example/page/disallowed.gif"), "/example/page/disallowed.gif")
	f.Add([]byte("\xef\xbb\xbfUser-agent: *\r\nCrawl-delay: 0.5\rSitemap: /s.xml\nDisallow: /a%2f%7e*b$"), "/a%2F~xb")
	f.Add([]byte("\xff\xfeU\x00s\x00"), "/")
	f.Fuzz(func(t *testing.T, data []byte, path string) {
		file := Parse(data)
		for _, token := range []string{"foobot", "*", ""} {
			r := file.For(token, "http://example.com/robots.txt")
			_ = r.AllowedPath(path)
			_ = r.Allowed("http://example.com" + path)
			if !r.Allowed("http://example.com/robots.txt") {
				t.Fatal("/robots.txt disallowed")
			}
		}
	})
}
