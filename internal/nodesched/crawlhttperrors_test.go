package nodesched

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/trawl/trawl/internal/store"
)

// errorSite answers /gone.html 404, /teapot.html 418, /busy.html 503 and
// /flaky.html 500 the first two times then 200; "/" links to them and to
// /ok.html. It counts the requests per path.
type errorSite struct {
	mu  sync.Mutex
	req map[string]int
}

func (e *errorSite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	e.mu.Lock()
	e.req[r.URL.Path]++
	n := e.req[r.URL.Path]
	e.mu.Unlock()
	w.Header().Set("Content-Type", "text/html")
	switch r.URL.Path {
	case "/robots.txt":
		http.NotFound(w, r)
	case "/":
		fmt.Fprint(w, `<html><body><a href="/gone.html">g</a><a href="/teapot.html">t</a><a href="/busy.html">b</a><a href="/flaky.html">f</a><a href="/ok.html">o</a></body></html>`)
	case "/gone.html":
		w.WriteHeader(http.StatusNotFound)
	case "/teapot.html":
		w.WriteHeader(http.StatusTeapot)
	case "/busy.html":
		w.WriteHeader(http.StatusServiceUnavailable)
	case "/flaky.html":
		if n <= 2 {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		fmt.Fprint(w, `<html><body>up at last</body></html>`)
	default:
		fmt.Fprint(w, `<html><body>ok</body></html>`)
	}
}

// TestCrawlHTTPErrors crawls pages answering 404, 418, 503 and 500
// (then 200) under the default http_errors (MS-FSCCFG 2.2.4.12: 4xx
// DELETE:0, 5xx DELETE:10, no retry) and under a section overriding them
// per code. The verdict is the URI record's status; the number of attempts
// (RETRY) comes from the site's own count. An exact code beats the
// wildcard: the 404 override leaves 418 to the 4xx default.
func TestCrawlHTTPErrors(t *testing.T) {
	for _, tc := range []struct {
		name     string
		section  string
		status   map[string]store.Status
		requests map[string]int
		retries  int64
	}{
		{"defaults", "",
			map[string]store.Status{"/gone.html": store.StatusDeleted, "/teapot.html": store.StatusDeleted, "/busy.html": store.StatusError,
				"/flaky.html": store.StatusError, "/ok.html": store.StatusFetched},
			map[string]int{"/gone.html": 1, "/teapot.html": 1, "/busy.html": 1, "/flaky.html": 1, "/ok.html": 1}, 0},
		{"overrides", `<section name="http_errors">
      <attrib name="404" type="string"> KEEP:0 </attrib>
      <attrib name="503" type="string"> DELETE:0, RETRY:2 </attrib>
      <attrib name="5xx" type="string"> KEEP:0, RETRY:3 </attrib>
    </section>`,
			map[string]store.Status{"/gone.html": store.StatusError, "/teapot.html": store.StatusDeleted, "/busy.html": store.StatusDeleted,
				"/flaky.html": store.StatusFetched, "/ok.html": store.StatusFetched},
			// busy: the first answer and 2 retries; flaky: 500, 500, 200.
			map[string]int{"/gone.html": 1, "/teapot.html": 1, "/busy.html": 3, "/flaky.html": 3, "/ok.html": 1}, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			site := &errorSite{req: map[string]int{}}
			port := serveHandler(t, site)
			base := fmt.Sprintf("http://errors.test:%d", port)
			c := startOptCrawl(t, optXML(optCollection("err", base+"/", "errors.test", tc.section)), nil, nil)
			waitIdle(t, c.d, 60*time.Second)
			got := map[string]store.Status{}
			for p := range tc.status {
				r, ok, err := c.st.URI("err", base+p)
				if err != nil || !ok {
					t.Errorf("%s: no record (%v)", p, err)
					continue
				}
				got[p] = r.Status
			}
			if d := cmp.Diff(tc.status, got); d != "" {
				t.Errorf("statuses (-want +got):\n%s", d)
			}
			site.mu.Lock()
			reqs := map[string]int{}
			for p, n := range site.req {
				if p != "/" && p != "/robots.txt" {
					reqs[p] = n
				}
			}
			site.mu.Unlock()
			if d := cmp.Diff(tc.requests, reqs); d != "" {
				t.Errorf("requests per page (-want +got):\n%s", d)
			}
			if n := c.d.Stats()["err"]["retries"]; n != tc.retries {
				t.Errorf("retries counted %d, want %d", n, tc.retries)
			}
		})
	}
}

// authRobotsSite answers robots.txt with 401 or 403 (a protected
// robots.txt) and serves "/" linking to two pages.
func authRobotsSite(code int, served *sync.Map) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Store(r.URL.Path, true)
		if r.URL.Path == "/robots.txt" {
			w.WriteHeader(code)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<html><body>page %s <a href="/p1.html">1</a><a href="/p2.html">2</a></body></html>`, r.URL.Path)
	})
}

// TestCrawlRobotsAuthIgnore crawls sites whose robots.txt answers 401
// or 403: with robots_auth_ignore (the default) the site is crawled as if
// robots.txt allowed everything; without it, nothing but robots.txt is
// fetched and the start URI is skipped as robots-denied.
func TestCrawlRobotsAuthIgnore(t *testing.T) {
	for _, code := range []int{401, 403} {
		for _, ignore := range []bool{true, false} {
			t.Run(fmt.Sprintf("%d robots_auth_ignore=%v", code, ignore), func(t *testing.T) {
				var served sync.Map
				port := serveHandler(t, authRobotsSite(code, &served))
				base := fmt.Sprintf("http://robots.test:%d", port)
				extra := fmt.Sprintf(`<attrib name="robots_auth_ignore" type="boolean"> %s </attrib>`, map[bool]string{true: "yes", false: "no"}[ignore])
				c := startOptCrawl(t, optXML(optCollection("rb", base+"/", "robots.test", extra)), nil, nil)
				waitIdle(t, c.d, 60*time.Second)
				var got []string
				served.Range(func(k, _ any) bool { got = append(got, k.(string)); return true })
				want := []string{"/", "/p1.html", "/p2.html", "/robots.txt"}
				if !ignore {
					want = []string{"/robots.txt"}
				}
				if d := cmp.Diff(want, sortedStrings(got)); d != "" {
					t.Errorf("served (-want +got):\n%s", d)
				}
				if n := c.d.Stats()["rb"]["robots_denied"]; (n > 0) == ignore {
					t.Errorf("robots_denied %d", n)
				}
			})
		}
	}
}
