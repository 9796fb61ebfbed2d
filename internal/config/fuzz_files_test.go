package config

import (
	"strings"
	"testing"
)

// FuzzParseRuleFile: a rule file (a file named by a *_file rule) parses
// or fails with an error; every rule it returns has a valid type for its
// scope and no line break.
func FuzzParseRuleFile(f *testing.F) {
	f.Add([]byte("# comment\n\nexact:www.example.com\nregexp: ^a.*\\.com$\nipmask:10.0.0.0/8\n"), true)
	f.Add([]byte("prefix:http://a.example/x\n"), false)
	f.Add([]byte("suffix:.pdf\r\nregexp:(a+)+$\nip6mask:2001:db8::/32\n"), true)
	f.Add([]byte("nocolon\n"), false)
	f.Add([]byte("regexp:[\n"), false)
	f.Fuzz(func(t *testing.T, data []byte, domain bool) {
		scope := URIRules
		if domain {
			scope = DomainRules
		}
		rules, err := ParseRuleFile(data, scope)
		if err != nil {
			return
		}
		for _, r := range rules {
			s := string(r.Kind) + ":" + r.Pattern
			if strings.ContainsAny(s, "\n") || r.Pattern == "" {
				t.Fatalf("rule %q spans lines or is empty", s)
			}
			if !domain && (r.Kind == IPMask || r.Kind == IP6Mask) {
				t.Fatalf("rule %q in a URI rule file", s)
			}
		}
	})
}

// FuzzParseKey: a key file holds 64 hex digits or is refused.
func FuzzParseKey(f *testing.F) {
	f.Add([]byte(strings.Repeat("0f", 32) + "\n"))
	f.Add([]byte(strings.Repeat("zz", 32)))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, data []byte) {
		if k, err := ParseKey(data); err == nil && k == nil {
			t.Fatal("nil key without an error")
		}
	})
}
