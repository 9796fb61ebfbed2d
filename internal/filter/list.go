package filter

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
)

// DefaultMatchTimeout bounds one regexp match.
const DefaultMatchTimeout = 100 * time.Millisecond

// ErrTimeout is wrapped by errors of a regexp match that ran out of time.
var ErrTimeout = errors.New("filter: regexp match timed out")

type options struct {
	kind    Kind
	baseDir string
	timeout time.Duration
	name    string
}

// Option configures Compile.
type Option func(*options)

// WithKind says whether the rules match domains or URIs (default URIs).
func WithKind(k Kind) Option { return func(o *options) { o.kind = k } }

// WithBaseDir resolves relative file rules against dir.
func WithBaseDir(dir string) Option { return func(o *options) { o.baseDir = dir } }

// WithMatchTimeout bounds each regexp match (default DefaultMatchTimeout).
func WithMatchTimeout(d time.Duration) Option { return func(o *options) { o.timeout = d } }

// WithName names the section ("exclude_uris") in errors and reasons.
func WithName(name string) Option { return func(o *options) { o.name = name } }

type entry struct {
	pat  string
	rule int
}

type regexRule struct {
	re   *regexp2.Regexp
	pre  *guarded // necessary condition on ASCII input (nil: none)
	rule int
}

// List is a compiled rule section. It is safe for concurrent use.
type List struct {
	name     string
	kind     Kind
	rules    []Rule   // after file expansion
	descs    []string // "section type:pattern" per rule
	timeouts []string // "section type:pattern: match timed out" per rule
	exact    map[string]int
	prefixes []entry // sorted, prefix-free
	suffixes []entry // sorted by reversed string, suffix-free
	regexps  []regexRule
	ips      []*AddrMask
	ipRules  []int
	runes    sync.Pool // *[]rune buffers for regexp2
}

// Compile compiles rules into a List. File rules are read and expanded.
// Errors name the section, the rule and, for files, the line.
func Compile(rules []Rule, opts ...Option) (*List, error) {
	o := options{timeout: DefaultMatchTimeout, name: "rules"}
	for _, opt := range opts {
		opt(&o)
	}
	if o.timeout <= 0 {
		o.timeout = DefaultMatchTimeout
	}
	l := &List{name: o.name, kind: o.kind, exact: map[string]int{}}
	l.runes.New = func() any { b := make([]rune, 0, 256); return &b }
	var prefixes, suffixes []entry
	var add func(r Rule, where string) error
	add = func(r Rule, where string) error {
		if err := checkKind(r.Type, o.kind); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		p := strings.TrimSpace(r.Pattern)
		if p == "" {
			return fmt.Errorf("%s: empty pattern", where)
		}
		if r.Type == File {
			sub, err := loadRuleFile(p, o.baseDir, o.kind)
			if err != nil {
				return fmt.Errorf("%s: %v", where, err)
			}
			for _, s := range sub {
				if err := add(s.Rule, fmt.Sprintf("%s: line %d: rule %s", where, s.line, s.Rule)); err != nil {
					return err
				}
			}
			return nil
		}
		if r.Type != Regexp {
			p = l.fold(r.Type, p)
		}
		idx := len(l.rules)
		l.rules = append(l.rules, Rule{Type: r.Type, Pattern: p})
		desc := l.name + " " + r.Type.String() + ":" + p
		l.descs = append(l.descs, desc)
		l.timeouts = append(l.timeouts, desc+": match timed out")
		switch r.Type {
		case Exact:
			if _, dup := l.exact[p]; !dup {
				l.exact[p] = idx
			}
		case Prefix:
			prefixes = append(prefixes, entry{p, idx})
		case Suffix:
			suffixes = append(suffixes, entry{p, idx})
		case Regexp:
			opt := regexp2.RegexOptions(regexp2.None)
			if o.kind == Domains {
				opt = regexp2.IgnoreCase
			}
			re, err := compileRegexp(p, opt)
			if err != nil {
				return fmt.Errorf("%s: %v", where, err)
			}
			re.MatchTimeout = o.timeout
			pre := analyze(p, o.kind == Domains).compile()
			l.regexps = append(l.regexps, regexRule{re: re, pre: pre, rule: idx})
		case IPMask, IP6Mask:
			parse := ParseIPMask
			if r.Type == IP6Mask {
				parse = ParseIP6Mask
			}
			m, err := parse(p)
			if err != nil {
				return fmt.Errorf("%s: %v", where, err)
			}
			l.ips = append(l.ips, m)
			l.ipRules = append(l.ipRules, idx)
		}
		return nil
	}
	for _, r := range rules {
		if err := add(r, fmt.Sprintf("filter: %s %s %q", o.name, r.Type, r.Pattern)); err != nil {
			return nil, err
		}
	}
	l.prefixes = prefixFree(prefixes, strings.Compare, strings.HasPrefix)
	l.suffixes = prefixFree(suffixes, revCompare, strings.HasSuffix)
	return l, nil
}

