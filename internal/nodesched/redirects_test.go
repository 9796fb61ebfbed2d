package nodesched

import (
	"fmt"
	"net"
	"net/http"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRedirectCountMinimumOverPaths: a URL reached through redirect
// chains of different lengths counts the shortest for max_redirects (2
// here). /t is reached by /long1 -> /long2 -> /t (2 redirects) before
// /short -> /t (1 redirect), which is found three pages deeper; /t
// redirects to /final, which is within max_redirects only through the
// short chain. /final must be fetched, and no URL twice: the shorter
// chain takes /t's stored redirect target again instead of asking for /t.
func TestRedirectCountMinimumOverPaths(t *testing.T) {
	var mu sync.Mutex
	got := map[string]int{}
	page := func(w http.ResponseWriter, links ...string) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html><body>")
		for _, l := range links {
			fmt.Fprintf(w, `<a href="%s">%s</a> `, l, l)
		}
		fmt.Fprint(w, "</body></html>")
	}
	redirects := map[string]string{"/long1": "/long2", "/long2": "/t", "/short": "/t", "/t": "/final"}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got[r.URL.Path]++
		mu.Unlock()
		if to, ok := redirects[r.URL.Path]; ok {
			http.Redirect(w, r, to, http.StatusFound)
			return
		}
		switch r.URL.Path {
		case "/":
			page(w, "/long1", "/p1")
		case "/p1":
			page(w, "/p2")
		case "/p2":
			page(w, "/p3")
		case "/p3":
			page(w, "/short")
		case "/final":
			page(w)
		default:
			http.NotFound(w, r)
		}
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	host := fmt.Sprintf("redirs.test:%d", ln.Addr().(*net.TCPAddr).Port)
	stats := runAccessCrawl(t, crawlXML("http://"+host+"/", "redirs.test", `    <attrib name="max_redirects" type="integer"> 2 </attrib>
    <attrib name="robots" type="boolean"> no </attrib>`))
	want := map[string]int{"/": 1, "/long1": 1, "/long2": 1, "/t": 1, "/p1": 1, "/p2": 1, "/p3": 1, "/short": 1, "/final": 1}
	mu.Lock()
	defer mu.Unlock()
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("requests per path (-want +got):\n%s", d)
	}
	t.Logf("re-extractions %d", stats["reextracted"])
}
