package robots

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/fetch"
)

// TestFetchLoader runs the whole chain over real HTTP: each virtual site is a
// path prefix, the site's behaviour chosen by the Host header.
func TestFetchLoader(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := strings.Split(r.Host, ":")[0]
		if ua := r.Header.Get("User-Agent"); ua != "trawl/1.0" {
			t.Errorf("User-Agent %q", ua)
		}
		switch {
		case host == "ok.test":
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprint(w, "User-agent: trawl\nDisallow: /private\nCrawl-delay: 2\nSitemap: /sitemap.xml\n")
		case host == "html.test": // served with a type allowed_types would refuse
			w.Header().Set("Content-Type", "application/octet-stream")
			fmt.Fprint(w, "User-agent: *\nDisallow: /\n")
		case host == "missing.test":
			http.NotFound(w, r)
		case host == "auth.test":
			w.WriteHeader(http.StatusForbidden)
		case host == "broken.test":
			w.WriteHeader(http.StatusServiceUnavailable)
		case strings.HasPrefix(host, "redir"):
			var n int
			fmt.Sscanf(r.URL.Path, "/robots.txt%d", &n)
			limit := 3
			if host == "redirmany.test" {
				limit = 6
			}
			if n < limit {
				http.Redirect(w, r, fmt.Sprintf("/robots.txt%d", n+1), http.StatusMovedPermanently)
				return
			}
			fmt.Fprint(w, "User-agent: *\nDisallow: /after-redirects\n")
		case host == "slow.test":
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}
	}))
	defer srv.Close()
	base := fetch.DefaultOptions()
	base.UserAgent = "trawl/1.0"
	base.Dial = func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, srv.Listener.Addr().String())
	}
	main, err := fetch.New(base)
	if err != nil {
		t.Fatal(err)
	}
	ro := FetcherOptions(base, 300*time.Millisecond)
	ro.Transport = main.Transport()
	rf, err := fetch.New(ro)
	if err != nil {
		t.Fatal(err)
	}
	defer rf.CloseIdle()

	tests := []struct {
		site      string
		policy    Policy
		mode      Mode
		allowed   []string
		forbidden []string
	}{
		{"ok.test", DefaultPolicy, ModeRules, []string{"/public"}, []string{"/private/x"}},
		{"html.test", DefaultPolicy, ModeRules, nil, []string{"/x"}},
		{"missing.test", DefaultPolicy, ModeAllowAll, []string{"/private"}, nil},
		{"auth.test", DefaultPolicy, ModeAllowAll, []string{"/x"}, nil},
		{"auth.test", Policy{AuthIgnore: false}, ModeDisallowAll, nil, []string{"/x"}},
		{"broken.test", DefaultPolicy, ModeDisallowAll, nil, []string{"/x"}},
		{"redir.test", DefaultPolicy, ModeRules, []string{"/x"}, []string{"/after-redirects"}},
		{"redirmany.test", DefaultPolicy, ModeAllowAll, []string{"/after-redirects"}, nil},
		{"slow.test", DefaultPolicy, ModeDisallowAll, nil, []string{"/x"}},
		{"slow.test", Policy{AuthIgnore: true, TimeoutIgnore: true}, ModeAllowAll, []string{"/x"}, nil},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%+v", tt.site, tt.policy), func(t *testing.T) {
			c := NewCache(CacheOptions{Token: "trawl", Policy: tt.policy, Load: FetchLoader(rf)})
			r, err := c.Get(context.Background(), "http://"+tt.site+"/index.html")
			if err != nil {
				t.Fatal(err)
			}
			if r.Mode != tt.mode {
				t.Fatalf("mode %v (%s), want %v", r.Mode, r.Reason, tt.mode)
			}
			for _, p := range tt.allowed {
				if !r.AllowedPath(p) {
					t.Errorf("%s disallowed", p)
				}
			}
			for _, p := range tt.forbidden {
				if r.AllowedPath(p) {
					t.Errorf("%s allowed", p)
				}
			}
			if tt.site == "ok.test" {
				if d, _ := r.CrawlDelay(); d != 2*time.Second {
					t.Errorf("crawl delay %v", d)
				}
				if len(r.Sitemaps) != 1 || r.Sitemaps[0] != "http://ok.test/sitemap.xml" {
					t.Errorf("sitemaps %v", r.Sitemaps)
				}
			}
		})
	}
}
