package extract

import (
	"bytes"
	"io"
	"net/url"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"
)

// Options configure HTML extraction.
type Options struct {
	// Kinds are the link kinds to extract (link_extraction); 0 means
	// DefaultKinds.
	Kinds KindSet
	// AgentName is the crawler's name, for <meta name="AgentName">
	// directives besides <meta name="robots"> (compared case-insensitively).
	AgentName string
	// ContentType is the response's Content-Type header, used with the
	// document's BOM and <meta charset> to pick its encoding.
	ContentType string
	// HonourRelNoFollow drops links marked rel="nofollow" (they are kept,
	// with NoFollow set, by default: see docs/decisions/extract.md).
	HonourRelNoFollow bool
	// MaxLinks caps the number of links (default 10000); MaxTextBytes the
	// body text (default 1 MiB); MaxURLBytes the length of one URL (longer
	// ones are dropped; default 4096); MaxAnchorBytes the anchor text of a
	// link (default 512).
	MaxLinks       int
	MaxTextBytes   int
	MaxURLBytes    int
	MaxAnchorBytes int
}

// Link is one link found in a document.
type Link struct {
	URL      string // as written (whitespace trimmed), not resolved
	Kind     Kind
	Anchor   string // anchor text (a, area alt), whitespace collapsed
	Rel      string // rel attribute (a, area, link), lower case
	NoFollow bool   // rel contains "nofollow"
	// Type is the type attribute of a LINK tag, lower case ("" elsewhere):
	// rel="alternate" with type="application/rss+xml" names a feed.
	Type string
}

// Meta is one <meta> tag with a content attribute.
type Meta struct {
	Name    string // name, http-equiv or property, lower case
	Content string
}

// Result is what Extract found.
type Result struct {
	Links       []Link
	Base        string // first <base href>, raw
	Title       string
	Description string
	Keywords    string
	// Language is <html lang>, else <meta http-equiv="content-language">,
	// else <meta name="language">.
	Language string
	// Robots are the directives of <meta name="robots"> and of the meta
	// tag named after the crawler.
	Robots  RobotsDirectives
	Refresh Refresh
	Meta    []Meta
	// Text is the visible text (no script, style, or markup), whitespace
	// collapsed, at most MaxTextBytes.
	Text string
	// LinksTruncated and TextTruncated tell that a cap was hit.
	LinksTruncated bool
	TextTruncated  bool
	// Encoding is the name of the encoding the document was decoded from.
	Encoding string
}

// Resolve makes a link absolute against the document URL and its <base>.
func (r *Result) Resolve(docURL *url.URL, raw string) (*url.URL, error) {
	base := docURL
	if r.Base != "" {
		if b, err := docURL.Parse(r.Base); err == nil {
			base = b
		}
	}
	u, err := base.Parse(raw)
	if err != nil {
		return nil, err
	}
	u.Fragment, u.RawFragment = "", ""
	return u, nil
}

const maxTitleBytes = 1024
const maxMetaBytes = 4096
const maxMetas = 64

type extractor struct {
	o   Options
	res *Result

	text      []byte
	space     bool // a separator is pending before the next word
	anchor    int  // index in Links of the open <a>, or -1
	anchorBuf []byte
	rawTag    string // the raw-text element whose text comes next
	attrs     attrs
	inObject  int
	title     []byte
	hasLang   int // 3: html lang, 2: content-language, 1: name=language
}

// Extract reads an HTML (or WML) document and returns its links and
// metadata. It never fails: malformed markup is read as browsers read it.
func Extract(body []byte, o Options) *Result {
	if o.Kinds == 0 {
		o.Kinds = DefaultKinds
	}
	if o.MaxLinks <= 0 {
		o.MaxLinks = 10000
	}
	if o.MaxTextBytes <= 0 {
		o.MaxTextBytes = 1 << 20
	}
	if o.MaxURLBytes <= 0 {
		o.MaxURLBytes = 4096
	}
	if o.MaxAnchorBytes <= 0 {
		o.MaxAnchorBytes = 512
	}
	res := &Result{Encoding: "utf-8"}
	if enc, name, _ := charset.DetermineEncoding(body, o.ContentType); enc != nil {
		res.Encoding = name
		if name != "utf-8" && needsDecoding(body, name) {
			if decoded, err := io.ReadAll(enc.NewDecoder().Reader(bytes.NewReader(body))); err == nil {
				body = decoded
			}
		}
	}
	e := &extractor{o: o, res: res, anchor: -1}
	e.run(body, 0)
	e.closeAnchor()
	res.Title = collapse(e.title)
	res.Text = string(e.text)
	return res
}

