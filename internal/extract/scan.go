package extract

import (
	"bytes"
	"strconv"
	"strings"
)

// RobotsDirectives are the indexing directives of a meta robots tag or an
// X-Robots-Tag header.
type RobotsDirectives struct {
	NoIndex  bool
	NoFollow bool
}

// ParseRobotsDirectives reads a comma- or space-separated directive list
// ("noindex, nofollow", "none", "all", "index,follow"). Unknown directives
// are ignored; "none" means noindex and nofollow; "all", "index" and
// "follow" restrict nothing. Directives accumulate: a later "index" does
// not undo an earlier "noindex" (the most restrictive wins, as search
// engines do).
func ParseRobotsDirectives(s string) RobotsDirectives {
	var d RobotsDirectives
	d.merge(s)
	return d
}

func (d *RobotsDirectives) merge(s string) {
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == ';' }) {
		switch strings.ToLower(f) {
		case "noindex":
			d.NoIndex = true
		case "nofollow":
			d.NoFollow = true
		case "none":
			d.NoIndex, d.NoFollow = true, true
		}
	}
}

// Refresh is a <meta http-equiv="refresh"> directive.
type Refresh struct {
	Present bool
	Delay   float64 // seconds
	URL     string  // raw target; empty means the page reloads itself
}

// IsRedirect reports whether the refresh is to be treated as an HTTP
// redirect under html_redir_is_redir with html_redir_threshold (seconds):
// it names a target and waits no longer than the threshold.
func (r Refresh) IsRedirect(threshold float64) bool {
	return r.Present && r.URL != "" && r.Delay <= threshold
}

// ParseRefresh parses the content of a refresh meta tag: "5",
// "0; url=http://x/", "0;URL='x'", "3, url=x", "0; http://x/".
func ParseRefresh(content string) (Refresh, bool) {
	s := strings.TrimSpace(content)
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
		i++
	}
	if i == 0 {
		return Refresh{}, false
	}
	delay, err := strconv.ParseFloat(strings.TrimRight(s[:i], "."), 64)
	if err != nil {
		return Refresh{}, false
	}
	r := Refresh{Present: true, Delay: delay}
	rest := strings.TrimLeft(s[i:], " \t\r\n")
	if rest == "" {
		return r, true
	}
	if rest[0] != ';' && rest[0] != ',' {
		return r, true
	}
	rest = strings.TrimLeft(rest[1:], " \t\r\n")
	if len(rest) >= 3 && strings.EqualFold(rest[:3], "url") {
		after := strings.TrimLeft(rest[3:], " \t\r\n")
		if strings.HasPrefix(after, "=") {
			rest = strings.TrimLeft(after[1:], " \t\r\n")
		}
	}
	if rest != "" && (rest[0] == '\'' || rest[0] == '"') {
		q := rest[0]
		rest = rest[1:]
		if j := strings.IndexByte(rest, q); j >= 0 {
			rest = rest[:j]
		}
	}
	r.URL = cleanURL(rest)
	return r, true
}

// cleanURL strips leading and trailing whitespace and removes tabs and
// newlines inside, as browsers do with attribute URLs.
func cleanURL(s string) string {
	s = strings.TrimSpace(s)
	if strings.ContainsAny(s, "\t\r\n") {
		s = strings.Map(func(r rune) rune {
			if r == '\t' || r == '\r' || r == '\n' {
				return -1
			}
			return r
		}, s)
	}
	return s
}

// cssURLs calls emit for every url(...) and @import "..." in CSS text.
// Both searches move forward only, so the scan is linear.
func cssURLs(css []byte, emit func(string)) {
	nextURL, nextImport := -2, -2 // -2: not searched yet; -1: none left
	for i := 0; i < len(css); {
		if nextURL != -1 && nextURL < i {
			nextURL = indexFold(css[i:], "url(")
			if nextURL >= 0 {
				nextURL += i
			}
		}
		if nextImport != -1 && nextImport < i {
			nextImport = bytes.Index(css[i:], []byte("@import"))
			if nextImport >= 0 {
				nextImport += i
			}
		}
		if nextURL < 0 && nextImport < 0 {
			return
		}
		if nextURL >= 0 && (nextImport < 0 || nextURL < nextImport) {
			start := nextURL + 4
			end := bytes.IndexByte(css[start:], ')')
			if end < 0 {
				return
			}
			v := strings.TrimSpace(string(css[start : start+end]))
			v = strings.Trim(v, `"'`)
			if v != "" {
				emit(v)
			}
			i = start + end + 1
			continue
		}
		start := nextImport + len("@import")
		rest := bytes.TrimLeft(css[start:], " \t\r\n")
		if len(rest) > 0 && (rest[0] == '"' || rest[0] == '\'') {
			if end := bytes.IndexByte(rest[1:], rest[0]); end >= 0 {
				if v := string(rest[1 : 1+end]); v != "" {
					emit(v)
				}
			}
		}
		i = start // a url(...) after @import is found by the next round
	}
}

