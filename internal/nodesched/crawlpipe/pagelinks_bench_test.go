package crawlpipe

import (
	"net/url"
	"strings"
	"testing"

	"github.com/trawl/trawl/internal/config"
	"github.com/trawl/trawl/internal/extract"
	"github.com/trawl/trawl/internal/webfarm"
)

// BenchmarkPageLinks screens the links of farm pages (resolving,
// normalizing, filtering): the link half of a crawl step, per page.
func BenchmarkPageLinks(b *testing.B) {
	farm, err := webfarm.New(webfarm.Config{Seed: 1, Hosts: 4, PagesPerHost: 200, Port: 8080, Features: webfarm.FeatCommon})
	if err != nil {
		b.Fatal(err)
	}
	var xml strings.Builder
	if err := webfarm.WriteCrawlXML(&xml, farm.DefaultCrawl(), webfarm.XMLOptions{Collection: "farm"}); err != nil {
		b.Fatal(err)
	}
	cfg, err := config.Parse("farm.xml", []byte(xml.String()), nil)
	if err != nil {
		b.Fatal(err)
	}
	s, err := Compile(cfg.Collections[0], Env{NodeID: "node1"})
	if err != nil {
		b.Fatal(err)
	}
	type page struct {
		u   *url.URL
		res *extract.Result
	}
	var pages []page
	links := 0
	// The first 100 HTML pages found from the first host's home page.
	queue := []string{"http://" + farm.Hosts()[0].Name + ":8080/"}
	seen := map[string]bool{queue[0]: true}
	for len(queue) > 0 && len(pages) < 100 {
		raw := queue[0]
		queue = queue[1:]
		r, err := farm.Describe(raw, 0)
		if err != nil || r.Status != 200 || !strings.HasPrefix(r.ContentType, "text/html") {
			continue
		}
		u, _ := url.Parse(raw)
		res := extract.Extract(r.Body, extract.Options{Kinds: s.Kinds, ContentType: "text/html"})
		pages = append(pages, page{u, res})
		links += len(res.Links)
		for _, l := range r.Links {
			if !seen[l.URL] {
				seen[l.URL] = true
				queue = append(queue, l.URL)
			}
		}
	}
	if len(pages) == 0 {
		b.Fatal("no farm pages")
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p := pages[i%len(pages)]
		out := Outcome{Job: &Job{S: s}}
		pageLinks(&out, s, p.u, p.res, 1, 0)
	}
	b.ReportMetric(float64(links)/float64(len(pages)), "links/page")
}
