package index

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits of the query parser.
const (
	// MaxQueryBytes caps the query text; the rest is ignored.
	MaxQueryBytes = 2048
	// MaxClauses caps the number of words, phrases and filters; further
	// ones are ignored.
	MaxClauses = 64
)

// Query is a parsed user query.
//
// The language: words separated by spaces must all match (in the title,
// the body or the anchor text); "a quoted phrase" must match as a phrase;
// OR (in capitals) between two words or phrases makes them alternatives
// (a OR b OR "c d": one of them must match; lower-case "or" is a word, and
// an OR that does not stand between two positive words or phrases is
// ignored); a leading - excludes a word, a phrase or a filter; site:example.com keeps
// documents from that host or its subdomains; type:pdf keeps a family (html,
// pdf, text, office, xml, other) and type:application/pdf a MIME type;
// several site: (or type:) filters are alternatives. Case does not matter.
// Words without any letter or digit are ignored.
type Query struct {
	Words, Phrases []string
	// Or holds the groups of alternatives of a OR b: each element is a
	// word, or a phrase when it holds a space.
	Or                               [][]string
	NotWords, NotPhrases             []string
	Sites, NotSites, Types, NotTypes []string
}

// ParseQuery parses s. It never fails: anything it cannot read is taken as
// words; an unterminated quote ends at the end of the query.
func ParseQuery(s string) Query {
	var q Query
	if len(s) > MaxQueryBytes {
		s = truncate(s, MaxQueryBytes)
	}
	s = strings.ToValidUTF8(s, " ")
	n := 0
	var p orParser
	for s != "" && n < MaxClauses {
		r, size := utf8.DecodeRuneInString(s)
		if unicode.IsSpace(r) {
			s = s[size:]
			continue
		}
		neg := false
		if r == '-' && len(s) > 1 {
			r2, _ := utf8.DecodeRuneInString(s[1:])
			if !unicode.IsSpace(r2) {
				neg = true
				s = s[1:]
			}
		}
		if strings.HasPrefix(s, "\"") {
			end := strings.IndexByte(s[1:], '"')
			var phrase string
			if end < 0 {
				phrase, s = s[1:], ""
			} else {
				phrase, s = s[1:1+end], s[2+end:]
			}
			words := strings.Fields(phrase)
			switch {
			case !hasWordChar(phrase):
			case len(words) == 1 && neg:
				q.NotWords = append(q.NotWords, words[0])
				n++
			case len(words) == 1:
				p.positive(&q, words[0])
				n++
			case neg:
				q.NotPhrases = append(q.NotPhrases, strings.Join(words, " "))
				n++
			default:
				p.positive(&q, strings.Join(words, " "))
				n++
			}
			p.afterClause(neg)
			continue
		}
		end := strings.IndexFunc(s, unicode.IsSpace)
		var tok string
		if end < 0 {
			tok, s = s, ""
		} else {
			tok, s = s[:end], s[end:]
		}
		if tok == "OR" && !neg {
			p.or()
			continue
		}
		if name, val, ok := strings.Cut(tok, ":"); ok && val != "" {
			switch strings.ToLower(name) {
			case "site":
				site := normalizeSite(val)
				if site == "" {
					continue
				}
				if neg {
					q.NotSites = append(q.NotSites, site)
				} else {
					q.Sites = append(q.Sites, site)
				}
				n++
				p.afterClause(true)
				continue
			case "type":
				t := strings.ToLower(strings.Trim(val, "\""))
				if t == "" {
					continue
				}
				if alias, ok := typeAliases[t]; ok {
					t = alias
				}
				if neg {
					q.NotTypes = append(q.NotTypes, t)
				} else {
					q.Types = append(q.Types, t)
				}
				n++
				p.afterClause(true)
				continue
			}
		}
		if !hasWordChar(tok) {
			continue
		}
		if neg {
			q.NotWords = append(q.NotWords, tok)
		} else {
			p.positive(&q, tok)
		}
		n++
		p.afterClause(neg)
	}
	return q
}

// orParser groups the alternatives of OR while ParseQuery reads clauses.
type orParser struct {
	// last is where the last clause went when it was a positive word or
	// phrase: 'w' (the last of Words), 'p' (of Phrases), 'o' (the last
	// group of Or); 0 after any other clause.
	last byte
	// pending is set by an OR that follows a positive word or phrase.
	pending bool
}

