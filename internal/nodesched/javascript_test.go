package nodesched

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/trawl/trawl/internal/render"
	"github.com/trawl/trawl/internal/stats"
	"github.com/trawl/trawl/internal/testenv"
)

// TestCrawlJavaScriptLinks crawls a site whose home page writes its links
// with a script: with use_javascript they are found and fetched, without
// it they are not.
func TestCrawlJavaScriptLinks(t *testing.T) {
	if _, err := render.FindBrowser(); err != nil {
		testenv.Missing(t, "chromium is not installed on this machine (test.sh installs Debian's chromium)")
	}
	for _, tt := range []struct {
		name string
		js   bool
		want []string
	}{
		{"use_javascript", true, []string{"/", "/js/0.html", "/js/1.html", "/js/2.html", "/robots.txt", "/static.html"}},
		{"no javascript", false, []string{"/", "/robots.txt", "/static.html"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			paths := map[string]bool{}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/favicon.ico" { // the browser's own
					mu.Lock()
					paths[r.URL.Path] = true
					mu.Unlock()
				}
				switch r.URL.Path {
				case "/robots.txt":
					http.NotFound(w, r)
				case "/":
					w.Header().Set("Content-Type", "text/html")
					fmt.Fprint(w, `<html><body><a href="/static.html">s</a><script>for (var i=0;i<3;i++){var a=document.createElement('a');a.href=['','js',i+'.html'].join('/');a.textContent='x';document.body.appendChild(a)}</script></body></html>`)
				default:
					w.Header().Set("Content-Type", "text/html")
					fmt.Fprint(w, `<html><body>leaf</body></html>`)
				}
			})}
			go srv.Serve(ln)
			t.Cleanup(func() { srv.Close() })
			// An address, not a name: the browser resolves names itself,
			// not through the multinode scheduler.
			host := ln.Addr().String()
			extra := fmt.Sprintf(`    <attrib name="use_javascript" type="boolean"> %s </attrib>`, map[bool]string{true: "yes", false: "no"}[tt.js])
			stats, _ := crawlStore(t, crawlXML("http://"+host+"/", "127.0.0.1", extra))
			mu.Lock()
			var got []string
			for p := range paths {
				got = append(got, p)
			}
			mu.Unlock()
			sort.Strings(got)
			// The browser's own requests for the page are among them: the
			// set is what the site served to the crawl.
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("paths served (-want +got):\n%s\nstats %v", d, stats)
			}
		})
	}
}

