package nodesched

import (
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCrawlLoginLostAgain crawls a site whose pages send the crawler back
// to its login form right after a new login twice in a row (as when the
// site's other fetches use a new session up before the page is sent): only
// every third session is let through. Each page is logged in for again,
// up to three times, and fetched: every page is served, none is recorded
// as a redirect to the login form.
func TestCrawlLoginLostAgain(t *testing.T) {
	var mu sync.Mutex
	sessions := 0
	var served []string
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		switch r.URL.Path {
		case "/robots.txt":
			http.NotFound(w, r)
			return
		case "/login":
			if r.Method == http.MethodPost && r.ParseForm() == nil && r.PostForm.Get("user") == "erin" && r.PostForm.Get("password") == "open sesame" {
				sessions++
				http.SetCookie(w, &http.Cookie{Name: "SESSION", Value: strconv.Itoa(sessions), Path: "/"})
				fmt.Fprint(w, "<html><body>welcome</body></html>")
				return
			}
			fmt.Fprint(w, `<html><body><form method="post" action="/login"><input name="user"><input name="password"></form></body></html>`)
			return
		}
		n := 0
		if c, err := r.Cookie("SESSION"); err == nil {
			n, _ = strconv.Atoi(c.Value)
		}
		if n == 0 || n%3 != 0 {
			http.Redirect(w, r, "/login", http.StatusFound)
			return
		}
		served = append(served, r.URL.Path)
		w.Header().Set("Content-Type", "text/html")
		if r.URL.Path == "/" {
			fmt.Fprint(w, `<html><body><a href="/a.html">a</a> <a href="/b.html">b</a></body></html>`)
			return
		}
		fmt.Fprintf(w, "<html><body>page %s</body></html>", r.URL.Path)
	})
	hostport := fmt.Sprintf("forms.test:%d", serveHandler(t, h))
	extra := fmt.Sprintf(`<attrib name="use_cookies" type="boolean"> yes </attrib>
    <Login name="configured">
      <attrib name="scheme" type="string"> http </attrib>
      <attrib name="site" type="string"> %s </attrib>
      <attrib name="form" type="string"> /login </attrib>
      <attrib name="action" type="string"> POST </attrib>
      <section name="parameters">
        <attrib name="user" type="string"> erin </attrib>
        <attrib name="password" type="string"> open sesame </attrib>
      </section>
    </Login>`, hostport)
	counters, _ := auditCrawl(t, optXML(optCollection("login", "http://"+hostport+"/", "forms.test", extra)), "login", nil)
	mu.Lock()
	defer mu.Unlock()
	if d := cmp.Diff([]string{"/", "/a.html", "/b.html"}, sortedCopy(served)); d != "" {
		t.Errorf("pages served (-want +got):\n%s\ncounters %v", d, counters)
	}
	if sessions != 3 {
		t.Errorf("%d logins, want 3 (the third session is let through and kept)", sessions)
	}
	if counters["redirects"] != 0 || counters["errors_login"] != 0 {
		t.Errorf("redirects %d, errors_login %d: want none; counters %v", counters["redirects"], counters["errors_login"], counters)
	}
}
