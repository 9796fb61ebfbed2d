package config

import (
	"bufio"
	"bytes"
	"fmt"
	"net/netip"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dlclark/regexp2"
)

// RuleKind is the type of a filter rule: the attrib name inside
// include_domains, exclude_domains, include_uris or exclude_uris.
type RuleKind string

// Rule kinds (MS-FSCCFG 2.2.4.1, 2.2.4.3). IPMask and IP6Mask exist for
// domain rules only.
const (
	Exact   RuleKind = "exact"
	Prefix  RuleKind = "prefix"
	Suffix  RuleKind = "suffix"
	Regexp  RuleKind = "regexp"
	IPMask  RuleKind = "ipmask"
	IP6Mask RuleKind = "ip6mask"
	File    RuleKind = "file"
)

// Rule is one filter rule: a kind and a pattern. For a File rule, Pattern
// is the path as written and Path the path resolved against the directory
// of the configuration file; ReadRuleFile expands it.
type Rule struct {
	Kind    RuleKind
	Pattern string
	Path    string
}

// RuleSet is the rules of one section. Present distinguishes an absent
// section from an empty one (an empty include section matches everything,
// as does an absent one; an empty exclude section matches nothing).
type RuleSet struct {
	Present bool
	Rules   []Rule
}

// Scope is the four rule sets that decide whether a URI belongs to a
// collection, a subcollection or a priority level.
type Scope struct {
	IncludeDomains, ExcludeDomains, IncludeURIs, ExcludeURIs RuleSet
}

// Len returns the total number of rules.
func (s Scope) Len() int {
	return len(s.IncludeDomains.Rules) + len(s.ExcludeDomains.Rules) + len(s.IncludeURIs.Rules) + len(s.ExcludeURIs.Rules)
}

// ruleSet reads a rule section; dir resolves file rules.
func ruleSet(s *Section, dir string) RuleSet {
	if s == nil {
		return RuleSet{}
	}
	rs := RuleSet{Present: true}
	for _, p := range s.Params {
		for _, m := range p.Value.List {
			r := Rule{Kind: RuleKind(p.Name), Pattern: m}
			if r.Kind == File {
				r.Path = resolvePath(dir, m)
			}
			rs.Rules = append(rs.Rules, r)
		}
	}
	return rs
}

// scopeOf reads the rule sections directly inside s.
func scopeOf(s *Section, dir string) Scope {
	return Scope{
		IncludeDomains: ruleSet(s.Child("include_domains"), dir),
		ExcludeDomains: ruleSet(s.Child("exclude_domains"), dir),
		IncludeURIs:    ruleSet(s.Child("include_uris"), dir),
		ExcludeURIs:    ruleSet(s.Child("exclude_uris"), dir),
	}
}

func resolvePath(dir, p string) string {
	if filepath.IsAbs(p) || dir == "" {
		return p
	}
	return filepath.Join(dir, p)
}

// maxRuleFile caps the size of a rule file read by ReadRuleFile.
const maxRuleFile = 64 << 20

// ParseRuleFile parses the contents of a rule file: one "ruletype:rule" per
// line (MS-FSCCFG 2.2.4.1). Blank lines and lines starting with # are
// skipped (the spec does not say; see docs/decisions/filter.md). scope says which
// rule types are valid. Every rule is validated as in the configuration.
func ParseRuleFile(data []byte, scope RuleScope) ([]Rule, error) {
	if len(data) > maxRuleFile {
		return nil, fmt.Errorf("config: rule file larger than %d bytes", maxRuleFile)
	}
	valid := []string{"exact", "prefix", "suffix", "regexp"}
	if scope == DomainRules {
		valid = append(valid, "ipmask", "ip6mask")
	}
	var rules []Rule
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), maxRuleFile)
	line := 0
	for sc.Scan() {
		line++
		t := strings.TrimSpace(sc.Text())
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		kind, pat, ok := strings.Cut(t, ":")
		kind = strings.TrimSpace(kind)
		pat = strings.TrimSpace(pat)
		if !ok {
			return nil, fmt.Errorf("line %d: want ruletype:rule, got %q", line, Clip(t))
		}
		if !contains(valid, kind) {
			return nil, fmt.Errorf("line %d: unknown rule type %q (want one of %s)%s", line, Clip(kind), strings.Join(valid, ", "), suggest(kind, valid))
		}
		if pat == "" {
			return nil, fmt.Errorf("line %d: empty %s rule", line, kind)
		}
		if err := checkRule(RuleKind(kind), pat); err != nil {
			return nil, fmt.Errorf("line %d: %v", line, err)
		}
		rules = append(rules, Rule{Kind: RuleKind(kind), Pattern: pat})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %v", line+1, err)
	}
	return rules, nil
}

