package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/marshal"
)

// FuzzFromCrawlConfig: a crawl configuration received over MS-FSCMT
// (CMD_ADM_CONF_ADD, marshal bytes) rebuilds a collection or fails with an
// error, never a panic, whatever names and values it carries. Seeded with
// the spec's example configurations as a node scheduler receives them.
func FuzzFromCrawlConfig(f *testing.F) {
	files, _ := filepath.Glob("testdata/examples/*.xml")
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		cfg, err := Parse(file, data, &Options{SkipFileChecks: true})
		if err != nil {
			continue
		}
		cc := cmt.CrawlConfig{}
		for _, c := range cfg.Collections {
			cc.Collections = append(cc.Collections, c.CrawlConfig())
		}
		d, err := cc.Value()
		if err != nil {
			continue
		}
		if b, err := marshal.Encode(d); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := marshal.Decode(b)
		if err != nil {
			return
		}
		cc, err := cmt.CrawlConfigFromValue(v)
		if err != nil {
			return
		}
		for _, c := range cc.Collections {
			col, err := FromCrawlConfig("fuzz", c, &Options{SkipFileChecks: true})
			if err != nil {
				continue
			}
			if col.Name != c.Name {
				t.Fatalf("collection %q rebuilt as %q", c.Name, col.Name)
			}
		}
	})
}

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
