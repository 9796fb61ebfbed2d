package crawlpipe

import (
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/trawl/trawl/internal/config"
	"github.com/trawl/trawl/internal/crawllog"
	"github.com/trawl/trawl/internal/extract"
)

// TestPageLinksResolve checks how a page's links become the URIs the crawl
// follows: resolved as browsers resolve them (the WHATWG URL rules, also
// against a <base href>), normalized, each once, and those that do not
// resolve to a URI the crawl can fetch logged as screened, as resolved.
func TestPageLinksResolve(t *testing.T) {
	cfg, err := config.Parse("links.xml", []byte(`<?xml version="1.0" encoding="utf-8"?>
<CrawlerConfig>
  <DomainSpecification name="links">
    <attrib name="start_uris" type="list-string"><member> http://a.test/ </member></attrib>
    <section name="include_domains"><attrib name="suffix" type="list-string"><member> .test </member></attrib></section>
    <section name="exclude_uris"><attrib name="suffix" type="list-string"><member> .do </member></attrib></section>
    <section name="log"><attrib name="screened" type="string"> text </attrib></section>
  </DomainSpecification>
</CrawlerConfig>
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Compile(cfg.Collections[0], Env{NodeID: "node1"})
	if err != nil {
		t.Fatal(err)
	}
	if !s.Logs.On(crawllog.Screened) {
		t.Fatal("the screened log is off: the test cannot see what was screened")
	}
	type want struct {
		Links    []string
		Screened []ScreenedURI
	}
	for _, tt := range []struct {
		name, page, html string
		want             want
	}{
		{"relative forms", "http://a.test/dir/page.html", `
			<a href="next.html">1</a>
			<a href="../up.html">2</a>
			<a href="/root.html?b=2&a=1#part">3</a>
			<a href="//b.test/x">4</a>
			<a href="HTTP://A.TEST:80/dir/./next.html">5, the first again</a>
			<a href="#top">6, within the page: no link</a>`,
			want{Links: []string{"http://a.test/dir/next.html", "http://a.test/up.html", "http://a.test/root.html?b=2&a=1",
				"http://b.test/x"}}},
		{"as browsers resolve them", "http://a.test/dir/page.html", `
			<a href="http:other.html">same scheme, no slashes: relative</a>
			<a href="..\back.html">backslash</a>
			<a href="  spaced name.html ">spaces</a>`,
			want{Links: []string{"http://a.test/dir/other.html", "http://a.test/back.html", "http://a.test/dir/spaced%20name.html"}}},
		{"base href", "http://a.test/dir/page.html", `
			<head><base href="/other/"></head>
			<a href="x.html">1</a>
			<a href="/y.html">2</a>
			<a href="http://c.test/z.html">3</a>`,
			want{Links: []string{"http://a.test/other/x.html", "http://a.test/y.html", "http://c.test/z.html"}}},
		{"screened", "http://a.test/", `
			<a href="mailto:x@a.test">mail</a>
			<a href="ftp://a.test/f.txt">ftp</a>
			<a href="setup.exe">exe</a>
			<a href="form.do">excluded</a>
			<a href="http://a.example/">out of the domains</a>
			<a href="ok.html">ok</a>`,
			want{Links: []string{"http://a.test/ok.html"}, Screened: []ScreenedURI{
				{URI: "mailto:x@a.test", Reason: "invalid URI"},
				{URI: "ftp://a.test/f.txt", Reason: "allowed_schemes"},
				{URI: "http://a.test/setup.exe", Reason: "exclude_exts"},
				{URI: "http://a.test/form.do", Reason: "exclude_uris suffix:.do"},
				{URI: "http://a.example/", Reason: "include_domains: no rule matches the host"},
			}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			u, err := url.Parse(tt.page)
			if err != nil {
				t.Fatal(err)
			}
			res := extract.Extract([]byte(tt.html), extract.Options{Kinds: s.Kinds, ContentType: "text/html"})
			out := Outcome{Job: &Job{S: s}}
			pageLinks(&out, s, u, res, 0, 0)
			var got want
			for _, l := range out.Links {
				got.Links = append(got.Links, l.URI)
			}
			got.Screened = out.Screened
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("links of %s (-want +got):\n%s", tt.page, d)
			}
		})
	}
}
