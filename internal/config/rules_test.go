package config

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestIPMask(t *testing.T) {
	tests := []struct {
		in   string
		want string // "" = valid
	}{
		{"207.46.197.0-100", ""},
		{"207.46.190-197.100", ""},
		{"207.46.197.0/24", ""},
		{"207.46.197.0 /24", ""},
		{"207.46.197.0:255.255.255.0", ""},
		{"207.46.197.0:0xffffff00", ""},
		{"207.46.197.0:0xffffffff00", `invalid ipmask "207.46.197.0:0xffffffff00": a hexadecimal mask has 1 to 8 digits (32 bits)`},
		{"207.46.197.0/33", `invalid ipmask "207.46.197.0/33": prefix length must be 0 to 32`},
		{"207.46.197.100-0", `invalid ipmask "207.46.197.100-0": bad octet or range "100-0"`},
		{"207.46.197", `invalid ipmask "207.46.197": want a.b.c.d with ranges (a-b), a.b.c.d/N or a.b.c.d:mask`},
		{"::1/8", `invalid ipmask "::1/8": bad IPv4 address "::1"`},
		{"1.2.3.4:0xzz", `invalid ipmask "1.2.3.4:0xzz": bad hexadecimal mask "0xzz"`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got := ""
			if err := CheckIPMask(tt.in); err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestIP6Mask(t *testing.T) {
	tests := []struct {
		in   string
		want string
	}{
		{"2002:CF2E:C500-C564:0:0:0:0:0", ""},
		{"::ffff:207.46.197.0-100", ""},
		{"2002:CF2E:C500::/60", ""},
		{"2002:CF2E:C500:0:0:0:0:0/128", ""},
		{"2002:CF2E:C500-C564:0:0:0:0", `invalid ip6mask "2002:CF2E:C500-C564:0:0:0:0": want an IPv6 address with one range group, or address/N (an IPv6 address has 8 groups, or uses ::)`},
		{"2002::/129", `invalid ip6mask "2002::/129": prefix length must be 0 to 128`},
		{"2002:C564-C500::", `invalid ip6mask "2002:C564-C500::": range is reversed`},
		{"1-2:3-4::", `invalid ip6mask "1-2:3-4::": only one group may hold a range`},
		{"10.0.0.1", `invalid ip6mask "10.0.0.1": want an IPv6 address with one range group, or address/N`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got := ""
			if err := CheckIP6Mask(tt.in); err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestParseRuleFile(t *testing.T) {
	rules, err := ParseRuleFile([]byte("# comment\n\nexact:www.example.com\nregexp: ^a.*\\.com$\nipmask:10.0.0.0/8\n"), DomainRules)
	if err != nil {
		t.Fatal(err)
	}
	want := []Rule{{Kind: Exact, Pattern: "www.example.com"}, {Kind: Regexp, Pattern: `^a.*\.com$`}, {Kind: IPMask, Pattern: "10.0.0.0/8"}}
	if d := cmp.Diff(want, rules); d != "" {
		t.Errorf("(-want +got)\n%s", d)
	}
	// A URI rule keeps the colons after the first.
	rules, err = ParseRuleFile([]byte("prefix:http://a.example/x\n"), URIRules)
	if err != nil || rules[0].Pattern != "http://a.example/x" {
		t.Errorf("uri rule: %v %v", rules, err)
	}
	for _, tt := range []struct{ in, want string }{
		{"ipmask:10.0.0.0/8", `line 1: unknown rule type "ipmask" (want one of exact, prefix, suffix, regexp)`},
		{"\nprefx:a", `line 2: unknown rule type "prefx" (want one of exact, prefix, suffix, regexp) (did you mean "prefix"?)`},
		{"just text", `line 1: want ruletype:rule, got "just text"`},
		{"regexp:(", "line 1: invalid regular expression \"(\": error parsing regexp: missing closing ) in `(`"},
		{"exact:", "line 1: empty exact rule"},
	} {
		_, err := ParseRuleFile([]byte(tt.in), URIRules)
		if err == nil || err.Error() != tt.want {
			t.Errorf("%q: got %v, want %s", tt.in, err, tt.want)
		}
	}
}

func TestValueParsers(t *testing.T) {
	a, err := ParseErrorAction(" DELETE:3, RETRY:1 ")
	if err != nil || a != (ErrorAction{Delete: true, After: 3, Retry: 1}) {
		t.Errorf("action: %+v %v", a, err)
	}
	if a, _ := ParseErrorAction("DELETE, RETRY"); a != (ErrorAction{Delete: true, Retry: 1}) {
		t.Errorf("bare retry: %+v", a)
	}
	for _, bad := range []string{"", "KEEP,", "DELETE:-1", "RETRY:3", "KEEP, DELETE"} {
		if _, err := ParseErrorAction(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	ts, err := ParseTimeSlot("Wed:09-Wed:19")
	if err != nil || ts.StartMin != 9*60 || ts.EndMin != 19*60 || ts.StartDay != 3 {
		t.Errorf("slot: %+v %v", ts, err)
	}
	if ts, err := ParseTimeSlot("mon:21.00-Mon:22.30"); err != nil || ts.EndMin != 22*60+30 {
		t.Errorf("slot: %+v %v", ts, err)
	}
	for _, bad := range []string{"Mon:25-Mon:26", "Mon 9-10", "Mon:9.60-Mon:10"} {
		if _, err := ParseTimeSlot(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	c, err := ParseCredentials("user:pa:ss:contoso:ntlmv2")
	if err != nil || c != (Credentials{User: "user", Password: "pa:ss", Realm: "contoso", Scheme: "ntlmv2"}) {
		t.Errorf("credentials: %+v %v", c, err)
	}
	if _, err := ParseCredentials("u:p:realm:kerberos"); err == nil || err.Error() != `invalid credentials: unknown scheme "kerberos" (want one of basic, digest, ntlmv1, ntlmv2, auto)` {
		t.Errorf("bad scheme: %v", err)
	}
	p, err := ParseProxy("http://u:!ENC!x@proxy.example.com:3128")
	if err != nil || p != (Proxy{User: "u", Password: "!ENC!x", Host: "proxy.example.com", Port: 3128}) {
		t.Errorf("proxy: %+v %v", p, err)
	}
	r, err := ParseRewriteRule("#^(http://[^/]+)/index\\.html$#$1/#")
	if err != nil || r.Pattern != `^(http://[^/]+)/index\.html$` || r.Replacement != "$1/" {
		t.Errorf("rewrite: %+v %v", r, err)
	}
	if m, err := ParseCrawlMode("depth:4"); err != nil || m != (CrawlMode{Depth: 4}) {
		t.Errorf("mode: %+v %v", m, err)
	}
	pol := ErrorPolicy{{Code: "4xx", Action: ErrorAction{Delete: true}}, {Code: "408"}, {Code: "40x", Action: ErrorAction{Delete: true, After: 2}}}
	for code, want := range map[string]ErrorAction{"408": {}, "404": {Delete: true, After: 2}, "451": {Delete: true}} {
		if got, ok := pol.Lookup(code); !ok || got != want {
			t.Errorf("Lookup(%s) = %+v, want %+v", code, got, want)
		}
	}
	if _, ok := pol.Lookup("500"); ok {
		t.Errorf("500 matched")
	}
}
