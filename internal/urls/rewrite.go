package urls

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
)

// DefaultMatchTimeout bounds one regular-expression match, so a rule with
// catastrophic backtracking cannot stall the crawler.
const DefaultMatchTimeout = 100 * time.Millisecond

// maxRewriteLength caps the URI a rewrite rule may produce.
const maxRewriteLength = MaxInputLength

// RewriteRule is one parsed rewrite_rules entry.
type RewriteRule struct {
	// Source is the rule as written in the configuration.
	Source string
	// Pattern is the match_pattern, a .NET regular expression.
	Pattern string
	// Replacement is the replacement_string as written.
	Replacement string

	re   *regexp2.Regexp
	tmpl []tmplPart
}

type tmplPart struct {
	lit   string
	group int    // -1 for a literal
	name  string // named group, when not ""
}

// ParseRewriteRule parses one rewrite_rules member. MS-FSCCFG 2.2.3: "The
// format of the rewrite rule is "*match_pattern*replacement_string*", where
// * is any character that is not white space."
//
// The first character is the delimiter, as in sed. A delimiter preceded by
// a backslash does not end a part: in the pattern the backslash is kept
// when the delimiter is punctuation (where "\/" is a valid .NET escape for
// "/") and dropped otherwise; in the replacement "\<delimiter>" is the
// delimiter. Nothing but white space may follow the closing delimiter.
//
// The replacement may refer to groups as $1, ${1}, ${name} (.NET) or \1,
// \g<name> (Python, the language of FAST's crawler); "$$" and "\\" are a
// literal '$' and '\'. Only the first match in the URI is replaced: the
// spec's replacement "MUST replace the first expression".
func ParseRewriteRule(rule string, timeout time.Duration) (*RewriteRule, error) {
	s := strings.TrimSpace(rule)
	if s == "" {
		return nil, fmt.Errorf("urls: rewrite rule %q: empty", rule)
	}
	delim, size := utf8.DecodeRuneInString(s)
	if unicode.IsSpace(delim) || delim == '\\' {
		return nil, fmt.Errorf("urls: rewrite rule %q: bad delimiter %q", rule, delim)
	}
	body := s[size:]
	pattern, rest, ok := splitDelim(body, delim, true)
	if !ok {
		return nil, fmt.Errorf("urls: rewrite rule %q: missing delimiter %q after the pattern", rule, delim)
	}
	repl, tail, ok := splitDelim(rest, delim, false)
	if !ok {
		return nil, fmt.Errorf("urls: rewrite rule %q: missing closing delimiter %q", rule, delim)
	}
	if strings.TrimSpace(tail) != "" {
		return nil, fmt.Errorf("urls: rewrite rule %q: text %q after the closing delimiter", rule, tail)
	}
	if pattern == "" {
		return nil, fmt.Errorf("urls: rewrite rule %q: empty pattern", rule)
	}
	re, err := compileRegexp(pattern, regexp2.None)
	if err != nil {
		return nil, fmt.Errorf("urls: rewrite rule %q: %w", rule, err)
	}
	if timeout <= 0 {
		timeout = DefaultMatchTimeout
	}
	re.MatchTimeout = timeout
	r := &RewriteRule{Source: rule, Pattern: pattern, Replacement: repl, re: re}
	if r.tmpl, err = parseTemplate(repl, re); err != nil {
		return nil, fmt.Errorf("urls: rewrite rule %q: %w", rule, err)
	}
	return r, nil
}

// compileRegexp compiles a .NET pattern, turning a panic inside the engine
// into an error.
func compileRegexp(pattern string, opt regexp2.RegexOptions) (re *regexp2.Regexp, err error) {
	defer func() {
		if p := recover(); p != nil {
			re, err = nil, fmt.Errorf("bad regular expression %q: %v", pattern, p)
		}
	}()
	re, err = regexp2.Compile(pattern, opt)
	if err != nil {
		return nil, fmt.Errorf("bad regular expression: %v", err)
	}
	return re, nil
}

// splitDelim returns the text of s before the first delimiter that is not
// escaped by a backslash, and the text after it.
func splitDelim(s string, delim rune, isPattern bool) (part, rest string, ok bool) {
	var b strings.Builder
	dl := string(delim)
	keepBackslash := isPattern && delim < utf8.RuneSelf && !isAlpha(byte(delim)) && !isDigit(byte(delim)) && delim != '_'
	for i := 0; i < len(s); {
		if s[i] == '\\' && i+1 < len(s) {
			if strings.HasPrefix(s[i+1:], dl) {
				if keepBackslash {
					b.WriteByte('\\')
				}
				b.WriteString(dl)
				i += 1 + len(dl)
				continue
			}
			b.WriteString(s[i : i+2])
			i += 2
			continue
		}
		if strings.HasPrefix(s[i:], dl) {
			return b.String(), s[i+len(dl):], true
		}
		b.WriteByte(s[i])
		i++
	}
	return "", "", false
}

