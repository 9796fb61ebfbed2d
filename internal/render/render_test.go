package render

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/trawl/trawl/internal/testenv"
)

func browser(t *testing.T) string {
	path, err := FindBrowser()
	if err != nil {
		testenv.Missing(t, "chromium is not installed on this machine (test.sh installs Debian's chromium)")
	}
	return path
}

func serve(t *testing.T, h http.Handler) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

func TestRenderScriptLinks(t *testing.T) {
	p := &Pool{ExecPath: browser(t), MaxTabs: 2, Timeout: 30 * time.Second}
	defer p.Close()
	base := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/late":
			fmt.Fprint(w, `<html><body><script>setTimeout(function(){var a=document.createElement('a');a.href='/late-link.html';document.body.appendChild(a)},200)</script></body></html>`)
		case "/hang":
			time.Sleep(5 * time.Second)
		default:
			fmt.Fprint(w, `<html><body><script>for (var i=0;i<3;i++){var a=document.createElement('a');a.href='/js/'+i+'.html';a.textContent='x';document.body.appendChild(a)}</script></body></html>`)
		}
	}))
	for _, tc := range []struct {
		path  string
		delay time.Duration
		want  []string
	}{
		{"/", 0, []string{`href="/js/0.html"`, `href="/js/1.html"`, `href="/js/2.html"`}},
		{"/late", time.Second, []string{`href="/late-link.html"`}},
	} {
		t.Run(tc.path, func(t *testing.T) {
			html, err := p.Render(context.Background(), base+tc.path, tc.delay)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(html, w) {
					t.Errorf("rendered DOM lacks %s:\n%s", w, html)
				}
			}
		})
	}
	t.Run("hung page times out, pool goes on", func(t *testing.T) {
		hp := &Pool{ExecPath: p.ExecPath, MaxTabs: 1, Timeout: 2 * time.Second}
		defer hp.Close()
		start := time.Now()
		if _, err := hp.Render(context.Background(), base+"/hang", 0); err == nil {
			t.Fatal("hung page rendered")
		}
		if d := time.Since(start); d > 15*time.Second {
			t.Errorf("render of a hung page took %v", d)
		}
		html, err := hp.Render(context.Background(), base+"/", 0)
		if err != nil || !strings.Contains(html, "/js/0.html") {
			t.Errorf("render after a timeout: %v %q", err, html)
		}
	})
}

// TestRenderThroughFetch renders a page of a host no resolver knows: the
// page comes from the job, its scripts from the job's Fetch, which refuses
// one of them; the browser itself reaches nothing.
func TestRenderThroughFetch(t *testing.T) {
	p := &Pool{ExecPath: browser(t), MaxTabs: 1, Timeout: 30 * time.Second, Isolated: true}
	defer p.Close()
	page := `<html><body><script src="/a.js"></script><script src="/blocked.js"></script><script src="http://other.invalid/c.js"></script></body></html>`
	scripts := map[string]string{
		"http://js.invalid/a.js":       `document.write('<a href="/from-a.html">a</a>')`,
		"http://js.invalid/blocked.js": `document.write('<a href="/from-blocked.html">b</a>')`,
		"http://other.invalid/c.js":    `document.write('<a href="/from-c.html">c</a>')`,
	}
	var mu sync.Mutex
	var asked []string
	fetch := func(ctx context.Context, r *Request) (*Response, error) {
		mu.Lock()
		asked = append(asked, r.Type+" "+r.URL)
		mu.Unlock()
		if strings.HasSuffix(r.URL, "/blocked.js") {
			return nil, errors.New("robots.txt disallows it")
		}
		body, ok := scripts[r.URL]
		if !ok {
			return &Response{Status: 404}, nil
		}
		return &Response{Status: 200, Header: http.Header{"Content-Type": {"application/javascript"}}, Body: []byte(body)}, nil
	}
	html, err := p.RenderJob(context.Background(), Job{URL: "http://js.invalid/", Body: []byte(page), ContentType: "text/html", Fetch: fetch})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`href="/from-a.html"`, `href="/from-c.html"`} {
		if !strings.Contains(html, want) {
			t.Errorf("rendered DOM lacks %s:\n%s", want, html)
		}
	}
	if strings.Contains(html, "from-blocked") {
		t.Errorf("a refused script ran:\n%s", html)
	}
	mu.Lock()
	defer mu.Unlock()
	sort.Strings(asked)
	want := []string{"Script http://js.invalid/a.js", "Script http://js.invalid/blocked.js", "Script http://other.invalid/c.js"}
	var scriptsAsked []string
	for _, a := range asked {
		if strings.HasPrefix(a, "Script ") {
			scriptsAsked = append(scriptsAsked, a)
		}
	}
	if d := cmp.Diff(want, scriptsAsked); d != "" {
		t.Errorf("requests handed to Fetch (-want +got):\n%s\nall: %v", d, asked)
	}
	// Without Fetch, the isolated browser cannot load the page at all.
	if html, err := p.Render(context.Background(), "http://js.invalid/", 0); err == nil && strings.Contains(html, "from-a") {
		t.Errorf("isolated browser fetched by itself: %s", html)
	}
}