// needsDecoding reports whether a document in an ASCII-compatible
// encoding has bytes that decode differently from UTF-8; 7-bit encodings
// that are not ASCII (UTF-16, ISO-2022, HZ) always need decoding.
func needsDecoding(body []byte, name string) bool {
	if strings.HasPrefix(name, "utf-16") || strings.HasPrefix(name, "iso-2022") || name == "hz-gb-2312" {
		return true
	}
	for _, c := range body {
		if c >= 0x80 {
			return true
		}
	}
	return false
}

func (e *extractor) run(body []byte, depth int) {
	z := html.NewTokenizer(bytes.NewReader(body))
	z.SetMaxBuf(0)
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return
		case html.TextToken:
			e.textToken(z.Text(), depth)
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			e.rawTag = ""
			e.startTag(z, tagName(name), hasAttr, tt == html.SelfClosingTagToken)
		case html.EndTagToken:
			name, _ := z.TagName()
			e.rawTag = ""
			e.endTag(tagName(name))
		case html.CommentToken:
			if e.o.Kinds.Has(KindComment) {
				commentURLs(z.Text(), func(u string) { e.add(u, KindComment, "") })
			}
		}
	}
}

func (e *extractor) textToken(t []byte, depth int) {
	switch e.rawTag {
	case "script":
		if e.o.Kinds.Has(KindScriptJava) {
			scriptURLs(t, func(u string) { e.add(u, KindScriptJava, "") })
		}
		return
	case "style":
		if e.o.Kinds.Has(KindStyle) {
			cssURLs(t, func(u string) { e.add(u, KindStyle, "") })
		}
		return
	case "title":
		if len(e.title) < maxTitleBytes {
			e.title = append(e.title, t[:min(len(t), maxTitleBytes-len(e.title))]...)
		}
		return
	case "noscript", "noframes":
		// Raw text to the tokenizer, but markup (and links) for a crawler.
		if depth == 0 {
			e.run(t, depth+1)
		}
		return
	case "iframe", "noembed", "xmp", "plaintext", "textarea":
		return
	}
	e.appendText(t)
	if e.anchor >= 0 && len(e.anchorBuf) < e.o.MaxAnchorBytes {
		e.anchorBuf = append(e.anchorBuf, ' ')
		e.anchorBuf = append(e.anchorBuf, t[:min(len(t), e.o.MaxAnchorBytes)]...)
	}
}

// appendText adds words to the text, collapsing whitespace.
func (e *extractor) appendText(t []byte) {
	for len(t) > 0 {
		if len(e.text) >= e.o.MaxTextBytes {
			e.res.TextTruncated = true
			return
		}
		c := t[0]
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' {
			e.space = true
			t = t[1:]
			continue
		}
		// The run up to the next whitespace.
		n := 1
		for n < len(t) && !(t[n] == ' ' || t[n] == '\t' || t[n] == '\n' || t[n] == '\r' || t[n] == '\f') {
			n++
		}
		if e.space && len(e.text) > 0 {
			e.text = append(e.text, ' ')
		}
		e.space = false
		room := e.o.MaxTextBytes - len(e.text)
		if n > room {
			// Cut on a rune boundary.
			cut := room
			for cut > 0 && !utf8.RuneStart(t[cut]) {
				cut--
			}
			e.text = append(e.text, t[:cut]...)
			e.res.TextTruncated = true
			return
		}
		e.text = append(e.text, t[:n]...)
		t = t[n:]
	}
}

// knownTags interns the element names the extractor looks at; it is never
// written after initialisation.
var knownTags = func() map[string]string {
	m := map[string]string{}
	for _, n := range strings.Fields(`a abbr b bdi bdo cite code data dfn em font i kbd mark q s samp small span
		strong sub sup time tt u var wbr big strike script style title noscript noframes iframe noembed xmp
		plaintext textarea area img frame link embed object param applet layer ilayer go card base html meta`) {
		m[n] = n
	}
	return m
}()

// tagName returns the interned name of an element the extractor knows
// (without allocating), and "" for the others.
func tagName(b []byte) string {
	return knownTags[string(b)]
}

// inline elements do not separate words.
func inline(name string) bool {
	switch name {
	case "a", "abbr", "b", "bdi", "bdo", "cite", "code", "data", "dfn", "em", "font", "i", "kbd", "mark",
		"q", "s", "samp", "small", "span", "strong", "sub", "sup", "time", "tt", "u", "var", "wbr", "big", "strike":
		return true
	}
	return false
}

