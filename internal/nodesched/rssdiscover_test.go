package nodesched

import (
	"fmt"
	"net/http"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/trawl/trawl/internal/store"
)

// discoverSite is a site whose feed is announced only by a <link
// rel="alternate" type="application/rss+xml"> in a page: "/" links to
// /news/old.html, which announces /feed.rss; the feed lists old.html (30
// days old) and fresh.html (an hour old), which no page links to.
type discoverSite struct {
	mu    sync.Mutex
	paths map[string]int
	now   time.Time
	base  string
}

func (d *discoverSite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	d.mu.Lock()
	d.paths[r.URL.Path]++
	d.mu.Unlock()
	switch r.URL.Path {
	case "/robots.txt":
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "User-agent: *\nAllow: /\n")
	case "/":
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<html><body><p>home</p><a href="/news/old.html">old news</a></body></html>`)
	case "/news/old.html":
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<html><head><link rel="alternate" type="application/rss+xml" title="news" href="/feed.rss"></head><body><p>an old story</p></body></html>`)
	case "/news/fresh.html":
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<html><body><p>a fresh story</p></body></html>`)
	case "/feed.rss":
		w.Header().Set("Content-Type", "application/rss+xml")
		item := func(p string, age time.Duration) string {
			return fmt.Sprintf("<item><title>%s</title><link>%s%s</link><pubDate>%s</pubDate></item>", p, d.base, p, d.now.Add(-age).Format(time.RFC1123Z))
		}
		fmt.Fprintf(w, `<?xml version="1.0"?><rss version="2.0"><channel><title>news</title><link>%s/</link>%s%s</channel></rss>`,
			d.base, item("/news/fresh.html", time.Hour), item("/news/old.html", 30*24*time.Hour))
	default:
		http.NotFound(w, r)
	}
}

func (d *discoverSite) requested() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []string
	for p := range d.paths {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// TestCrawlRSSAutoDiscoverDelExpired: with rss auto_discover the feed
// announced in a page is read as a channel (its fresh item, which no page
// links to, is crawled); without it the feed is an ordinary link whose
// items are not followed. With del_expired_links the item older than
// max_link_age (old.html, crawled before the feed was found) is deleted
// from the store; without it, it stays.
func TestCrawlRSSAutoDiscoverDelExpired(t *testing.T) {
	for _, tc := range []struct {
		name               string
		discover, delExp   bool
		wantPaths          []string
		oldKept, freshSeen bool
	}{
		{"no auto_discover", false, true, []string{"/", "/feed.rss", "/news/old.html", "/robots.txt"}, true, false},
		{"auto_discover", true, false, []string{"/", "/feed.rss", "/news/fresh.html", "/news/old.html", "/robots.txt"}, true, true},
		{"auto_discover del_expired_links", true, true, []string{"/", "/feed.rss", "/news/fresh.html", "/news/old.html", "/robots.txt"}, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			site := &discoverSite{paths: map[string]int{}, now: time.Now()}
			port := serveHandler(t, site)
			site.base = fmt.Sprintf("http://feeds.test:%d", port)
			yn := map[bool]string{true: "yes", false: "no"}
			extra := fmt.Sprintf(`<section name="rss">
      <attrib name="auto_discover" type="boolean"> %s </attrib>
      <attrib name="del_expired_links" type="boolean"> %s </attrib>
      <attrib name="max_link_age" type="integer"> 1440 </attrib>
    </section>`, yn[tc.discover], yn[tc.delExp])
			_, st := crawlStore(t, crawlXML(site.base+"/", "feeds.test", extra))
			if d := cmp.Diff(tc.wantPaths, site.requested()); d != "" {
				t.Errorf("requested paths (-want +got):\n%s", d)
			}
			rec, ok, err := st.URI("acc", site.base+"/news/old.html")
			if err != nil {
				t.Fatal(err)
			}
			if ok != tc.oldKept {
				t.Errorf("expired item old.html in the store: %v (%+v), want %v", ok, rec, tc.oldKept)
			}
			if _, ok, _ := st.URI("acc", site.base+"/news/fresh.html"); ok != tc.freshSeen {
				t.Errorf("fresh item in the store: %v, want %v", ok, tc.freshSeen)
			}
			if tc.discover {
				if ch, ok, err := st.URI("acc", site.base+"/feed.rss"); err != nil || !ok || ch.Status != store.StatusFetched {
					t.Errorf("channel record %+v %v %v", ch, ok, err)
				}
			}
		})
	}
}
