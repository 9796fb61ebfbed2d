package webfarm

import (
	"bytes"
	"strconv"
)

// gen renders one document into buf. When collect is set it also records
// every link with its resolved URL and end offset, so the expectation
// model reads exactly the bytes the server sends.
type gen struct {
	f       *Farm
	h       int
	pre     []string
	buf     []byte
	tp      []byte // path (or, for h < 0, URL) of the current link target
	tmp     []byte
	dir     string // directory that document-relative hrefs are relative to
	collect bool
	links   []Link
	rng     rng
	version int // highest birth cycle among linked pages (FeatChanges)
}

func (g *gen) reset(f *Farm, h int, collect bool) {
	g.f, g.h, g.collect = f, h, collect
	g.pre = *f.prefix.Load()
	g.buf, g.tp, g.tmp, g.links = g.buf[:0], g.tp[:0], g.tmp[:0], g.links[:0]
	g.dir, g.version = "/", 0
}

func (g *gen) s(str string) { g.buf = append(g.buf, str...) }

func (g *gen) num(v int) { g.buf = strconv.AppendInt(g.buf, int64(v), 10) }

func appendInt(b []byte, v int) []byte { return strconv.AppendInt(b, int64(v), 10) }

func itoa(v int) string { return strconv.Itoa(v) }

func (g *gen) seedText(kind rkind, a, b int) {
	g.rng = rng{s: hash(g.f.seed, saltText*64+uint64(kind), g.h, a, b)}
}

func (g *gen) word() string { return vocabulary[g.rng.intn(len(vocabulary))] }

// words appends n words separated by spaces.
func (g *gen) words(n int) {
	for i := 0; i < n; i++ {
		if i > 0 {
			g.buf = append(g.buf, ' ')
		}
		g.buf = append(g.buf, g.word()...)
	}
}

// capWords appends n words, the first capitalised.
func (g *gen) capWords(n int) {
	start := len(g.buf)
	g.words(n)
	if c := g.buf[start]; c >= 'a' && c <= 'z' {
		g.buf[start] = c - 'a' + 'A'
	}
}

// sentences appends n sentences of prose. When near > 0, a few words are
// replaced (near-duplicate variant near).
func (g *gen) sentences(n, near int) {
	w := 0
	for i := 0; i < n; i++ {
		if i > 0 {
			g.buf = append(g.buf, ' ')
		}
		m := 6 + g.rng.intn(10)
		for j := 0; j < m; j++ {
			if j > 0 {
				if j == m/2 && g.rng.intn(3) == 0 {
					g.buf = append(g.buf, ',')
				}
				g.buf = append(g.buf, ' ')
			}
			word := g.word()
			if near > 0 && w%29 == 3+near && w < 120 {
				word = vocabulary[(len(vocabulary)/2+w*near)%len(vocabulary)]
			}
			w++
			start := len(g.buf)
			g.buf = append(g.buf, word...)
			if j == 0 {
				if c := g.buf[start]; c >= 'a' && c <= 'z' {
					g.buf[start] = c - 'a' + 'A'
				}
			}
		}
		g.buf = append(g.buf, '.')
	}
}

func (g *gen) para(n int) {
	g.s("<p>")
	g.sentences(n, 0)
	g.s("</p>\n")
}

// title appends a title to tmp and returns it (valid until tmp changes).
func (g *gen) title(n int) []byte {
	start := len(g.buf)
	g.capWords(n)
	g.tmp = append(g.tmp[:0], g.buf[start:]...)
	g.buf = g.buf[:start]
	return g.tmp
}

func (g *gen) head(title []byte) {
	g.s("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>")
	g.buf = append(g.buf, title...)
	g.s("</title>\n")
}

func (g *gen) tpPage(h, n int) { g.tp = g.f.appendPagePath(g.tp[:0], h, n) }

func (g *gen) tpStr(parts ...string) {
	g.tp = g.tp[:0]
	for _, p := range parts {
		g.tp = append(g.tp, p...)
	}
}

func (g *gen) tpNum(prefix string, v int, suffix string) {
	g.tp = append(g.tp[:0], prefix...)
	g.tp = strconv.AppendInt(g.tp, int64(v), 10)
	g.tp = append(g.tp, suffix...)
}

// href appends the current target in one of several equivalent forms.
func (g *gen) href(h, form int) {
	if h < 0 {
		g.buf = append(g.buf, g.tp...)
		return
	}
	pre := g.pre[h]
	if h != g.h {
		form = []int{1, 3, 4}[form%3]
	}
	switch form {
	case 1: // absolute
		g.buf = append(g.buf, pre...)
		g.buf = append(g.buf, g.tp...)
	case 2: // document-relative
		g.buf = appendRel(g.buf, g.dir, g.tp)
	case 3: // scheme-relative
		g.buf = append(g.buf, pre[len("http:"):]...)
		g.buf = append(g.buf, g.tp...)
	case 4: // absolute, upper case, with a fragment
		start := len(g.buf)
		g.buf = append(g.buf, pre...)
		for i := start; i < len(g.buf); i++ {
			if c := g.buf[i]; c >= 'a' && c <= 'z' {
				g.buf[i] = c - 'a' + 'A'
			}
		}
		g.buf = append(g.buf, g.tp...)
		g.buf = append(g.buf, "#section-2"...)
	case 5: // root-relative with a fragment
		g.buf = append(g.buf, g.tp...)
		g.buf = append(g.buf, "#top"...)
	case 6: // root-relative with dot segments
		g.buf = append(g.buf, "/x/.."...)
		g.buf = append(g.buf, g.tp...)
	default: // root-relative
		g.buf = append(g.buf, g.tp...)
	}
}

// appendRel appends path relative to dir ("/" or "/seg/").
func appendRel(b []byte, dir string, path []byte) []byte {
	if dir == "/" {
		if len(path) == 1 {
			return append(b, "./"...)
		}
		return append(b, path[1:]...)
	}
	if bytes.HasPrefix(path, []byte(dir)) {
		rest := path[len(dir):]
		if len(rest) == 0 || rest[0] == '?' {
			b = append(b, "./"...)
		}
		return append(b, rest...)
	}
	return append(append(b, "../"...), path[1:]...)
}

// mark records the current target as a link ending at the current offset.
func (g *gen) mark(kind LinkKind, h, delay int) {
	if !g.collect {
		return
	}
	var u string
	if h < 0 {
		u = string(g.tp)
	} else {
		u = g.pre[h] + string(g.tp)
	}
	g.links = append(g.links, Link{Kind: kind, URL: u, End: int64(len(g.buf)), Delay: delay})
}

// a appends an anchor to the current target.
func (g *gen) a(h, form, nwords int) {
	g.s(`<a href="`)
	g.href(h, form)
	g.s(`">`)
	g.mark(KindA, h, 0)
	g.words(nwords)
	g.s("</a>")
}

func (g *gen) li(h, form int) {
	g.s("<li>")
	g.a(h, form, 2+g.rng.intn(3))
	g.s("</li>\n")
}