func checkRule(k RuleKind, pat string) error {
	switch k {
	case Regexp:
		return checkRegexp(nil, pat)
	case IPMask:
		return CheckIPMask(pat)
	case IP6Mask:
		return CheckIP6Mask(pat)
	}
	return nil
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// CompileRegexp compiles a .NET regular expression ([MC-RegEx]) as the
// configuration uses them: regexp2 in its default (.NET) mode.
func CompileRegexp(s string) (*regexp2.Regexp, error) {
	return regexp2.Compile(s, regexp2.None)
}

// CheckIPMask validates an IPv4 address mask (MS-FSCCFG 2.2.4.1): a range
// with a hyphen inside octets ("207.46.197.0-100"), a prefix
// ("207.46.197.0/24", spaces around the slash tolerated), or an address and
// a bit mask ("207.46.197.0:255.255.255.0" or "207.46.197.0:0xffffff00").
func CheckIPMask(s string) error {
	s = strings.TrimSpace(s)
	if a, n, ok := strings.Cut(s, "/"); ok {
		if _, err := netip.ParseAddr(strings.TrimSpace(a)); err != nil || !strings.Contains(a, ".") {
			return fmt.Errorf("invalid ipmask %q: bad IPv4 address %q", s, strings.TrimSpace(a))
		}
		if b, err := strconv.Atoi(strings.TrimSpace(n)); err != nil || b < 0 || b > 32 {
			return fmt.Errorf("invalid ipmask %q: prefix length must be 0 to 32", s)
		}
		return nil
	}
	if a, m, ok := strings.Cut(s, ":"); ok {
		ad, err := netip.ParseAddr(strings.TrimSpace(a))
		if err != nil || !ad.Is4() {
			return fmt.Errorf("invalid ipmask %q: bad IPv4 address %q", s, strings.TrimSpace(a))
		}
		m = strings.TrimSpace(m)
		if h, ok := strings.CutPrefix(strings.ToLower(m), "0x"); ok {
			if len(h) == 0 || len(h) > 8 {
				return fmt.Errorf("invalid ipmask %q: a hexadecimal mask has 1 to 8 digits (32 bits)", s)
			}
			if _, err := strconv.ParseUint(h, 16, 32); err != nil {
				return fmt.Errorf("invalid ipmask %q: bad hexadecimal mask %q", s, m)
			}
			return nil
		}
		if md, err := netip.ParseAddr(m); err != nil || !md.Is4() {
			return fmt.Errorf("invalid ipmask %q: bad mask %q (want a dotted quad or 0x followed by 8 hex digits)", s, m)
		}
		return nil
	}
	octets := strings.Split(s, ".")
	if len(octets) != 4 {
		return fmt.Errorf("invalid ipmask %q: want a.b.c.d with ranges (a-b), a.b.c.d/N or a.b.c.d:mask", s)
	}
	for _, o := range octets {
		lo, hi, isRange := strings.Cut(o, "-")
		l, err1 := parseOctet(lo)
		h, err2 := l, error(nil)
		if isRange {
			h, err2 = parseOctet(hi)
		}
		if err1 != nil || err2 != nil || h < l {
			return fmt.Errorf("invalid ipmask %q: bad octet or range %q", s, o)
		}
	}
	return nil
}

func parseOctet(s string) (int, error) {
	if s == "" || len(s) > 3 {
		return 0, fmt.Errorf("bad octet")
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > 255 {
		return 0, fmt.Errorf("bad octet")
	}
	return n, nil
}

// CheckIP6Mask validates an IPv6 address mask (MS-FSCCFG 2.2.4.1): a range
// with a hyphen inside one group ("2002:CF2E:C500-C564::", or
// "::ffff:207.46.197.0-100" inside the embedded IPv4 part) or a prefix
// ("2002:CF2E:C500::/60").
func CheckIP6Mask(s string) error {
	s = strings.TrimSpace(s)
	if a, n, ok := strings.Cut(s, "/"); ok {
		ad, err := netip.ParseAddr(strings.TrimSpace(a))
		if err != nil || !ad.Is6() {
			return fmt.Errorf("invalid ip6mask %q: bad IPv6 address %q%s", s, strings.TrimSpace(a), groupsHint(a))
		}
		if b, err := strconv.Atoi(strings.TrimSpace(n)); err != nil || b < 0 || b > 128 {
			return fmt.Errorf("invalid ip6mask %q: prefix length must be 0 to 128", s)
		}
		return nil
	}
	if strings.Count(s, "-") > 1 {
		return fmt.Errorf("invalid ip6mask %q: only one group may hold a range", s)
	}
	lo, hi := s, s
	if i := strings.Index(s, "-"); i >= 0 {
		// The range covers the group (or IPv4 octet) around the hyphen.
		start := strings.LastIndexAny(s[:i], ":.") + 1
		end := i + 1 + strings.IndexAny(s[i+1:]+":", ":.")
		lo = s[:i] + s[end:]
		hi = s[:start] + s[i+1:]
	}
	a, err1 := netip.ParseAddr(lo)
	b, err2 := netip.ParseAddr(hi)
	if err1 != nil || err2 != nil || !a.Is6() || !b.Is6() {
		return fmt.Errorf("invalid ip6mask %q: want an IPv6 address with one range group, or address/N%s", s, groupsHint(s))
	}
	if b.Less(a) {
		return fmt.Errorf("invalid ip6mask %q: range is reversed", s)
	}
	return nil
}

// groupsHint explains the spec's 7-group examples.
func groupsHint(s string) string {
	if !strings.Contains(s, "::") && strings.Count(s, ":") == 6 {
		return " (an IPv6 address has 8 groups, or uses ::)"
	}
	return ""
}
