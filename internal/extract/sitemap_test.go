package extract

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/trawl/trawl/internal/testenv"
)

// The fixtures are crawler-commons' (see SOURCE.md beside them); the
// expectations are those of crawler-commons' SiteMapParserTest for the same
// files, and for the extension sitemaps the number of <url> entries in the
// file (sitemaps.org).
const ccDir = "../../../shared/testdata/crawler-commons"

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testenv.SharedTestdata(t, "crawler-commons"), name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func locs(us []SitemapURL) []string {
	var out []string
	for _, u := range us {
		out = append(out, u.Loc)
	}
	return out
}

func TestSitemapFixtures(t *testing.T) {
	tests := []struct {
		file   string
		format SitemapFormat
		n      int
		first  string
	}{
		{"sitemaps/sitemap.index.xml", FormatSitemapIndex, 15, "https://example.com/sitemap.jss?portalCode=10260&lang=en"},
		{"sitemaps/sitemap.ns.xml", FormatURLSet, 2, "http://www.example.com/1"},
		{"sitemaps/sitemap.badns.xml", FormatURLSet, 2, "http://www.example.com/1"},
		{"sitemaps/sitemap.txt", FormatText, 2, "http://www.domain.com/page1.html"},
		{"sitemaps/sitemap-with-bom.txt", FormatText, 2, "http://www.domain.com/page1.html"},
		{"sitemaps/sitemap.txt.gz", FormatText, 5, "http://www.example.com/"},
		{"sitemaps/xmlSitemap.gz", FormatURLSet, 5, "http://www.example.com/"},
		{"sitemaps/atom.xml", FormatAtom, 1, "http://example.org/2003/12/13/atom03"},
		{"rss/feed.rss", FormatRSS, 4, "https://www.example.com/blog/post/1"},
		{"rss/xmlRss_pubDate.xml", FormatRSS, 7, "http://www.example.com/article_1"},
		{"sitemaps/extension/hebdenbridgetimes-articles-sitemap.xml", FormatURLSet, 74, ""},
		{"sitemaps/extension/pagemaps-sitemap.xml", FormatURLSet, 2, ""},
		{"sitemaps/extension/shinpaideshou-news-sitemap.xml", FormatURLSet, 3, "https://shinpaideshou.wordpress.com/2017/04/25/job-opening-reischauer-policy-research-fellow/"},
		{"sitemaps/extension/sitemap-images.xml", FormatURLSet, 1, ""},
		{"sitemaps/extension/sitemap-links.xml", FormatURLSet, 3, ""},
		{"sitemaps/extension/sitemap-mobile.xml", FormatURLSet, 3, ""},
		{"sitemaps/extension/sitemap-news.xml", FormatURLSet, 2, ""},
		{"sitemaps/extension/sitemap-videos-tvshow.xml", FormatURLSet, 1, ""},
		{"sitemaps/extension/sitemap-videos.xml", FormatURLSet, 3, ""},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			sm, err := ParseSitemap(fixture(t, tt.file), SitemapOptions{})
			if err != nil {
				t.Fatal(err)
			}
			entries := sm.URLs
			if sm.Format == FormatSitemapIndex {
				entries = sm.Sitemaps
			}
			if sm.Format != tt.format || len(entries) != tt.n {
				t.Fatalf("format %v with %d entries, want %v with %d: %v", sm.Format, len(entries), tt.format, tt.n, locs(entries))
			}
			if tt.first != "" && entries[0].Loc != tt.first {
				t.Errorf("first = %q, want %q", entries[0].Loc, tt.first)
			}
			for _, e := range entries {
				if !strings.HasPrefix(e.Loc, "http") || strings.ContainsAny(e.Loc, " \n\t") {
					t.Errorf("bad loc %q", e.Loc)
				}
			}
		})
	}
}

func TestSitemapDetails(t *testing.T) {
	sm, err := ParseSitemap(fixture(t, "sitemaps/xmlSitemap.gz"), SitemapOptions{})
	if err != nil {
		t.Fatal(err)
	}
	u := sm.URLs[0]
	if !u.LastMod.Equal(time.Date(2005, 1, 1, 0, 0, 0, 0, time.UTC)) || u.ChangeFreq != "monthly" || u.Priority != 0.8 {
		t.Errorf("first url %+v", u)
	}
	if sm.URLs[1].Loc != "http://www.example.com/catalog?item=12&desc=vacation_hawaii" || sm.URLs[1].Priority != -1 {
		t.Errorf("second url %+v", sm.URLs[1])
	}
	if !sm.URLs[3].LastMod.Equal(time.Date(2004, 12, 23, 18, 0, 15, 0, time.UTC)) {
		t.Errorf("W3C datetime: %v", sm.URLs[3].LastMod)
	}

	rss, err := ParseSitemap(fixture(t, "rss/feed.rss"), SitemapOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"https://www.example.com/blog/post/1", "https://www.example.com/guid.html",
		"https://www.example.com/foo?q=a&l=en", "https://www.example.com/foo?q=a&l=fr"}
	if diff := cmp.Diff(want, locs(rss.URLs)); diff != "" {
		t.Errorf("rss (-want +got):\n%s", diff)
	}
	if rss.URLs[0].LastMod.Month() != time.September {
		t.Errorf("rss pubDate %v", rss.URLs[0].LastMod)
	}

	atom, _ := ParseSitemap(fixture(t, "sitemaps/atom.xml"), SitemapOptions{})
	if atom.URLs[0].LastMod.Month() != time.December {
		t.Errorf("atom updated %v", atom.URLs[0].LastMod)
	}

	pub, _ := ParseSitemap(fixture(t, "rss/xmlRss_pubDate.xml"), SitemapOptions{})
	base := time.Date(2017, 1, 5, 12, 34, 50, 0, time.UTC)
	for i, wantDate := range []time.Time{base.Add(time.Second), base.Add(2 * time.Second), base.Add(3 * time.Second), base.Add(4 * time.Second), {}, {}, {}} {
		if got := pub.URLs[i].LastMod; !got.Equal(wantDate) {
			t.Errorf("article_%d: pubDate %v, want %v", i+1, got, wantDate)
		}
	}
}