// attrs holds a tag's attributes. The tokenizer returns fresh copies, so
// the slices stay valid after the next token.
type attrs struct {
	keys, vals [][]byte
}

func (a *attrs) get(k string) (string, bool) {
	if v, ok := a.getBytes(k); ok {
		return string(v), true
	}
	return "", false
}

func (a *attrs) getBytes(k string) ([]byte, bool) {
	for i, key := range a.keys {
		if string(key) == k {
			return a.vals[i], true
		}
	}
	return nil, false
}

func (e *extractor) startTag(z *html.Tokenizer, name string, hasAttr, selfClosing bool) {
	if !inline(name) {
		e.space = true
	}
	switch name {
	case "script", "style", "title", "noscript", "noframes", "iframe", "noembed", "xmp", "plaintext", "textarea":
		e.rawTag = name // the tokenizer reads the next text raw, even after "<script/>"
	}
	a := &e.attrs
	a.keys, a.vals = a.keys[:0], a.vals[:0]
	if hasAttr {
		for {
			k, v, more := z.TagAttr()
			a.keys = append(a.keys, k)
			a.vals = append(a.vals, v)
			if !more {
				break
			}
		}
	}
	if style, ok := a.getBytes("style"); ok && e.o.Kinds.Has(KindStyle) {
		cssURLs(style, func(u string) { e.add(u, KindStyle, "") })
	}
	if action, ok := a.get("action"); ok {
		e.add(action, KindAction, "")
	}
	if fa, ok := a.get("formaction"); ok {
		e.add(fa, KindAction, "")
	}
	switch name {
	case "a":
		e.closeAnchor()
		if href, ok := a.get("href"); ok {
			rel, _ := a.get("rel")
			if e.addRel(href, KindA, rel) {
				e.anchor = len(e.res.Links) - 1
				e.anchorBuf = e.anchorBuf[:0]
			}
		}
	case "area":
		if href, ok := a.get("href"); ok {
			rel, _ := a.get("rel")
			if e.addRel(href, KindArea, rel) {
				alt, _ := a.get("alt")
				e.res.Links[len(e.res.Links)-1].Anchor = collapse([]byte(alt))
			}
		}
	case "img":
		if src, ok := a.get("src"); ok {
			e.add(src, KindImg, "")
		}
		if alt, ok := a.get("alt"); ok && e.anchor >= 0 && len(e.anchorBuf) < e.o.MaxAnchorBytes {
			e.anchorBuf = append(e.anchorBuf, ' ')
			e.anchorBuf = append(e.anchorBuf, alt...)
		}
	case "frame", "iframe":
		if src, ok := a.get("src"); ok {
			e.add(src, KindFrame, "")
		}
	case "link":
		if href, ok := a.get("href"); ok {
			rel, _ := a.get("rel")
			if e.addRel(href, KindLink, rel) {
				if typ, ok := a.get("type"); ok {
					e.res.Links[len(e.res.Links)-1].Type = strings.ToLower(strings.TrimSpace(typ))
				}
			}
		}
	case "script":
		if src, ok := a.get("src"); ok {
			e.add(src, KindScript, "")
		}
	case "embed":
		if src, ok := a.get("src"); ok {
			e.add(src, KindEmbed, "")
		}
	case "object":
		if !selfClosing {
			e.inObject++
		}
		if data, ok := a.get("data"); ok {
			e.add(data, KindObject, "")
		}
	case "param":
		if e.inObject > 0 {
			n, _ := a.get("name")
			switch strings.ToLower(n) {
			case "movie", "src", "url", "filename", "data":
				v, _ := a.get("value")
				e.add(v, KindObject, "")
			}
		}
	case "applet":
		if code, ok := a.get("code"); ok {
			if cb, ok := a.get("codebase"); ok && cb != "" && !strings.HasSuffix(cb, "/") {
				code = cb + "/" + code
			} else if ok {
				code = cb + code
			}
			e.add(code, KindObject, "")
		}
	case "layer", "ilayer":
		if src, ok := a.get("src"); ok {
			e.add(src, KindLayer, "")
		}
	case "go":
		if href, ok := a.get("href"); ok {
			e.add(href, KindGo, "")
		}
	case "card":
		for _, k := range []string{"onenterforward", "onenterbackward", "ontimer"} {
			if v, ok := a.get(k); ok {
				e.add(v, KindCard, "")
			}
		}
	case "base":
		if href, ok := a.get("href"); ok && e.res.Base == "" {
			e.res.Base = cleanURL(href)
		}
	case "html":
		if lang, ok := a.get("lang"); ok && strings.TrimSpace(lang) != "" {
			e.res.Language, e.hasLang = strings.TrimSpace(lang), 3
		} else if lang, ok := a.get("xml:lang"); ok && strings.TrimSpace(lang) != "" {
			e.res.Language, e.hasLang = strings.TrimSpace(lang), 3
		}
	case "meta":
		e.meta(a)
	}
}

