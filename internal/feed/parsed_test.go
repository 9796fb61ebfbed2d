package feed

import (
	"testing"

	"github.com/trawl/trawl/internal/extract"
)

// parsedDocs are HTML documents whose text a crawl step's parse (link
// kinds, agent name, link cap as the crawl sets them) must give as
// ExtractText gives it.
var parsedDocs = []string{
	``,
	`plain words, no tags`,
	`<html><head><title> A  title </title><meta name="description" content="The description">` +
		`<meta name="robots" content="noindex"><meta name="trawl" content="nofollow"></head>` +
		`<body lang="fr"><h1>Head</h1><p>First <b>para</b>graph.</p><!-- a comment <a href="c.html">c</a> -->` +
		`<script>var x = "<a href='s.html'>s</a>";</script><style>a { color: red }</style>` +
		`<a href="a.html">anchor one</a> <area href="b.html" alt="area alt"><frame src="f.html">` +
		`<img src="i.png" alt="picture"><embed src="e.swf"><object data="o.bin">object text</object>` +
		`<link rel="alternate" type="application/rss+xml" href="feed.xml">` +
		`<noscript>no script</noscript><iframe src="if.html">frame text</iframe></body></html>`,
	`<html lang="de"><head><meta charset="iso-8859-1"><title>Gr` + "\xfc" + `n</title></head><body>gr` + "\xfc" + `n und sch` + "\xf6" + `n</body></html>`,
	"\xef\xbb\xbf<title>bom</title><p>caf\xc3\xa9 cr\xc3\xa8me</p>",
	`<base href="http://other.example/"><meta http-equiv="refresh" content="0; url=next.html"><p>moved</p>`,
	`<title>many links</title>` + manyLinks(30),
	`<p>unclosed <div>nested <table><tr><td>cell</td><td>two</td></tr></table> tail`,
}

func manyLinks(n int) string {
	s := ""
	for i := range n {
		s += `<a href="p` + string(rune('a'+i%26)) + `.html">link text ` + string(rune('a'+i%26)) + `</a> `
	}
	return s
}

// crawlParse parses body as the crawl step does (crawlpipe: the
// collection's link kinds and agent name, the default link cap).
func crawlParse(body []byte, ct string, kinds extract.KindSet, agent string) *extract.Result {
	return extract.Extract(body, extract.Options{Kinds: kinds, AgentName: agent, ContentType: ct})
}

// TestParsedTextIsExtractText: the text the crawl step's parse gives the
// feeding is the text the destination would extract from the document,
// whatever link kinds and agent name the crawl parsed with.
func TestParsedTextIsExtractText(t *testing.T) {
	kindSets := []extract.KindSet{extract.DefaultKinds, extract.AllKinds, 0, extract.KindSet(0).With(extract.KindA)}
	for i, doc := range parsedDocs {
		want := ExtractText("text/html", []byte(doc))
		for _, ct := range []string{"", "text/html", "TEXT/HTML"} {
			for _, ks := range kindSets {
				for _, agent := range []string{"", "trawl"} {
					got, ok := ParsedText("text/html", ct, crawlParse([]byte(doc), ct, ks, agent))
					if !ok {
						t.Fatalf("doc %d, type %q: not taken", i, ct)
					}
					if got != want {
						t.Errorf("doc %d, type %q, kinds %b, agent %q:\n got %+v\nwant %+v", i, ct, ks, agent, got, want)
					}
				}
			}
		}
	}
}

// TestParsedTextDeclines: a parse under another media type, or of a type
// the index does not read as HTML, is not taken; a charset parameter the
// parse honoured is kept (ExtractText of the stored media type cannot see
// it).
func TestParsedTextDeclines(t *testing.T) {
	body := []byte(`<title>t</title><p>caf` + "\xe9" + `</p>`) // Latin-1, no meta charset
	res := crawlParse(body, "text/html; charset=iso-8859-1", extract.DefaultKinds, "trawl")
	for _, c := range []struct{ mime, parsedType string }{
		{"text/html", "text/plain"},
		{"text/plain", "text/plain"},
		{"application/pdf", ""},
		{"text/html", "text/htmlx; charset=utf-8"},
	} {
		if _, ok := ParsedText(c.mime, c.parsedType, res); ok {
			t.Errorf("ParsedText(%q, %q) taken", c.mime, c.parsedType)
		}
	}
	if _, ok := ParsedText("text/html", "text/html", nil); ok {
		t.Error("ParsedText of no parse taken")
	}
	got, ok := ParsedText("text/html", "text/html; charset=iso-8859-1", res)
	if !ok || got.Text != "café" || got.Method != "html" {
		t.Errorf("header charset: got %+v, %v; want the text café", got, ok)
	}
}

// TestSetText: an operation given its text carries no content, keeps the
// fields already set, and Prepare leaves it alone.
func TestSetText(t *testing.T) {
	op := Operation{Kind: Add, URI: "http://a/", MIME: "text/html", Content: []byte("<title>x</title>body"), Title: "kept"}
	op.Meta.Language = "fr"
	op.SetText(Extracted{Title: "x", Text: "body", Language: "en", Description: "d", Method: "html"})
	if op.Content != nil || op.Title != "kept" || op.Text != "body" || op.Meta.Language != "fr" || op.Meta.Description != "d" || op.Meta.Extraction != "html" {
		t.Fatalf("SetText gave %+v", op)
	}
	before := op
	Prepare(&op)
	if op.Text != before.Text || op.Meta.Extraction != before.Meta.Extraction {
		t.Fatalf("Prepare changed a prepared operation: %+v", op)
	}
	// An empty text is a text: Prepare does not parse again.
	op2 := Operation{Kind: Add, URI: "http://b/", MIME: "text/html", Content: []byte("<title>only</title>")}
	op2.SetText(Extracted{Title: "only", Method: "html"})
	Prepare(&op2)
	if op2.Meta.Extraction != "html" || op2.Text != "" || op2.Title != "only" {
		t.Fatalf("Prepare after an empty text: %+v", op2)
	}
}

// TestExtractDefaultTextCap: the crawl step parses with internal/extract's
// default text cap, which must be MaxTextBytes for its text to be the
// destination's.
func TestExtractDefaultTextCap(t *testing.T) {
	big := make([]byte, 0, MaxTextBytes+4096)
	for len(big) < MaxTextBytes+2048 {
		big = append(big, "word "...)
	}
	got, _ := ParsedText("text/html", "", crawlParse(big, "", extract.DefaultKinds, ""))
	want := ExtractText("text/html", big)
	if len(got.Text) != len(want.Text) || got.Text != want.Text {
		t.Fatalf("text of %d bytes from the crawl's parse, %d from ExtractText", len(got.Text), len(want.Text))
	}
}

// FuzzParsedText: for any document, the crawl step's parse gives the text
// ExtractText gives.
func FuzzParsedText(f *testing.F) {
	for _, d := range parsedDocs {
		f.Add([]byte(d))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		want := ExtractText("text/html", body)
		got, ok := ParsedText("text/html", "text/html", crawlParse(body, "text/html", extract.AllKinds, "trawl"))
		if !ok || got != want {
			t.Fatalf("got %+v (%v), want %+v", got, ok, want)
		}
	})
}