// compileRegexp compiles a .NET pattern, turning a panic inside the
// engine into an error.
func compileRegexp(p string, opt regexp2.RegexOptions) (re *regexp2.Regexp, err error) {
	defer func() {
		if r := recover(); r != nil {
			re, err = nil, fmt.Errorf("bad regular expression: %v", r)
		}
	}()
	re, err = regexp2.Compile(p, opt)
	if err != nil {
		return nil, fmt.Errorf("bad regular expression: %v", err)
	}
	return re, nil
}

// fold applies the case rules to an exact, prefix or suffix pattern:
// domains are lower case; in a URI pattern the scheme and authority are.
func (l *List) fold(t RuleType, p string) string {
	if l.kind == Domains {
		return strings.ToLower(p)
	}
	if t == Suffix {
		return p
	}
	i := strings.Index(p, "://")
	if i <= 0 {
		return p
	}
	for k := 0; k < i; k++ {
		c := p[k]
		if !isAlnum(c) && c != '+' && c != '-' && c != '.' {
			return p
		}
	}
	end := strings.IndexAny(p[i+3:], "/?#")
	if end < 0 {
		end = len(p)
	} else {
		end += i + 3
	}
	return strings.ToLower(p[:end]) + p[end:]
}

// prefixFree sorts es by cmp and drops every entry that has an earlier
// kept entry as prefix (or suffix), which keeps the boolean result of
// matching and lets match test only the greatest entry <= the input.
func prefixFree(es []entry, cmp func(a, b string) int, has func(s, p string) bool) []entry {
	slices.SortStableFunc(es, func(a, b entry) int { return cmp(a.pat, b.pat) })
	out := es[:0]
	for _, e := range es {
		if len(out) > 0 && has(e.pat, out[len(out)-1].pat) {
			continue
		}
		out = append(out, e)
	}
	return slices.Clip(out)
}

// revCompare compares the reversed strings of a and b.
func revCompare(a, b string) int {
	i, j := len(a)-1, len(b)-1
	for ; i >= 0 && j >= 0; i, j = i-1, j-1 {
		if a[i] != b[j] {
			if a[i] < b[j] {
				return -1
			}
			return 1
		}
	}
	switch {
	case i < 0 && j < 0:
		return 0
	case i < 0:
		return -1
	}
	return 1
}

// search returns the index of the greatest entry <= s, or -1.
func search(es []entry, s string, cmp func(a, b string) int) int {
	lo, hi := 0, len(es) // invariant: es[:lo] <= s, es[hi:] > s
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if cmp(es[m].pat, s) <= 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo - 1
}

// Len returns the number of rules (after file expansion).
func (l *List) Len() int {
	if l == nil {
		return 0
	}
	return len(l.rules)
}

