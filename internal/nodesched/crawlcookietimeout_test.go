package nodesched

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// gateSite is a chain of pages: "/" sets a session cookie S (no expiry)
// and a persistent cookie P (Max-Age one day) and links to /a.html, which
// links to /gate.html, which links to /b.html. /gate.html is answered only
// when the test opens the gate, so the test can move the crawl's clock
// between the requests for /gate.html and /b.html. Every request is
// logged with the cookies it carried.
type gateSite struct {
	arrived chan struct{} // closed when /gate.html is asked for
	open    chan struct{} // closed by the test
	once    sync.Once

	mu  sync.Mutex
	log []string // "path [cookies]"
}

func (s *gateSite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/robots.txt" {
		http.NotFound(w, r)
		return
	}
	var cookies []string
	for _, c := range r.Cookies() {
		cookies = append(cookies, c.Name+"="+c.Value)
	}
	sort.Strings(cookies)
	s.mu.Lock()
	s.log = append(s.log, fmt.Sprintf("%s [%s]", r.URL.Path, strings.Join(cookies, " ")))
	s.mu.Unlock()
	w.Header().Set("Content-Type", "text/html")
	switch r.URL.Path {
	case "/":
		http.SetCookie(w, &http.Cookie{Name: "S", Value: "1", Path: "/"})
		http.SetCookie(w, &http.Cookie{Name: "P", Value: "1", Path: "/", MaxAge: 86400})
		fmt.Fprint(w, `<html><body><p>home</p><a href="/a.html">a</a></body></html>`)
	case "/a.html":
		fmt.Fprint(w, `<html><body><p>page a</p><a href="/gate.html">gate</a></body></html>`)
	case "/gate.html":
		s.once.Do(func() { close(s.arrived) })
		select {
		case <-s.open:
		case <-r.Context().Done():
			return
		}
		fmt.Fprint(w, `<html><body><p>gate</p><a href="/b.html">b</a></body></html>`)
	case "/b.html":
		fmt.Fprint(w, `<html><body><p>page b</p></body></html>`)
	default:
		http.NotFound(w, r)
	}
}

func (s *gateSite) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.log...)
}

// TestCrawlCookieTimeout crawls a site whose home page sets a session
// cookie and a persistent one, on an injected clock that the test moves
// two minutes ahead while the crawl waits for /gate.html. With
// cookie_timeout 60 the session cookie is gone when /b.html is asked for
// (the persistent one is still sent); with cookie_timeout 3600 both are
// still sent. Before the clock moves every request carries both.
func TestCrawlCookieTimeout(t *testing.T) {
	for _, tt := range []struct {
		timeout int
		last    string
	}{
		{60, "/b.html [P=1]"},
		{3600, "/b.html [P=1 S=1]"},
	} {
		t.Run(fmt.Sprintf("cookie_timeout=%d", tt.timeout), func(t *testing.T) {
			site := &gateSite{arrived: make(chan struct{}), open: make(chan struct{})}
			var openOnce sync.Once
			release := func() { openOnce.Do(func() { close(site.open) }) }
			t.Cleanup(release) // before the server closes (cleanups run last first)
			base := fmt.Sprintf("http://cookies.test:%d", serveHandler(t, site))
			extra := fmt.Sprintf(`    <attrib name="use_cookies" type="boolean"> yes </attrib>
    <attrib name="cookie_timeout" type="integer"> %d </attrib>`, tt.timeout)
			clock := &shiftClock{}
			c := startOptCrawl(t, optXML(optCollection("ck", base+"/", "cookies.test", extra)), clock.now, nil)
			select {
			case <-site.arrived:
			case <-time.After(60 * time.Second):
				t.Fatalf("/gate.html never asked for; requests %v", site.requests())
			}
			clock.mu.Lock()
			clock.off += 2 * time.Minute
			clock.mu.Unlock()
			release()
			waitIdle(t, c.d, 60*time.Second)
			want := []string{"/ []", "/a.html [P=1 S=1]", "/gate.html [P=1 S=1]", tt.last}
			if d := cmp.Diff(want, site.requests()); d != "" {
				t.Errorf("requests with their cookies (-want +got):\n%s", d)
			}
		})
	}
}
