package nodesched

import (
	"fmt"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// cookieSite serves three hosts on one port. www.cookies.test/ sets three
// cookies named after the User-Agent that asked: "host" (host-only),
// "site" (Domain=cookies.test, the registrable domain) and "suffix"
// (Domain=test, a public suffix no client may accept), and links to a
// members page on each host. A members page without a "site" cookie is
// refused (403); with it, it links to a deeper page only a client with the
// cookie finds. other.test/wait.html answers once www.cookies.test/ was
// served, so a second collection starting there comes after the first got
// its cookies. Every request is logged with the cookies it carried.
type cookieSite struct {
	port   int
	served chan struct{}
	once   sync.Once
	mu     sync.Mutex
	log    []string // "UA host path cookies"
}

func (c *cookieSite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	host, _, _ := net.SplitHostPort(r.Host)
	ua := r.UserAgent()
	var cookies []string
	for _, k := range r.Cookies() {
		cookies = append(cookies, k.Name+"="+k.Value)
	}
	sort.Strings(cookies)
	if r.URL.Path != "/robots.txt" {
		c.mu.Lock()
		c.log = append(c.log, fmt.Sprintf("%s %s%s [%s]", ua, host, r.URL.Path, strings.Join(cookies, " ")))
		c.mu.Unlock()
	}
	w.Header().Set("Content-Type", "text/html")
	// The link text names the target: no two pages are duplicates.
	link := func(h, p string) string { return fmt.Sprintf(`<a href="http://%s:%d%s">%s%s</a>`, h, c.port, p, h, p) }
	switch {
	case r.URL.Path == "/robots.txt":
		http.NotFound(w, r)
	case r.URL.Path == "/" && host == "www.cookies.test":
		name := strings.TrimPrefix(ua, "trawl-")
		http.SetCookie(w, &http.Cookie{Name: "host", Value: name, Path: "/"})
		http.SetCookie(w, &http.Cookie{Name: "site", Value: name, Path: "/", Domain: "cookies.test"})
		http.SetCookie(w, &http.Cookie{Name: "suffix", Value: name, Path: "/", Domain: "test"})
		fmt.Fprintf(w, "<html><body>%s%s%s</body></html>", link("www.cookies.test", "/members/a.html"),
			link("shop.cookies.test", "/members/b.html"), link("other.test", "/members/c.html"))
		c.once.Do(func() { close(c.served) })
	case r.URL.Path == "/wait.html":
		select {
		case <-c.served:
		case <-time.After(30 * time.Second):
		}
		fmt.Fprintf(w, "<html><body>%s</body></html>", link("www.cookies.test", "/members/a.html"))
	case strings.HasPrefix(r.URL.Path, "/members/"):
		if _, err := r.Cookie("site"); err != nil {
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, "<html><body>members only</body></html>")
			return
		}
		if !strings.HasSuffix(r.URL.Path, "-deep.html") {
			fmt.Fprintf(w, "<html><body>%s</body></html>", link(host, strings.TrimSuffix(r.URL.Path, ".html")+"-deep.html"))
			return
		}
		fmt.Fprintf(w, "<html><body>deep %s%s</body></html>", host, r.URL.Path)
	default:
		http.NotFound(w, r)
	}
}

func (c *cookieSite) requests(ua string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, l := range c.log {
		if rest, ok := strings.CutPrefix(l, ua+" "); ok {
			out = append(out, rest)
		}
	}
	sort.Strings(out)
	return out
}

// TestCrawlCookies: with use_cookies a collection sends back the
// cookies a site set, as the domain rules and the public suffix list
// allow (the host's own on its host, the domain cookie on a sibling host,
// the cookie set for the public suffix "test" nowhere), and so reaches the
// members pages; without it, it sends none and is refused. A second
// collection crawling the same site after the first has its own jar: it
// carries none of the first one's cookies.
func TestCrawlCookies(t *testing.T) {
	for _, tt := range []struct {
		name    string
		cookies bool
		want    []string
	}{
		{"use_cookies", true, []string{
			"other.test/members/c.html []",
			"shop.cookies.test/members/b-deep.html [site=a]",
			"shop.cookies.test/members/b.html [site=a]",
			"www.cookies.test/ []",
			"www.cookies.test/members/a-deep.html [host=a site=a]",
			"www.cookies.test/members/a.html [host=a site=a]",
		}},
		{"no cookies", false, []string{
			"other.test/members/c.html []",
			"shop.cookies.test/members/b.html []",
			"www.cookies.test/ []",
			"www.cookies.test/members/a.html []",
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			site := &cookieSite{served: make(chan struct{})}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			site.port = ln.Addr().(*net.TCPAddr).Port
			srv := &http.Server{Handler: site}
			go srv.Serve(ln)
			t.Cleanup(func() { srv.Close() })
			yn := map[bool]string{true: "yes", false: "no"}[tt.cookies]
			opt := fmt.Sprintf(`<attrib name="use_cookies" type="boolean"> %s </attrib>
    <attrib name="cookie_timeout" type="integer"> 3600 </attrib>`, yn)
			a := optCollection("a", fmt.Sprintf("http://www.cookies.test:%d/", site.port), "test", opt)
			b := optCollection("b", fmt.Sprintf("http://other.test:%d/wait.html", site.port), "test", opt)
			c := startOptCrawl(t, optXML(a, b), nil, nil)
			waitIdle(t, c.d, 90*time.Second)
			if d := cmp.Diff(tt.want, site.requests("trawl-a")); d != "" {
				t.Errorf("requests of collection a (-want +got):\n%s", d)
			}
			wantB := []string{"other.test/wait.html []", "www.cookies.test/members/a.html []"}
			if d := cmp.Diff(wantB, site.requests("trawl-b")); d != "" {
				t.Errorf("requests of collection b, which never visited the page setting the cookies (-want +got):\n%s", d)
			}
		})
	}
}