// positive adds the word or phrase t (a phrase holds a space) to q: to the
// current group after an OR, else to Words or Phrases.
func (p *orParser) positive(q *Query, t string) {
	if p.pending {
		switch p.last {
		case 'w':
			prev := q.Words[len(q.Words)-1]
			q.Words = shrink(q.Words)
			q.Or = append(q.Or, []string{prev, t})
		case 'p':
			prev := q.Phrases[len(q.Phrases)-1]
			q.Phrases = shrink(q.Phrases)
			q.Or = append(q.Or, []string{prev, t})
		case 'o':
			q.Or[len(q.Or)-1] = append(q.Or[len(q.Or)-1], t)
		}
		p.last, p.pending = 'o', false
		return
	}
	if strings.Contains(t, " ") {
		q.Phrases = append(q.Phrases, t)
		p.last = 'p'
	} else {
		q.Words = append(q.Words, t)
		p.last = 'w'
	}
}

// shrink drops the last element of s (nil when none is left).
func shrink(s []string) []string {
	if len(s) == 1 {
		return nil
	}
	return s[:len(s)-1]
}

// or notes an OR; it binds only right after a positive word or phrase.
func (p *orParser) or() { p.pending = p.last != 0 }

// afterClause ends a clause: one that is not a positive word or phrase
// (other is set) cancels the OR before it and cannot start a group.
func (p *orParser) afterClause(other bool) {
	if other {
		p.last, p.pending = 0, false
	}
}

// typeAliases maps common names to the families of TypeOf.
var typeAliases = map[string]string{
	"htm": "html", "xhtml": "html", "txt": "text", "plain": "text",
	"doc": "office", "docx": "office", "xls": "office", "xlsx": "office",
	"ppt": "office", "pptx": "office", "odt": "office",
}

// normalizeSite turns "https://www.Example.com/x" or "example.com." into a
// host name.
func normalizeSite(v string) string {
	v = strings.ToLower(strings.Trim(v, "\""))
	if i := strings.Index(v, "://"); i >= 0 {
		v = v[i+3:]
	}
	if i := strings.IndexAny(v, "/?#"); i >= 0 {
		v = v[:i]
	}
	if i := strings.LastIndexByte(v, '@'); i >= 0 {
		v = v[i+1:]
	}
	if strings.HasPrefix(v, "[") {
		if i := strings.IndexByte(v, ']'); i > 0 {
			return v[1:i]
		}
	} else if i := strings.LastIndexByte(v, ':'); i >= 0 {
		v = v[:i]
	}
	return strings.Trim(v, ".")
}

func hasWordChar(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) >= 0
}

// Empty reports whether q has no clause at all.
func (q Query) Empty() bool {
	return len(q.Words)+len(q.Phrases)+len(q.Or)+len(q.NotWords)+len(q.NotPhrases)+
		len(q.Sites)+len(q.NotSites)+len(q.Types)+len(q.NotTypes) == 0
}

// Terms returns the positive words and phrases, alternatives included
// (for highlighting).
func (q Query) Terms() []string {
	out := append(append([]string(nil), q.Words...), q.Phrases...)
	for _, g := range q.Or {
		out = append(out, g...)
	}
	return out
}

// String writes q back in the query language.
func (q Query) String() string {
	var parts []string
	add := func(prefix string, vals []string, quote bool) {
		for _, v := range vals {
			if quote {
				v = `"` + v + `"`
			}
			parts = append(parts, prefix+v)
		}
	}
	// A word that would read back as an exclusion or a filter came from
	// a quoted phrase of one word: quote it again.
	words := func(ws []string) []string {
		out := make([]string, len(ws))
		for i, w := range ws {
			name, _, filter := strings.Cut(w, ":")
			filter = filter && (strings.EqualFold(name, "site") || strings.EqualFold(name, "type"))
			if (strings.HasPrefix(w, "-") || filter || w == "OR") && !strings.Contains(w, `"`) {
				w = `"` + w + `"`
			}
			out[i] = w
		}
		return out
	}
	add("", words(q.Words), false)
	add("", q.Phrases, true)
	for _, g := range q.Or {
		alts := make([]string, len(g))
		for i, a := range g {
			if strings.Contains(a, " ") {
				alts[i] = `"` + a + `"`
			} else {
				alts[i] = words([]string{a})[0]
			}
		}
		parts = append(parts, strings.Join(alts, " OR "))
	}
	add("-", words(q.NotWords), false)
	add("-", q.NotPhrases, true)
	bracket := func(sites []string) []string {
		out := make([]string, len(sites))
		for i, v := range sites {
			if strings.Contains(v, ":") {
				v = "[" + v + "]" // an IPv6 address
			}
			out[i] = v
		}
		return out
	}
	add("site:", bracket(q.Sites), false)
	add("-site:", bracket(q.NotSites), false)
	add("type:", q.Types, false)
	add("-type:", q.NotTypes, false)
	return strings.Join(parts, " ")
}