// Rules returns the rules after file expansion and case folding.
func (l *List) Rules() []Rule { return slices.Clone(l.rules) }

// HasIPRules reports whether the list has ipmask or ip6mask rules.
func (l *List) HasIPRules() bool { return l != nil && len(l.ips) > 0 }

// HasNameRules reports whether the list has rules that match strings.
func (l *List) HasNameRules() bool { return l != nil && len(l.ips) < len(l.rules) }

// Match reports whether one rule matches s (a host for a domain list, a
// URI for a URI list). A regexp that times out does not match; use Find to
// tell.
func (l *List) Match(s string) bool {
	_, ok, _ := l.find(s)
	return ok
}

// MatchIP reports whether one ipmask or ip6mask rule matches ip.
func (l *List) MatchIP(ip netip.Addr) bool { return l.findIP(ip) >= 0 }

// Find returns a rule that matches s or ip (checked in this order:
// exact, prefix, suffix, regexp, then ipmask/ip6mask), and an error
// wrapping ErrTimeout when a regexp ran out of time before any rule
// matched.
func (l *List) Find(s string, ip netip.Addr) (Rule, bool, error) {
	i, ok, err := l.find(s)
	if !ok {
		if j := l.findIP(ip); j >= 0 {
			return l.rules[j], true, nil
		}
		if err != nil {
			return l.rules[i], false, fmt.Errorf("%w: %s", ErrTimeout, l.descs[i])
		}
		return Rule{}, false, nil
	}
	return l.rules[i], true, nil
}

func (l *List) findIP(ip netip.Addr) int {
	if l == nil || !ip.IsValid() {
		return -1
	}
	for k, m := range l.ips {
		if m.Match(ip) {
			return l.ipRules[k]
		}
	}
	return -1
}

// find matches the string rules. On a timeout it returns the index of
// the rule that timed out, ok false and a non-nil error.
func (l *List) find(s string) (int, bool, error) {
	if l == nil || len(l.rules) == 0 {
		return -1, false, nil
	}
	if l.kind == Domains && hasUpper(s) {
		s = strings.ToLower(s)
	}
	if len(l.exact) > 0 {
		if i, ok := l.exact[s]; ok {
			return i, true, nil
		}
	}
	if k := search(l.prefixes, s, strings.Compare); k >= 0 && strings.HasPrefix(s, l.prefixes[k].pat) {
		return l.prefixes[k].rule, true, nil
	}
	if k := search(l.suffixes, s, revCompare); k >= 0 && strings.HasSuffix(s, l.suffixes[k].pat) {
		return l.suffixes[k].rule, true, nil
	}
	if len(l.regexps) == 0 {
		return -1, false, nil
	}
	ascii := isASCII(s)
	var buf *[]rune
	timedOut := -1
	for k := range l.regexps {
		r := &l.regexps[k]
		if r.pre != nil && ascii && !r.pre.pass(s) {
			continue
		}
		if buf == nil {
			buf = l.runes.Get().(*[]rune)
			*buf = appendRunes((*buf)[:0], s)
		}
		ok, err := r.re.MatchRunes(*buf)
		if err != nil {
			if timedOut < 0 {
				timedOut = r.rule
			}
			continue
		}
		if ok {
			l.putRunes(buf)
			return r.rule, true, nil
		}
	}
	if buf != nil {
		l.putRunes(buf)
	}
	if timedOut >= 0 {
		return timedOut, false, ErrTimeout
	}
	return -1, false, nil
}

func (l *List) putRunes(buf *[]rune) {
	if cap(*buf) <= 64<<10 {
		l.runes.Put(buf)
	}
}

// appendRunes appends the runes of s as []rune(s) would produce them.
func appendRunes(dst []rune, s string) []rune {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			dst = append(dst, rune(c))
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		dst = append(dst, r)
		i += size
	}
	return dst
}

func hasUpper(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			return true
		}
	}
	return false
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