// parseTemplate splits a replacement into literals and group references.
func parseTemplate(repl string, re *regexp2.Regexp) ([]tmplPart, error) {
	var parts []tmplPart
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			parts = append(parts, tmplPart{lit: lit.String(), group: -1})
			lit.Reset()
		}
	}
	groupRef := func(num int, name string) error {
		if name != "" {
			if n, err := strconv.Atoi(name); err == nil {
				num, name = n, ""
			} else if re.GroupNumberFromName(name) < 0 {
				return fmt.Errorf("replacement refers to unknown group %q", name)
			}
		}
		if name == "" && re.GroupNameFromNumber(num) == "" {
			return fmt.Errorf("replacement refers to group %d, the pattern has no such group", num)
		}
		flush()
		parts = append(parts, tmplPart{group: num, name: name})
		return nil
	}
	digits := func(s string) int { // up to two digits
		n := 0
		for n < len(s) && n < 2 && isDigit(s[n]) {
			n++
		}
		return n
	}
	for i := 0; i < len(repl); i++ {
		c := repl[i]
		switch {
		case c == '$' && i+1 < len(repl) && repl[i+1] == '$':
			lit.WriteByte('$')
			i++
		case c == '$' && i+1 < len(repl) && repl[i+1] == '{':
			end := strings.IndexByte(repl[i:], '}')
			if end < 0 {
				return nil, fmt.Errorf("unterminated ${ in replacement")
			}
			if err := groupRef(0, repl[i+2:i+end]); err != nil {
				return nil, err
			}
			i += end
		case c == '$' && i+1 < len(repl) && isDigit(repl[i+1]):
			n := digits(repl[i+1:])
			num, _ := strconv.Atoi(repl[i+1 : i+1+n])
			if err := groupRef(num, ""); err != nil {
				return nil, err
			}
			i += n
		case c == '\\' && i+1 < len(repl) && isDigit(repl[i+1]):
			n := digits(repl[i+1:])
			num, _ := strconv.Atoi(repl[i+1 : i+1+n])
			if err := groupRef(num, ""); err != nil {
				return nil, err
			}
			i += n
		case c == '\\' && strings.HasPrefix(repl[i:], `\g<`):
			end := strings.IndexByte(repl[i:], '>')
			if end < 0 {
				return nil, fmt.Errorf(`unterminated \g< in replacement`)
			}
			if err := groupRef(0, repl[i+3:i+end]); err != nil {
				return nil, err
			}
			i += end
		case c == '\\' && i+1 < len(repl) && repl[i+1] == '\\':
			lit.WriteByte('\\')
			i++
		default:
			lit.WriteByte(c)
		}
	}
	flush()
	return parts, nil
}

// Apply rewrites the first match of the rule's pattern in uri. It returns
// uri unchanged when the pattern does not match, and an error when the
// match times out or the result is too long.
func (r *RewriteRule) Apply(uri string) (string, error) {
	m, err := r.re.FindStringMatch(uri)
	if err != nil {
		return uri, fmt.Errorf("urls: rewrite rule %q: %w", r.Source, err)
	}
	if m == nil {
		return uri, nil
	}
	var b strings.Builder
	b.WriteString(uri[:runeOffset(uri, m.Index)])
	for _, p := range r.tmpl {
		if p.group < 0 && p.name == "" {
			b.WriteString(p.lit)
			continue
		}
		var g *regexp2.Group
		if p.name != "" {
			g = m.GroupByName(p.name)
		} else {
			g = m.GroupByNumber(p.group)
		}
		if g != nil && len(g.Captures) > 0 {
			b.WriteString(runeSlice(uri, g.Index, g.Length))
		}
		if b.Len() > maxRewriteLength {
			return uri, fmt.Errorf("urls: rewrite rule %q: %w", r.Source, ErrTooLong)
		}
	}
	b.WriteString(uri[runeOffset(uri, m.Index+m.Length):])
	if b.Len() > maxRewriteLength {
		return uri, fmt.Errorf("urls: rewrite rule %q: %w", r.Source, ErrTooLong)
	}
	return b.String(), nil
}

// Rewriter applies a list of rewrite rules in order, each to the output of
// the one before.
type Rewriter struct {
	Rules []*RewriteRule
}

// NewRewriter parses the rewrite_rules members; timeout bounds each match
// (0: DefaultMatchTimeout).
func NewRewriter(rules []string, timeout time.Duration) (*Rewriter, error) {
	rw := &Rewriter{}
	for _, s := range rules {
		r, err := ParseRewriteRule(s, timeout)
		if err != nil {
			return nil, err
		}
		rw.Rules = append(rw.Rules, r)
	}
	return rw, nil
}

// Rewrite applies every rule to uri in order.
func (rw *Rewriter) Rewrite(uri string) (string, error) {
	var err error
	for _, r := range rw.Rules {
		if uri, err = r.Apply(uri); err != nil {
			return uri, err
		}
	}
	return uri, nil
}

// runeOffset returns the byte offset of the n-th rune of s, counting runes
// as regexp2 does ([]rune(s): an invalid byte is one rune).
func runeOffset(s string, n int) int {
	off := 0
	for ; n > 0 && off < len(s); n-- {
		_, size := utf8.DecodeRuneInString(s[off:])
		off += size
	}
	return off
}

func runeSlice(s string, start, length int) string {
	i := runeOffset(s, start)
	return s[i : i+runeOffset(s[i:], length)]
}