func TestSitemapErrors(t *testing.T) {
	// An external entity is never resolved: the parse stops with an error
	// and the file's contents do not appear.
	xxe := `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE urlset [ <!ENTITY test SYSTEM "file://` + ccDir + `/sitemaps/do-not-visit.txt"> ]>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url><loc>http://www.example.com/visit-here</loc></url>
  <url><loc>&test;</loc></url>
</urlset>`
	sm, err := ParseSitemap([]byte(xxe), SitemapOptions{})
	if err == nil || !strings.HasPrefix(err.Error(), "extract: ") {
		t.Fatalf("XXE: err %v", err)
	}
	for _, u := range sm.URLs {
		if strings.Contains(u.Loc, "do-not-visit") {
			t.Fatal("external entity resolved")
		}
	}
	// A truncated document keeps what was complete.
	sm, err = ParseSitemap([]byte(`<urlset><url><loc>http://a/1</loc></url><url><loc>http://a/2</lo`), SitemapOptions{})
	if err == nil || len(sm.URLs) < 1 || sm.URLs[0].Loc != "http://a/1" {
		t.Errorf("partial: %v %v", err, sm.URLs)
	}
	if _, err := ParseSitemap([]byte(`<html><body>not a sitemap</body></html>`), SitemapOptions{}); err == nil {
		t.Error("HTML accepted as a sitemap")
	}
	if _, err := ParseSitemap([]byte("\x1f\x8bnot gzip"), SitemapOptions{}); err == nil {
		t.Error("bad gzip accepted")
	}
	// Text sitemaps skip what is not an absolute URL.
	sm, _ = ParseSitemap([]byte("http://a/1\n\nnot a url\n/relative\nhttps://b/2\r\n"), SitemapOptions{})
	if diff := cmp.Diff([]string{"http://a/1", "https://b/2"}, locs(sm.URLs)); diff != "" {
		t.Error(diff)
	}
}

func TestSitemapCaps(t *testing.T) {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
	for i := 0; i < 100; i++ {
		fmt.Fprintf(&b, "<url><loc>http://a.com/%d</loc></url>\n", i)
	}
	b.WriteString("</urlset>")
	sm, err := ParseSitemap(b.Bytes(), SitemapOptions{MaxURLs: 10})
	if err != nil || len(sm.URLs) != 10 || !sm.Truncated {
		t.Errorf("MaxURLs: %v %d %v", err, len(sm.URLs), sm.Truncated)
	}
	// A gzip bomb is cut at MaxBytes of decompressed data.
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write([]byte("http://a.com/x\n"))
	zw.Write(bytes.Repeat([]byte(" "), 10<<20))
	zw.Close()
	sm, err = ParseSitemap(z.Bytes(), SitemapOptions{MaxBytes: 1 << 20})
	if err != nil || !sm.Truncated || len(sm.URLs) != 1 {
		t.Errorf("bomb: %v truncated=%v %d", err, sm.Truncated, len(sm.URLs))
	}
	// Latin-1 declared encodings are decoded.
	latin := []byte("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><urlset><url><loc>http://a.com/bl\xe5</loc></url></urlset>")
	sm, err = ParseSitemap(latin, SitemapOptions{})
	if err != nil || sm.URLs[0].Loc != "http://a.com/blå" {
		t.Errorf("latin-1: %v %v", err, sm.URLs)
	}
}

func FuzzParseSitemap(f *testing.F) {
	f.Add([]byte(`<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>http://a/</loc><lastmod>2005-01-01</lastmod><changefreq>daily</changefreq><priority>0.5</priority></url></urlset>`))
	f.Add([]byte(`<sitemapindex><sitemap>http://a/s.xml</sitemap></sitemapindex>`))
	f.Add([]byte(`<rss><channel><item><link>http://a/<![CDATA[?x]]></link><guid>http://g</guid><pubDate>Sun, 06 Sep 2009 16:20:00 +0000</pubDate></item></channel></rss>`))
	f.Add([]byte(`<feed><entry><link href="http://a/" /><updated>2003-12-13T18:30:02Z</updated></entry></feed>`))
	f.Add([]byte("\xef\xbb\xbfhttp://a/1\nhttp://a/2"))
	f.Fuzz(func(t *testing.T, data []byte) {
		sm, _ := ParseSitemap(data, SitemapOptions{MaxURLs: 50, MaxBytes: 1 << 16})
		if sm == nil || len(sm.URLs)+len(sm.Sitemaps) > 50 {
			t.Fatal("cap exceeded or nil result")
		}
	})
}
