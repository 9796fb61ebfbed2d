package nodesched

import (
	"fmt"
	"net"
	"net/http"
	"sort"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/trawl/trawl/internal/render"
)

// TestCrawlJavaScriptLinks crawls a site whose home page writes its links
// with a script: with use_javascript they are found and fetched, without
// it they are not.
func TestCrawlJavaScriptLinks(t *testing.T) {
	if _, err := render.FindBrowser(); err != nil {
		t.Skip("chromium is not installed on this machine (test.sh installs Debian's chromium)")
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
