package filter

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// RuleType is the kind of a rule: the attrib name in a rule section.
type RuleType uint8

// The rule types of MS-FSCCFG 2.2.4.1 and 2.2.4.3.
const (
	Exact RuleType = iota + 1
	Prefix
	Suffix
	Regexp
	IPMask
	IP6Mask
	File
)

var ruleTypeNames = [...]string{"", "exact", "prefix", "suffix", "regexp", "ipmask", "ip6mask", "file"}

func (t RuleType) String() string {
	if int(t) < len(ruleTypeNames) && t != 0 {
		return ruleTypeNames[t]
	}
	return fmt.Sprintf("RuleType(%d)", t)
}

// ParseRuleType returns the RuleType named s (as in the configuration).
func ParseRuleType(s string) (RuleType, error) {
	for i, n := range ruleTypeNames {
		if i > 0 && n == s {
			return RuleType(i), nil
		}
	}
	return 0, fmt.Errorf("filter: unknown rule type %q", s)
}

// Rule is one rule: a type and its pattern (one member of the attrib).
type Rule struct {
	Type    RuleType
	Pattern string
}

func (r Rule) String() string { return r.Type.String() + ":" + r.Pattern }

// Kind says what a List matches.
type Kind uint8

const (
	// URIs: include_uris and exclude_uris (no ipmask/ip6mask).
	URIs Kind = iota
	// Domains: include_domains and exclude_domains.
	Domains
)

// maxRuleFileSize caps a rule file.
const maxRuleFileSize = 64 << 20

// fileRule is a rule read from a rule file, with its line number.
type fileRule struct {
	Rule
	line int
}

// loadRuleFile reads a file rule: one "ruletype:rule" per line.
func loadRuleFile(path, baseDir string, kind Kind) ([]fileRule, error) {
	if !filepath.IsAbs(path) && baseDir != "" {
		path = filepath.Join(baseDir, path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxRuleFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxRuleFileSize {
		return nil, fmt.Errorf("larger than %d bytes", maxRuleFileSize)
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	var rules []fileRule
	for line := 1; sc.Scan(); line++ {
		s := strings.TrimSpace(sc.Text())
		if s == "" || s[0] == '#' {
			continue
		}
		name, pattern, ok := strings.Cut(s, ":")
		if !ok {
			return nil, fmt.Errorf("line %d: %q is not \"ruletype:rule\"", line, s)
		}
		t, err := ParseRuleType(strings.TrimSpace(strings.ToLower(name)))
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		if t == File {
			return nil, fmt.Errorf("line %d: a rule file cannot include another file", line)
		}
		if err := checkKind(t, kind); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		rules = append(rules, fileRule{Rule{Type: t, Pattern: strings.TrimSpace(pattern)}, line})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return rules, nil
}

func checkKind(t RuleType, kind Kind) error {
	if t < Exact || t > File {
		return fmt.Errorf("filter: unknown rule type %d", t)
	}
	if kind == URIs && (t == IPMask || t == IP6Mask) {
		return fmt.Errorf("filter: %s rules apply to domains only", t)
	}
	return nil
}
