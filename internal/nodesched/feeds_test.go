package nodesched

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/cmt/cmtconfig"
	"github.com/trawl/trawl/internal/config"
	"github.com/trawl/trawl/internal/nodesched/crawlpipe"
	"github.com/trawl/trawl/internal/store"
)

// feedSite serves robots.txt with a Sitemap line to a sitemap index, a
// gzip-compressed XML sitemap, a text sitemap, an RSS channel and pages
// that no link reaches, and records the paths requested.
type feedSite struct {
	mu    sync.Mutex
	paths map[string]int
	base  string
	now   time.Time
}

func (f *feedSite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.paths[r.URL.Path]++
	f.mu.Unlock()
	html := func(body string) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, "<html><head><title>%s</title></head><body>%s</body></html>", r.URL.Path, body)
	}
	switch r.URL.Path {
	case "/robots.txt":
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprintf(w, "User-agent: *\nDisallow: /private/\n\nSitemap: %s/smindex.xml\n", f.base)
	case "/smindex.xml":
		w.Header().Set("Content-Type", "application/xml")
		fmt.Fprintf(w, `<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>%s/sm1.xml.gz</loc></sitemap><sitemap><loc>%s/sm2.txt</loc></sitemap></sitemapindex>`, f.base, f.base)
	case "/sm1.xml.gz":
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		fmt.Fprintf(zw, `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<url><loc>%s/only-in-sitemap/a.html</loc><changefreq>daily</changefreq><priority>0.8</priority></url>
<url><loc>%s/only-in-sitemap/b.html</loc><changefreq>never</changefreq></url>
<url><loc>%s/private/c.html</loc></url></urlset>`, f.base, f.base, f.base)
		zw.Close()
		w.Header().Set("Content-Type", "application/x-gzip")
		w.Write(b.Bytes())
	case "/sm2.txt":
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprintf(w, "%s/only-in-text-sitemap.html\n", f.base)
	case "/feed.rss":
		w.Header().Set("Content-Type", "application/rss+xml")
		item := func(p string, age time.Duration) string {
			return fmt.Sprintf("<item><title>%s</title><link>%s%s</link><pubDate>%s</pubDate></item>", p, f.base, p, f.now.Add(-age).Format(time.RFC1123Z))
		}
		fmt.Fprintf(w, `<?xml version="1.0"?><rss version="2.0"><channel><title>news</title><link>%s/</link>%s%s%s</channel></rss>`,
			f.base, item("/news/fresh.html", time.Hour), item("/news/recent.html", 2*time.Hour), item("/news/old.html", 30*24*time.Hour))
	case "/":
		html("home, no links")
	case "/news/fresh.html":
		html(`<a href="/news/followed.html">more</a>`)
	default:
		html("page")
	}
}