// TestCrawlJavaScriptThroughCrawl renders a page whose links are written
// by scripts loaded from other paths, on a host only the crawl's resolver
// knows. Every request of the browser goes through the crawl: the page is
// fetched once (by the crawler), the allowed script with the crawler's
// User-Agent, and the script robots.txt disallows is never asked for, so
// its links are not found. javascript_keep_html decides whether the stored
// document is the rendered DOM or the HTML as fetched.
func TestCrawlJavaScriptThroughCrawl(t *testing.T) {
	if _, err := render.FindBrowser(); err != nil {
		testenv.Missing(t, "chromium is not installed on this machine (test.sh installs Debian's chromium)")
	}
	for _, keep := range []bool{false, true} {
		t.Run(fmt.Sprintf("javascript_keep_html=%v", keep), func(t *testing.T) {
			var mu sync.Mutex
			var log []string
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				log = append(log, r.URL.Path+" "+r.UserAgent())
				mu.Unlock()
				switch r.URL.Path {
				case "/robots.txt":
					w.Header().Set("Content-Type", "text/plain")
					fmt.Fprint(w, "User-agent: *\nDisallow: /private/\n")
				case "/":
					w.Header().Set("Content-Type", "text/html")
					fmt.Fprint(w, `<html><body><p>home</p><script src="/js/links.js"></script><script src="/private/more.js"></script></body></html>`)
				case "/js/links.js":
					w.Header().Set("Content-Type", "application/javascript")
					fmt.Fprint(w, `for (var i=0;i<2;i++){var a=document.createElement('a');a.href='/made/'+i+'.html';a.textContent='m';document.body.appendChild(a)}`)
				case "/private/more.js":
					w.Header().Set("Content-Type", "application/javascript")
					fmt.Fprint(w, `var a=document.createElement('a');a.href='/hidden.html';document.body.appendChild(a)`)
				default:
					w.Header().Set("Content-Type", "text/html")
					fmt.Fprint(w, `<html><body>leaf</body></html>`)
				}
			})}
			go srv.Serve(ln)
			t.Cleanup(func() { srv.Close() })
			base := fmt.Sprintf("http://js.test:%d", ln.Addr().(*net.TCPAddr).Port)
			yn := map[bool]string{true: "yes", false: "no"}[keep]
			extra := fmt.Sprintf(`    <attrib name="use_javascript" type="boolean"> yes </attrib>
    <attrib name="javascript_keep_html" type="boolean"> %s </attrib>
    <attrib name="javascript_delay" type="real"> 0.05 </attrib>
    <attrib name="headers" type="list-string"><member> User-Agent: trawl-js-test </member></attrib>`, yn)
			stats, st := crawlStore(t, crawlXML(base+"/", "js.test", extra))
			mu.Lock()
			got := append([]string(nil), log...)
			mu.Unlock()
			sort.Strings(got)
			// links.js twice: for the browser, and as a link the crawl
			// extracted from <script src> (then refused on its type).
			want := []string{"/ trawl-js-test", "/js/links.js trawl-js-test", "/js/links.js trawl-js-test", "/made/0.html trawl-js-test", "/made/1.html trawl-js-test", "/robots.txt trawl-js-test"}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("requests served (-want +got):\n%s\nstats %v", d, stats)
			}
			if stats["errors_javascript"] != 0 {
				t.Errorf("rendering failed: %v", stats)
			}
			doc, ok, err := st.Document("acc", base+"/")
			if err != nil || !ok {
				t.Fatalf("home page not stored: %v %v", ok, err)
			}
			if rendered := strings.Contains(string(doc), `href="/made/0.html"`); rendered != keep {
				t.Errorf("stored document rendered=%v, want %v:\n%s", rendered, keep, doc)
			}
		})
	}
}

// killChildBrowsers kills the Chromium processes this test process started
// (by id), as a browser crash would end them.
func killChildBrowsers(t *testing.T) int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Errorf("read /proc: %v", err)
		return 0
	}
	n := 0
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		s := string(b)
		open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || end < open {
			continue
		}
		comm := s[open+1 : end]
		f := strings.Fields(s[end+1:])
		if len(f) < 2 || !strings.Contains(comm, "chrom") {
			continue
		}
		if ppid, _ := strconv.Atoi(f[1]); ppid == os.Getpid() {
			if syscall.Kill(pid, syscall.SIGKILL) == nil {
				n++
			}
		}
	}
	return n
}