func indexFold(b []byte, lowerNeedle string) int {
	n := len(lowerNeedle)
	for i := 0; i+n <= len(b); i++ {
		if b[i]|0x20 == lowerNeedle[0] && bytes.EqualFold(b[i:i+n], []byte(lowerNeedle)) {
			return i
		}
	}
	return -1
}

// absoluteURLs calls emit for every http:// or https:// URL in free text
// (comments), ending at whitespace, a quote, '<', '>' or ')'.
func absoluteURLs(text []byte, emit func(string)) {
	for i := 0; i < len(text); {
		j := indexFold(text[i:], "http")
		if j < 0 {
			return
		}
		s := i + j
		rest := text[s:]
		var n int
		switch {
		case len(rest) >= 7 && bytes.EqualFold(rest[:7], []byte("http://")):
			n = 7
		case len(rest) >= 8 && bytes.EqualFold(rest[:8], []byte("https://")):
			n = 8
		default:
			i = s + 4
			continue
		}
		e := s + n
		for e < len(text) && !bytes.ContainsRune([]byte(" \t\r\n\"'<>()`\\"), rune(text[e])) {
			e++
		}
		if e > s+n {
			emit(strings.TrimRight(string(text[s:e]), ".,;:"))
		}
		i = e
	}
}

// commentURLs finds links in an HTML comment: href=/src= attribute values
// of commented-out markup, and bare absolute URLs.
func commentURLs(text []byte, emit func(string)) {
	seen := map[string]bool{}
	once := func(u string) {
		if u != "" && !seen[u] {
			seen[u] = true
			emit(u)
		}
	}
	for _, attr := range []string{"href", "src"} {
		for i := 0; i < len(text); {
			j := indexFold(text[i:], attr)
			if j < 0 {
				break
			}
			p := i + j + len(attr)
			i = p
			rest := bytes.TrimLeft(text[p:], " \t\r\n")
			if len(rest) == 0 || rest[0] != '=' {
				continue
			}
			rest = bytes.TrimLeft(rest[1:], " \t\r\n")
			if len(rest) == 0 {
				break
			}
			var v []byte
			if rest[0] == '"' || rest[0] == '\'' {
				end := bytes.IndexByte(rest[1:], rest[0])
				if end < 0 {
					continue
				}
				v = rest[1 : 1+end]
			} else {
				end := bytes.IndexAny(rest, " \t\r\n>")
				if end < 0 {
					end = len(rest)
				}
				v = rest[:end]
			}
			once(cleanURL(string(v)))
		}
	}
	absoluteURLs(text, once)
}

// scriptURLs finds links in inline JavaScript: string literals that are
// absolute http(s) URLs, and string literals assigned to location,
// location.href or *.href, or passed to window.open or location.assign /
// location.replace.
func scriptURLs(js []byte, emit func(string)) {
	for i := 0; i < len(js); i++ {
		q := js[i]
		if q != '"' && q != '\'' {
			continue
		}
		end := i + 1
		for end < len(js) && js[end] != q && js[end] != '\n' {
			if js[end] == '\\' {
				end++
			}
			end++
		}
		if end >= len(js) || js[end] != q {
			i = end
			continue
		}
		lit := js[i+1 : end]
		if hasPrefixFold(lit, "http://") || hasPrefixFold(lit, "https://") || navigates(js[:i]) {
			if v := cleanURL(string(lit)); v != "" && !strings.ContainsAny(v, " <>{}\\") {
				emit(v)
			}
		}
		i = end
	}
}

func hasPrefixFold(b []byte, p string) bool {
	return len(b) >= len(p) && bytes.EqualFold(b[:len(p)], []byte(p))
}

// navigates reports whether the JavaScript before a string literal is an
// assignment to a location or href, or a call to open/assign/replace.
func navigates(before []byte) bool {
	b := bytes.TrimRight(before, " \t")
	if len(b) == 0 {
		return false
	}
	switch b[len(b)-1] {
	case '=':
		b = bytes.TrimRight(b[:len(b)-1], " \t")
		if len(b) > 0 && strings.ContainsRune("=!<>+-*/", rune(b[len(b)-1])) {
			return false // a comparison or compound assignment
		}
		low := bytes.ToLower(b[max(0, len(b)-16):])
		return bytes.HasSuffix(low, []byte("location")) || bytes.HasSuffix(low, []byte("href"))
	case '(':
		low := bytes.ToLower(bytes.TrimRight(b[max(0, len(b)-24):len(b)-1], " \t"))
		return bytes.HasSuffix(low, []byte("window.open")) || bytes.HasSuffix(low, []byte("location.assign")) ||
			bytes.HasSuffix(low, []byte("location.replace"))
	}
	return false
}