func (e *extractor) meta(a *attrs) {
	content, ok := a.get("content")
	if !ok {
		return
	}
	name, _ := a.get("name")
	equiv, _ := a.get("http-equiv")
	prop, _ := a.get("property")
	name, equiv = strings.ToLower(strings.TrimSpace(name)), strings.ToLower(strings.TrimSpace(equiv))
	key := name
	if key == "" {
		key = equiv
	}
	if key == "" {
		key = strings.ToLower(strings.TrimSpace(prop))
	}
	if key != "" && len(e.res.Meta) < maxMetas {
		e.res.Meta = append(e.res.Meta, Meta{Name: key, Content: content[:min(len(content), maxMetaBytes)]})
	}
	switch {
	case equiv == "refresh":
		if r, ok := ParseRefresh(content); ok && !e.res.Refresh.Present {
			e.res.Refresh = r
			if r.URL != "" {
				e.add(r.URL, KindMetaRefresh, "")
			}
		}
		return
	case name == "robots" || (e.o.AgentName != "" && strings.EqualFold(name, e.o.AgentName)):
		e.res.Robots.merge(content)
	case name == "description" && e.res.Description == "":
		e.res.Description = collapse([]byte(content[:min(len(content), maxMetaBytes)]))
	case name == "keywords" && e.res.Keywords == "":
		e.res.Keywords = collapse([]byte(content[:min(len(content), maxMetaBytes)]))
	case equiv == "content-language" && e.hasLang < 2:
		e.res.Language, e.hasLang = strings.TrimSpace(content), 2
	case name == "language" && e.hasLang < 1:
		e.res.Language, e.hasLang = strings.TrimSpace(content), 1
	}
	c := strings.TrimSpace(content)
	if hasPrefixFold([]byte(c), "http://") || hasPrefixFold([]byte(c), "https://") {
		e.add(c, KindMeta, "")
	}
}

func (e *extractor) endTag(name string) {
	if !inline(name) {
		e.space = true
	}
	switch name {
	case "a":
		e.closeAnchor()
	case "object":
		if e.inObject > 0 {
			e.inObject--
		}
	}
}

func (e *extractor) closeAnchor() {
	if e.anchor >= 0 {
		e.res.Links[e.anchor].Anchor = collapse(e.anchorBuf)
		e.anchor = -1
	}
}

func (e *extractor) add(raw string, k Kind, rel string) bool {
	return e.addRel(raw, k, rel)
}

// addRel appends a link when its kind is enabled and it is a plausible
// target; it reports whether the link was added.
func (e *extractor) addRel(raw string, k Kind, rel string) bool {
	if !e.o.Kinds.Has(k) {
		return false
	}
	u := cleanURL(raw)
	if u == "" || u[0] == '#' || len(u) > e.o.MaxURLBytes {
		return false
	}
	if i := strings.IndexByte(u, ':'); i > 0 {
		switch strings.ToLower(u[:i]) {
		case "javascript", "data", "about", "vbscript":
			return false
		}
	}
	rel = strings.ToLower(strings.TrimSpace(rel))
	nofollow := false
	if rel != "" {
		for _, f := range strings.Fields(rel) {
			if f == "nofollow" {
				nofollow = true
			}
		}
	}
	if nofollow && e.o.HonourRelNoFollow {
		return false
	}
	if len(e.res.Links) >= e.o.MaxLinks {
		e.res.LinksTruncated = true
		return false
	}
	e.res.Links = append(e.res.Links, Link{URL: u, Kind: k, Rel: rel, NoFollow: nofollow})
	return true
}

// collapse trims and collapses whitespace runs into single spaces.
func collapse(b []byte) string {
	out := make([]byte, 0, len(b))
	space := false
	for _, c := range b {
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' {
			space = len(out) > 0
			continue
		}
		if space {
			out = append(out, ' ')
			space = false
		}
		out = append(out, c)
	}
	return string(out)
}