func (f *feedSite) requested() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for p := range f.paths {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// crawlStore runs the collection of xml until idle and returns its stats
// and the open store.
func crawlStore(t *testing.T, xml string) (map[string]int64, *store.Store) {
	t.Helper()
	cfg, err := config.Parse("feeds.xml", []byte(xml), nil)
	if err != nil {
		t.Fatalf("%v\n%s", err, xml)
	}
	col := cfg.Collections[0]
	st, err := store.Open(t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	mns := &loopMNS{conf: cmt.CrawlConfig{Collections: []cmt.Collection{cmtconfig.CrawlConfig(col)}}, name: col.Name, seen: map[string]bool{}}
	d := New(Config{NodeID: "node1", Store: st, MNS: mns.dialer(ctx), Workers: 8})
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	waitIdle(t, d, 60*time.Second)
	stats := d.Stats()["acc"]
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
	return stats, st
}

func serveFeedSite(t *testing.T) (*feedSite, string, string) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	host := fmt.Sprintf("feeds.test:%d", ln.Addr().(*net.TCPAddr).Port)
	f := &feedSite{paths: map[string]int{}, base: "http://" + host, now: time.Now()}
	srv := &http.Server{Handler: f}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return f, f.base, "feeds.test"
}

func TestCrawlSitemapIndexGzipText(t *testing.T) {
	for _, tt := range []struct {
		name        string
		useSitemaps bool
		want        []string
	}{
		{"use_sitemaps", true, []string{"/", "/only-in-sitemap/a.html", "/only-in-sitemap/b.html", "/only-in-text-sitemap.html", "/robots.txt", "/sm1.xml.gz", "/sm2.txt", "/smindex.xml"}},
		{"no sitemaps", false, []string{"/", "/robots.txt"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, base, host := serveFeedSite(t)
			extra := fmt.Sprintf(`    <attrib name="use_sitemaps" type="boolean"> %s </attrib>`, map[bool]string{true: "yes", false: "no"}[tt.useSitemaps])
			_, st := crawlStore(t, crawlXML(base+"/", host, extra))
			if d := cmp.Diff(tt.want, f.requested()); d != "" {
				t.Errorf("requested paths (-want +got):\n%s", d)
			}
			if !tt.useSitemaps {
				return
			}
			for _, c := range []struct {
				path, freq string
				prio       float64
			}{{"/only-in-sitemap/a.html", "daily", 0.8}, {"/only-in-sitemap/b.html", "never", -1}} {
				e, ok, err := crawlpipe.SitemapInfo(st, "acc", base+c.path)
				if err != nil || !ok || e.ChangeFreq != c.freq || e.Priority != c.prio {
					t.Errorf("SitemapInfo(%s) = %+v, %v, %v; want changefreq %s priority %v", c.path, e, ok, err, c.freq, c.prio)
				}
			}
		})
	}
}

func TestCrawlRSSChannel(t *testing.T) {
	for _, tt := range []struct {
		name, extra string
		want        []string
	}{
		{"follow links, max age 1 day", `<attrib name="follow_links" type="boolean"> yes </attrib><attrib name="max_link_age" type="integer"> 1440 </attrib>`,
			[]string{"/", "/feed.rss", "/news/followed.html", "/news/fresh.html", "/news/recent.html", "/robots.txt"}},
		{"no follow, newest only", `<attrib name="follow_links" type="boolean"> no </attrib><attrib name="max_link_count" type="integer"> 1 </attrib>`,
			[]string{"/", "/feed.rss", "/news/fresh.html", "/robots.txt"}},
		{"no age limit", `<attrib name="follow_links" type="boolean"> no </attrib>`,
			[]string{"/", "/feed.rss", "/news/fresh.html", "/news/old.html", "/news/recent.html", "/robots.txt"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, base, host := serveFeedSite(t)
			extra := fmt.Sprintf(`    <section name="rss"><attrib name="start_uris" type="list-string"><member> %s/feed.rss </member></attrib>%s</section>`, base, tt.extra)
			_, st := crawlStore(t, crawlXML(base+"/", host, extra))
			if d := cmp.Diff(tt.want, f.requested()); d != "" {
				t.Errorf("requested paths (-want +got):\n%s", d)
			}
			if rec, ok, err := st.URI("acc", base+"/feed.rss"); err != nil || !ok || rec.Status != store.StatusFetched {
				t.Errorf("channel record %+v %v %v", rec, ok, err)
			}
		})
	}
}

var _ = strings.TrimSpace

func TestCrawlStartURIFiles(t *testing.T) {
	f, base, host := serveFeedSite(t)
	file := t.TempDir() + "/starts.txt"
	if err := os.WriteFile(file, []byte("# start URIs\n\n"+base+"/only-in-sitemap/a.html\n"+base+"/news/fresh.html\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	extra := fmt.Sprintf(`    <attrib name="use_sitemaps" type="boolean"> no </attrib>
    <attrib name="start_uri_files" type="list-string"><member> %s </member></attrib>`, file)
	crawlStore(t, crawlXML(base+"/", host, extra))
	want := []string{"/", "/news/followed.html", "/news/fresh.html", "/only-in-sitemap/a.html", "/robots.txt"}
	if d := cmp.Diff(want, f.requested()); d != "" {
		t.Errorf("requested paths (-want +got):\n%s", d)
	}
}

// TestCrawlRSSRulesAndIndexing crawls a channel whose items an exclude_uris
// rule covers: with ignore_rules the items are crawled all the same (a
// link found in one of them still obeys the rule), without it none is.
// Without index_feed the channel is not indexed and counted under skip
// code rs; with it, it is.
func TestCrawlRSSRulesAndIndexing(t *testing.T) {
	for _, tt := range []struct {
		name, extra string
		want        []string
		rsNoIndex   int64
	}{
		{"ignore_rules", `<attrib name="ignore_rules" type="boolean"> yes </attrib>`,
			[]string{"/", "/feed.rss", "/news/fresh.html", "/news/old.html", "/news/recent.html", "/robots.txt"}, 1},
		{"rules apply, index_feed", `<attrib name="index_feed" type="boolean"> yes </attrib>`,
			[]string{"/", "/feed.rss", "/robots.txt"}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, base, host := serveFeedSite(t)
			extra := fmt.Sprintf(`    <section name="exclude_uris"><attrib name="prefix" type="list-string"><member> %s/news/ </member></attrib></section>
    <section name="rss"><attrib name="start_uris" type="list-string"><member> %s/feed.rss </member></attrib>%s</section>`, base, base, tt.extra)
			stats, _ := crawlStore(t, crawlXML(base+"/", host, extra))
			if d := cmp.Diff(tt.want, f.requested()); d != "" {
				t.Errorf("requested paths (-want +got):\n%s", d)
			}
			if stats["rss_noindex"] != tt.rsNoIndex || stats["noindex"] != 0 {
				t.Errorf("rss_noindex %d (want %d), noindex %d (want 0)", stats["rss_noindex"], tt.rsNoIndex, stats["noindex"])
			}
		})
	}
}
