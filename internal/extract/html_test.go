package extract

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func links(r *Result) []Link { return r.Links }

func TestLinkKinds(t *testing.T) {
	tests := []struct {
		name string
		html string
		want []Link
	}{
		{"a with anchor", `<p>x <a href="/a.html">The <b>A</b>
			page</a> y</p>`, []Link{{URL: "/a.html", Kind: KindA, Anchor: "The A page"}}},
		{"a with image alt", `<a href=/i><img src=logo.png alt="Logo"></a>`, []Link{{URL: "/i", Kind: KindA, Anchor: "Logo"}}},
		{"a nofollow kept", `<a href="x" rel="external NoFollow">x</a>`, []Link{{URL: "x", Kind: KindA, Anchor: "x", Rel: "external nofollow", NoFollow: true}}},
		{"a without href", `<a name="top">t</a>`, nil},
		{"fragment and javascript skipped", `<a href="#top">t</a><a href="javascript:void(0)">j</a><a href=" data:x">d</a><a href="mailto:a@b.c">m</a>`,
			[]Link{{URL: "mailto:a@b.c", Kind: KindA, Anchor: "m"}}},
		{"whitespace in URL", "<a href=\" /a\n/b\t \">x</a>", []Link{{URL: "/a/b", Kind: KindA, Anchor: "x"}}},
		{"entities decoded", `<a href="/q?a=1&amp;b=2">x</a>`, []Link{{URL: "/q?a=1&b=2", Kind: KindA, Anchor: "x"}}},
		{"area", `<map><area href="/r" alt="Region" rel=nofollow></map>`, []Link{{URL: "/r", Kind: KindArea, Anchor: "Region", Rel: "nofollow", NoFollow: true}}},
		{"frames", `<frameset><frame src="f1.html"><frame src=f2.html></frameset><iframe src="if.html">fallback <a href=no>x</a></iframe>`,
			[]Link{{URL: "f1.html", Kind: KindFrame}, {URL: "f2.html", Kind: KindFrame}, {URL: "if.html", Kind: KindFrame}}},
		{"link", `<link rel="stylesheet" href="s.css"><link rel=canonical href="http://x/c">`,
			[]Link{{URL: "s.css", Kind: KindLink, Rel: "stylesheet"}, {URL: "http://x/c", Kind: KindLink, Rel: "canonical"}}},
		{"script src and inline", `<script src="/s.js"></script><script>var u = "http://x.com/abs"; location.href = '/rel.html'; if (a == "/no") {} window.open("/pop.html")</script>`,
			[]Link{{URL: "/s.js", Kind: KindScript}, {URL: "http://x.com/abs", Kind: KindScriptJava}, {URL: "/rel.html", Kind: KindScriptJava}, {URL: "/pop.html", Kind: KindScriptJava}}},
		{"embed object param applet", `<object data="movie.swf"><param name="movie" value="m2.swf"><param name="quality" value="high"></object><embed src="e.swf"><applet code="A.class" codebase="/java"></applet>`,
			[]Link{{URL: "movie.swf", Kind: KindObject}, {URL: "m2.swf", Kind: KindObject}, {URL: "e.swf", Kind: KindEmbed}, {URL: "/java/A.class", Kind: KindObject}}},
		{"style element and attribute", `<style>@import "imp.css"; body { background: url( 'bg.png' ) } @import url(i2.css);</style><div style="background-image:URL(d.png)">x</div>`,
			[]Link{{URL: "imp.css", Kind: KindStyle}, {URL: "bg.png", Kind: KindStyle}, {URL: "i2.css", Kind: KindStyle}, {URL: "d.png", Kind: KindStyle}}},
		{"comment", `<!-- old: <a href="/old.html">old</a> see http://example.com/x.html. -->`,
			[]Link{{URL: "/old.html", Kind: KindComment}, {URL: "http://example.com/x.html", Kind: KindComment}}},
		{"form action", `<form action="/search" method=get><button formaction="/alt">b</button></form>`,
			[]Link{{URL: "/search", Kind: KindAction}, {URL: "/alt", Kind: KindAction}}},
		{"layer", `<layer src="l.html"></layer><ilayer src="il.html"></ilayer>`, []Link{{URL: "l.html", Kind: KindLayer}, {URL: "il.html", Kind: KindLayer}}},
		{"wml", `<wml><card id="c" ontimer="/t.wml" onenterforward="/f.wml"><do><go href="/go.wml"/></do></card></wml>`,
			[]Link{{URL: "/f.wml", Kind: KindCard}, {URL: "/t.wml", Kind: KindCard}, {URL: "/go.wml", Kind: KindGo}}},
		{"meta refresh and meta URL", `<meta http-equiv="Refresh" content="2; URL='/next.html'"><meta property="og:url" content=" http://x.com/og ">`,
			[]Link{{URL: "/next.html", Kind: KindMetaRefresh}, {URL: "http://x.com/og", Kind: KindMeta}}},
		{"noscript content is markup", `<noscript><a href="/ns.html">no js</a></noscript>`, []Link{{URL: "/ns.html", Kind: KindA, Anchor: "no js"}}},
		{"img only when enabled (default off)", `<img src="i.png">`, nil},
		{"unclosed a", `<a href=1>one<a href=2>two`, []Link{{URL: "1", Kind: KindA, Anchor: "one"}, {URL: "2", Kind: KindA, Anchor: "two"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Extract([]byte(tt.html), Options{})
			if diff := cmp.Diff(tt.want, links(r), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("links (-want +got):\n%s", diff)
			}
		})
	}
}

func TestKindSelection(t *testing.T) {
	page := `<a href=a>a</a><img src=i><script src=s></script><!-- http://c.com/ --><style>x{background:url(st)}</style>`
	all := Extract([]byte(page), Options{Kinds: AllKinds})
	if len(all.Links) != 5 {
		t.Fatalf("all kinds: %v", all.Links)
	}
	set, err := KindsFromConfig(map[string]bool{"img": true, "comment": false, "style": false})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range Extract([]byte(page), Options{Kinds: set}).Links {
		got = append(got, l.Kind.String()+":"+l.URL)
	}
	if diff := cmp.Diff([]string{"a:a", "img:i", "script:s"}, got); diff != "" {
		t.Error(diff)
	}
	if _, err := KindsFromConfig(map[string]bool{"blink": true}); err == nil || !strings.HasPrefix(err.Error(), "extract: ") {
		t.Errorf("unknown kind: %v", err)
	}
	for k := Kind(0); k < numKinds; k++ {
		if p, err := ParseKind(k.String()); err != nil || p != k {
			t.Errorf("ParseKind(%s) = %v %v", k, p, err)
		}
	}
}

func TestMetadata(t *testing.T) {
	page := `<!DOCTYPE html><html lang="nb-NO"><head>
	<title> Hello &amp;
	World </title>
	<base href="http://base.example/dir/">
	<base href="http://second.example/">
	<meta name="Description" content="  A   description ">
	<meta name="keywords" content="a, b,c">
	<meta http-equiv="content-language" content="en">
	<meta name="ROBOTS" content="NOINDEX">
	<meta name="trawl" content="nofollow">
	<meta name="otherbot" content="none">
	<meta http-equiv="refresh" content="5;url=http://x.com/r">
	<style>p { color: red }</style><script>var hidden = "text";</script>
	</head><body><h1>Head</h1><p>Para<b>graph</b> one.</p><ul><li>item</li></ul></body></html>`
	r := Extract([]byte(page), Options{AgentName: "Trawl"})
	want := &Result{
		Base: "http://base.example/dir/", Title: "Hello & World", Description: "A description", Keywords: "a, b,c",
		Language: "nb-NO", Robots: RobotsDirectives{NoIndex: true, NoFollow: true},
		Refresh: Refresh{Present: true, Delay: 5, URL: "http://x.com/r"},
		Text:    "Head Paragraph one. item", Encoding: "windows-1252", // no charset, ASCII only: the HTML default
	}
	if diff := cmp.Diff(want, r, cmpopts.IgnoreFields(Result{}, "Links", "Meta")); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if len(r.Meta) != 7 || r.Meta[0] != (Meta{Name: "description", Content: "  A   description "}) {
		t.Errorf("meta %v", r.Meta)
	}
	u, _ := url.Parse("http://doc.example/a/b.html")
	abs, err := r.Resolve(u, "../c.html#f")
	if err != nil || abs.String() != "http://base.example/c.html" {
		t.Errorf("Resolve = %v %v", abs, err)
	}
	// Without the agent name, only name=robots applies.
	if r := Extract([]byte(page), Options{}); r.Robots.NoFollow {
		t.Error("meta name=trawl applied without the agent name")
	}
	if r := Extract([]byte(`<html><head><meta name="language" content="de"></head></html>`), Options{}); r.Language != "de" {
		t.Errorf("language %q", r.Language)
	}
}

func TestRobotsDirectives(t *testing.T) {
	tests := map[string]RobotsDirectives{
		"noindex, nofollow":  {true, true},
		"none":               {true, true},
		"all":                {},
		"index,follow":       {},
		"NOINDEX":            {NoIndex: true},
		"noarchive nofollow": {NoFollow: true},
		"":                   {},
	}
	for in, want := range tests {
		if got := ParseRobotsDirectives(in); got != want {
			t.Errorf("%q: %+v, want %+v", in, got, want)
		}
	}
}

func TestRefresh(t *testing.T) {
	tests := []struct {
		in   string
		want Refresh
		ok   bool
	}{
		{"5", Refresh{Present: true, Delay: 5}, true},
		{"0; url=http://x/", Refresh{Present: true, URL: "http://x/"}, true},
		{"0;URL='/a b'", Refresh{Present: true, URL: "/a b"}, true},
		{`3, url="/q"`, Refresh{Present: true, Delay: 3, URL: "/q"}, true},
		{"0; http://x/y", Refresh{Present: true, URL: "http://x/y"}, true},
		{"1.5;url=z", Refresh{Present: true, Delay: 1.5, URL: "z"}, true},
		{"  10 ; URL = /later ", Refresh{Present: true, Delay: 10, URL: "/later"}, true},
		{"url=/x", Refresh{}, false},
		{"", Refresh{}, false},
	}
	for _, tt := range tests {
		got, ok := ParseRefresh(tt.in)
		if ok != tt.ok || got != tt.want {
			t.Errorf("ParseRefresh(%q) = %+v %v, want %+v %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
	// html_redir_is_redir with the default html_redir_threshold of 3 s.
	for in, want := range map[string]bool{"0;url=/a": true, "3;url=/a": true, "4;url=/a": false, "0": false} {
		r, _ := ParseRefresh(in)
		if r.IsRedirect(3) != want {
			t.Errorf("IsRedirect(%q) = %v", in, !want)
		}
	}
}

func TestCaps(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 50; i++ {
		fmt.Fprintf(&b, `<a href="/%d">link number %d</a> `, i, i)
	}
	b.WriteString(`<a href="/` + strings.Repeat("x", 5000) + `">long</a>`)
	r := Extract([]byte(b.String()), Options{MaxLinks: 10, MaxTextBytes: 30})
	if len(r.Links) != 10 || !r.LinksTruncated {
		t.Errorf("%d links, truncated %v", len(r.Links), r.LinksTruncated)
	}
	if len(r.Text) > 30 || !r.TextTruncated || r.Text != "link number 0 link number 1 li" {
		t.Errorf("text %q truncated %v", r.Text, r.TextTruncated)
	}
	r = Extract([]byte(b.String()), Options{})
	if len(r.Links) != 50 {
		t.Errorf("URL over MaxURLBytes kept: %d links", len(r.Links))
	}
	// Multi-byte text is cut on a rune boundary.
	r = Extract([]byte("<p>ææææ</p>"), Options{MaxTextBytes: 5})
	if r.Text != "ææ" {
		t.Errorf("rune cut: %q", r.Text)
	}
	long := strings.Repeat("word ", 1000)
	r = Extract([]byte(`<a href="/x">`+long+`</a>`), Options{MaxAnchorBytes: 20})
	if len(r.Links[0].Anchor) > 40 {
		t.Errorf("anchor %d bytes", len(r.Links[0].Anchor))
	}
}

func TestEncoding(t *testing.T) {
	latin1 := []byte("<html><head><meta charset=\"iso-8859-1\"><title>S\xf8k</title></head><body>bl\xe5b\xe6r</body></html>")
	r := Extract(latin1, Options{})
	if r.Title != "Søk" || r.Text != "blåbær" || r.Encoding != "windows-1252" {
		t.Errorf("title %q text %q enc %q", r.Title, r.Text, r.Encoding)
	}
	r = Extract([]byte("<p>\xe6</p>"), Options{ContentType: "text/html; charset=ISO-8859-1"})
	if r.Text != "æ" {
		t.Errorf("header charset: %q", r.Text)
	}
	r = Extract([]byte("<p>æ</p>"), Options{ContentType: "text/html"})
	if r.Text != "æ" || r.Encoding != "utf-8" {
		t.Errorf("utf-8: %q %q", r.Text, r.Encoding)
	}
}

func TestChecksum(t *testing.T) {
	a := Extract([]byte(`<html><head><meta name="x" content="1"></head><body><p>Same text</p></body></html>`), Options{})
	b := Extract([]byte(`<div><meta name="x" content="2"><span>Same</span> <i>text</i></div>`), Options{})
	if Checksum(a, false, 0) != Checksum(b, false, 0) {
		t.Error("markup changes the text checksum")
	}
	if Checksum(a, true, 0) == Checksum(b, true, 0) {
		t.Error("use_meta_csum ignores meta tags")
	}
	c := Extract([]byte(`<p>Same text and more</p>`), Options{})
	if Checksum(a, false, 9) != Checksum(c, false, 9) {
		t.Error("csum_cut_off not applied")
	}
	if Checksum(a, false, 0) == Checksum(c, false, 0) {
		t.Error("different texts, same checksum")
	}
	if ChecksumBytes([]byte("abcdef"), 3) != ChecksumBytes([]byte("abcxyz"), 3) || ChecksumBytes([]byte("a"), 0) == ChecksumBytes([]byte("b"), 0) {
		t.Error("ChecksumBytes")
	}
}

func FuzzExtract(f *testing.F) {
	f.Add([]byte(`<html lang=en><head><title>t</title><base href="/b/"><meta http-equiv=refresh content="0;url=/r"><meta name=robots content=none></head><body><a href="/a">A <img alt=x src=i></a><!-- http://c/ --><script>location="/j"</script><style>@import "s.css"</style><noscript><a href=n>n</a></noscript></body></html>`))
	f.Add([]byte(`<wml><card ontimer="/t"><go href="/g"/></card></wml>`))
	f.Add([]byte("<a href='\x00\xff'>\xe6</a><object data=x><param name=movie value=y></object>"))
	f.Add([]byte(`<meta charset="shift_jis"><p>` + "\x82\xa0" + `</p>`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := Extract(data, Options{Kinds: AllKinds, MaxLinks: 100, MaxTextBytes: 1000, AgentName: "trawl"})
		if len(r.Links) > 100 || len(r.Text) > 1000 {
			t.Fatalf("caps exceeded: %d links, %d text bytes", len(r.Links), len(r.Text))
		}
		for _, l := range r.Links {
			if l.URL == "" || l.Kind >= numKinds {
				t.Fatalf("bad link %+v", l)
			}
		}
		_ = Checksum(r, true, 10)
	})
}