// TestCrawlJavaScriptBrowserFailures: the browser is killed while it
// renders the home page, and another page's script never ends (under the
// render timeout). The crawl goes on with the HTML as fetched, each failure
// is counted (errors_javascript, skip code ot) and logged with its site,
// and a page rendered after both gets its script-written link found (the
// browser was started again).
func TestCrawlJavaScriptBrowserFailures(t *testing.T) {
	if _, err := render.FindBrowser(); err != nil {
		testenv.Missing(t, "chromium is not installed on this machine (test.sh installs Debian's chromium)")
	}
	var mu sync.Mutex
	paths := map[string]bool{}
	killed := 0
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths[r.URL.Path] = true
		mu.Unlock()
		switch r.URL.Path {
		case "/robots.txt":
			http.NotFound(w, r)
			return
		case "/boom.js": // asked for by the browser (through the crawl) first, then by the crawl as a link
			mu.Lock()
			if killed == 0 {
				killed += killChildBrowsers(t)
			}
			mu.Unlock()
			w.Header().Set("Content-Type", "application/javascript")
			fmt.Fprint(w, `document.write('<a href="/never.html">x</a>')`)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/":
			fmt.Fprint(w, `<html><body><a href="/hang.html">h</a><script src="/boom.js"></script></body></html>`)
		case "/hang.html":
			fmt.Fprint(w, `<html><body><a href="/after.html">a</a><script>while (true) {}</script></body></html>`)
		case "/after.html":
			fmt.Fprint(w, `<html><body><script>var a=document.createElement('a');a.href='/js-after.html';document.body.appendChild(a)</script></body></html>`)
		default:
			fmt.Fprint(w, `<html><body>leaf</body></html>`)
		}
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	base := fmt.Sprintf("http://jsfail.test:%d", ln.Addr().(*net.TCPAddr).Port)
	extra := `    <attrib name="use_javascript" type="boolean"> yes </attrib>`
	counters, logText := runAccessCrawlLog(t, crawlXML(base+"/", "jsfail.test", extra))
	mu.Lock()
	defer mu.Unlock()
	if killed == 0 {
		t.Fatal("no browser process was killed")
	}
	for _, p := range []string{"/", "/hang.html", "/after.html", "/js-after.html"} {
		if !paths[p] {
			t.Errorf("%s not fetched: the crawl did not go on (counters %v)", p, counters)
		}
	}
	if paths["/never.html"] {
		t.Error("a link written after the browser was killed was found")
	}
	if got := counters["errors_javascript"]; got != 2 {
		t.Errorf("errors_javascript %d, want 2 (crash and hang); counters %v", got, counters)
	}
	if got := docSkips(counters)[stats.DocOther]; got < 2 {
		t.Errorf("skip code ot %d, want at least 2", got)
	}
	var lines []string
	for _, l := range strings.Split(logText, "\n") {
		if strings.Contains(l, "javascript rendering failed") && strings.Contains(l, "site=jsfail.test") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 2 || !strings.Contains(lines[0], "uri="+base+"/ ") ||
		!strings.Contains(lines[1], "uri="+base+"/hang.html") || !strings.Contains(lines[1], "deadline exceeded") {
		t.Errorf("want a log line for the crash of / and one for the time-out of /hang.html, naming the site; got:\n%s", strings.Join(lines, "\n"))
	}
}

// TestCrawlJavaScriptPerSite crawls a site whose home page writes its
// links with a script, in a collection without use_javascript and a
// subcollection with it whose include_uris leave the home page out.
// MS-FSCCFG 2.2.4.33 says use_javascript does not obey include_uris and
// exclude_uris: when the subcollection's include_domains hold the site, the
// home page is rendered and the script's links are fetched; when they hold
// another host, nothing on this site is rendered.
func TestCrawlJavaScriptPerSite(t *testing.T) {
	if _, err := render.FindBrowser(); err != nil {
		testenv.Missing(t, "chromium is not installed on this machine (test.sh installs Debian's chromium)")
	}
	for _, tt := range []struct {
		name, domain string
		want         []string
	}{
		{"site in the subcollection", "127.0.0.1", []string{"/", "/js/0.html", "/js/1.html", "/js/2.html", "/robots.txt", "/static.html"}},
		{"other site", "127.0.0.9", []string{"/", "/robots.txt", "/static.html"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			paths := map[string]bool{}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/favicon.ico" { // the browser's own
					mu.Lock()
					paths[r.URL.Path] = true
					mu.Unlock()
				}
				switch r.URL.Path {
				case "/robots.txt":
					http.NotFound(w, r)
				case "/":
					w.Header().Set("Content-Type", "text/html")
					fmt.Fprint(w, `<html><body><a href="/static.html">s</a><script>for (var i=0;i<3;i++){var a=document.createElement('a');a.href=['','js',i+'.html'].join('/');a.textContent='x';document.body.appendChild(a)}</script></body></html>`)
				default:
					w.Header().Set("Content-Type", "text/html")
					fmt.Fprint(w, `<html><body>leaf</body></html>`)
				}
			})}
			go srv.Serve(ln)
			t.Cleanup(func() { srv.Close() })
			host := ln.Addr().String()
			extra := fmt.Sprintf(`    <attrib name="use_javascript" type="boolean"> no </attrib>
    <SubDomain name="scripted">
      <attrib name="use_javascript" type="boolean"> yes </attrib>
      <section name="include_domains"><attrib name="exact" type="list-string"><member> %s </member></attrib></section>
      <section name="include_uris"><attrib name="prefix" type="list-string"><member> http://%s/js/ </member></attrib></section>
    </SubDomain>`, tt.domain, host)
			stats, _ := crawlStore(t, crawlXML("http://"+host+"/", "127.0.0.1", extra))
			mu.Lock()
			var got []string
			for p := range paths {
				got = append(got, p)
			}
			mu.Unlock()
			sort.Strings(got)
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("paths served (-want +got):\n%s\nstats %v", d, stats)
			}
		})
	}
}
