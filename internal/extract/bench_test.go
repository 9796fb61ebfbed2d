package extract

import (
	"fmt"
	"strings"
	"testing"
)

// benchPage builds a realistic page of about 20 KB with 100 links: a head
// with metadata, a stylesheet and scripts, navigation, paragraphs of text
// with inline links, a footer.
func benchPage() []byte {
	var b strings.Builder
	b.WriteString(`<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Benchmark page – trawl</title>
<meta name="description" content="A page to measure link extraction speed."><meta name="keywords" content="crawler, benchmark">
<meta name="robots" content="index, follow"><link rel="stylesheet" href="/static/site.css"><link rel="canonical" href="http://example.com/bench">
<style>body{font-family:sans-serif;background:url(/img/bg.png)} .nav a{color:#333}</style>
<script src="/static/app.js"></script><script>window.dataLayer=[];function go(){location.href='/landing.html'}</script>
</head><body><div class="nav"><ul>`)
	for i := 0; i < 20; i++ {
		fmt.Fprintf(&b, `<li><a href="/section/%d/index.html" class="nav-item">Section %d</a></li>`, i, i)
	}
	b.WriteString(`</ul></div><main>`)
	words := strings.Fields("the quick brown fox jumps over the lazy dog while crawlers fetch pages from many sites politely and index their text")
	link := 20
	for p := 0; b.Len() < 18000; p++ {
		fmt.Fprintf(&b, `<h2 id="h%d">Heading %d</h2><p class="text">`, p, p)
		for w := 0; w < 60; w++ {
			if w%20 == 10 && link < 95 {
				fmt.Fprintf(&b, `<a href="http://site%d.example.com/page/%d?ref=bench&amp;x=%d" title="t">%s %s</a> `, link%7, link, link, words[w%len(words)], words[(w+1)%len(words)])
				link++
				continue
			}
			b.WriteString(words[(w+p)%len(words)])
			b.WriteByte(' ')
		}
		b.WriteString("</p>\n<!-- section end -->\n")
	}
	b.WriteString(`</main><footer>`)
	for ; link < 100; link++ {
		fmt.Fprintf(&b, `<a href="/footer/%d">Footer %d</a> | `, link, link)
	}
	b.WriteString(`</footer></body></html>`)
	return []byte(b.String())
}

func TestBenchPage(t *testing.T) {
	page := benchPage()
	r := Extract(page, Options{})
	n := 0
	for _, l := range r.Links {
		if l.Kind == KindA {
			n++
		}
	}
	if n != 100 || len(page) < 18000 || len(page) > 24000 {
		t.Fatalf("bench page: %d bytes, %d <a> links", len(page), n)
	}
}

func BenchmarkExtract(b *testing.B) {
	page := benchPage()
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	for b.Loop() {
		Extract(page, Options{})
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pages/s")
}
