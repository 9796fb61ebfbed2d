package filter

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func mustCompile(t testing.TB, kind Kind, rules ...Rule) *List {
	t.Helper()
	l, err := Compile(rules, WithKind(kind), WithName("test"))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestListDomains(t *testing.T) {
	l := mustCompile(t, Domains,
		Rule{Exact, " WWW.Contoso.com "},
		Rule{Prefix, "intranet."},
		Rule{Suffix, ".fabrikam.com"},
		Rule{Regexp, `^web\d+\.Example\.org$`},
	)
	tests := []struct {
		host string
		want bool
	}{
		{"www.contoso.com", true},
		{"WWW.CONTOSO.COM", true},
		{"contoso.com", false},
		{"www.contoso.com.evil", false},
		{"intranet.anything", true},
		{"xintranet.a", false},
		{"a.b.fabrikam.com", true},
		{"fabrikam.com", false},
		{"web12.example.org", true},
		{"WEB12.EXAMPLE.ORG", true},
		{"web.example.org", false},
		{"", false},
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			if got := l.Match(tt.host); got != tt.want {
				t.Errorf("Match(%q) = %v, want %v", tt.host, got, tt.want)
			}
		})
	}
}

func TestListURIs(t *testing.T) {
	l := mustCompile(t, URIs,
		Rule{Exact, "HTTP://WWW.Contoso.com/Index.html"},
		Rule{Prefix, "http://www.contoso.com/docs/"},
		Rule{Suffix, ".PDF"},
		Rule{Regexp, `\?.*sessionid=`},
		Rule{Regexp, `^https://[^/]+/cal/\d{4}/`},
	)
	tests := []struct {
		uri  string
		want bool
	}{
		{"http://www.contoso.com/Index.html", true},
		{"http://www.contoso.com/index.html", false}, // paths are case-sensitive
		{"http://www.contoso.com/docs/a", true},
		{"http://www.contoso.com/Docs/a", false},
		{"http://h/x.PDF", true},
		{"http://h/x.pdf", false},
		{"http://h/p?a=1&sessionid=2", true},
		{"http://h/p?a=1", false},
		{"https://h/cal/2024/01", true},
		{"https://h/cal/24/01", false},
	}
	for _, tt := range tests {
		t.Run(tt.uri, func(t *testing.T) {
			if got := l.Match(tt.uri); got != tt.want {
				t.Errorf("Match(%q) = %v, want %v", tt.uri, got, tt.want)
			}
		})
	}
}

// TestPrefixSuffixAgainstBruteForce checks the sorted prefix-free search
// against a linear scan.
func TestPrefixSuffixAgainstBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	word := func(n int) string {
		b := make([]byte, 1+r.IntN(n))
		for i := range b {
			b[i] = "ab/."[r.IntN(4)]
		}
		return string(b)
	}
	for round := 0; round < 200; round++ {
		var rules []Rule
		var pre, suf []string
		for i := 0; i < 1+r.IntN(12); i++ {
			p := word(5)
			if r.IntN(2) == 0 {
				rules = append(rules, Rule{Prefix, p})
				pre = append(pre, p)
			} else {
				rules = append(rules, Rule{Suffix, p})
				suf = append(suf, p)
			}
		}
		l := mustCompile(t, URIs, rules...)
		for i := 0; i < 200; i++ {
			s := word(8)
			want := false
			for _, p := range pre {
				want = want || strings.HasPrefix(s, p)
			}
			for _, p := range suf {
				want = want || strings.HasSuffix(s, p)
			}
			if got := l.Match(s); got != want {
				t.Fatalf("rules %v: Match(%q) = %v, want %v", rules, s, got, want)
			}
		}
	}
}

func TestIPMask(t *testing.T) {
	tests := []struct {
		mask string
		in   []string
		out  []string
	}{
		// The examples of MS-FSCCFG 2.2.4.1.
		{"207.46.197.0-100", []string{"207.46.197.0", "207.46.197.100", "::ffff:207.46.197.50"}, []string{"207.46.197.101", "207.46.196.50"}},
		{"207.46.190-197.100", []string{"207.46.190.100", "207.46.197.100"}, []string{"207.46.198.100", "207.46.190.101"}},
		{"207.46.197.0 /24", []string{"207.46.197.0", "207.46.197.255"}, []string{"207.46.198.0"}},
		{"207.46.197.0:255.255.255.0", []string{"207.46.197.7"}, []string{"207.46.196.7"}},
		{"207.46.197.0:0xffffffff00", []string{"207.46.197.7"}, []string{"207.46.196.7"}},
		{"207.46.197.0:ffffff00", []string{"207.46.197.7"}, []string{"207.46.196.7"}},
		{"10.0.0.0/8", []string{"10.1.2.3"}, []string{"11.0.0.0", "2001:db8::1"}},
		{"0.0.0.0/0", []string{"1.2.3.4"}, []string{"::1"}},
		{"192.168.1.1", []string{"192.168.1.1"}, []string{"192.168.1.2"}},
		{"10.0.0.0:255.0.255.0", []string{"10.9.0.9"}, []string{"10.9.1.9"}},
	}
	for _, tt := range tests {
		t.Run(tt.mask, func(t *testing.T) {
			m, err := ParseIPMask(tt.mask)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range tt.in {
				if !m.Match(netip.MustParseAddr(s)) {
					t.Errorf("%s does not match %s", tt.mask, s)
				}
			}
			for _, s := range tt.out {
				if m.Match(netip.MustParseAddr(s)) {
					t.Errorf("%s matches %s", tt.mask, s)
				}
			}
			if m.Match(netip.Addr{}) {
				t.Error("matches the zero Addr")
			}
		})
	}
	for _, bad := range []string{"", "1.2.3", "1.2.3.4/33", "1.2.3.4/-1", "1.2.3.300", "1.2.3.4-3", "1.2.3.4:zz", "1.2.3.4:", "a.b.c.d", "1.2.3.4-5.6"} {
		if _, err := ParseIPMask(bad); err == nil {
			t.Errorf("ParseIPMask(%q): no error", bad)
		}
	}
}

func TestIP6Mask(t *testing.T) {
	tests := []struct {
		mask string
		in   []string
		out  []string
	}{
		// The examples of MS-FSCCFG 2.2.4.1 (7 groups, as printed).
		{"2002:CF2E:C500-C564:0:0:0:0", []string{"2002:cf2e:c500::", "2002:cf2e:c564::"}, []string{"2002:cf2e:c565::", "2002:cf2e:c500::1"}},
		{"::ffff:207.46.197.0-100", []string{"::ffff:207.46.197.7", "207.46.197.7"}, []string{"207.46.197.101"}},
		{"2002:CF2E:C500:0:0:0:0/60", []string{"2002:cf2e:c500::1", "2002:cf2e:c500:f:ffff::"}, []string{"2002:cf2e:c500:10::", "2002:cf2e:c501::"}},
		{"2001:db8::/32", []string{"2001:db8:1::1"}, []string{"2001:db9::1", "1.2.3.4"}},
		{"::/0", []string{"::1", "1.2.3.4"}, nil},
		{"fe80::1-ff", []string{"fe80::1", "fe80::ff"}, []string{"fe80::100", "fe81::1"}},
	}
	for _, tt := range tests {
		t.Run(tt.mask, func(t *testing.T) {
			m, err := ParseIP6Mask(tt.mask)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range tt.in {
				if !m.Match(netip.MustParseAddr(s)) {
					t.Errorf("%s does not match %s", tt.mask, s)
				}
			}
			for _, s := range tt.out {
				if m.Match(netip.MustParseAddr(s)) {
					t.Errorf("%s matches %s", tt.mask, s)
				}
			}
		})
	}
	for _, bad := range []string{"", "1::2::3", "2002:CF2E", "2002::/129", "12345::", "1:2:3:4:5:6:7:8:9", "::1.2.3", "fe80::1%eth0/64", "1.2.3.4::"} {
		if _, err := ParseIP6Mask(bad); err == nil {
			t.Errorf("ParseIP6Mask(%q): no error", bad)
		}
	}
}

func TestFileRules(t *testing.T) {
	dir := t.TempDir()
	content := "\xef\xbb\xbf# contoso rules\n\nexact:www.contoso.com\r\nsuffix: .fabrikam.com \nregexp:^web\\d+\\.\nipmask:10.0.0.0/8\n"
	if err := os.WriteFile(filepath.Join(dir, "domains.txt"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := Compile([]Rule{{File, "domains.txt"}}, WithKind(Domains), WithBaseDir(dir))
	if err != nil {
		t.Fatal(err)
	}
	want := []Rule{{Exact, "www.contoso.com"}, {Suffix, ".fabrikam.com"}, {Regexp, `^web\d+\.`}, {IPMask, "10.0.0.0/8"}}
	if diff := cmp.Diff(want, l.Rules()); diff != "" {
		t.Errorf("rules (-want +got):\n%s", diff)
	}
	for host, want := range map[string]bool{"www.contoso.com": true, "a.fabrikam.com": true, "web7.x": true, "other": false} {
		if got := l.Match(host); got != want {
			t.Errorf("Match(%q) = %v", host, got)
		}
	}
	if !l.MatchIP(netip.MustParseAddr("10.2.3.4")) {
		t.Error("ipmask from file does not match")
	}

	// URI file: URIs contain colons, the split is at the first one.
	if err := os.WriteFile(filepath.Join(dir, "uris.txt"), []byte("prefix:http://www.contoso.com/a:b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ul, err := Compile([]Rule{{File, filepath.Join(dir, "uris.txt")}})
	if err != nil {
		t.Fatal(err)
	}
	if !ul.Match("http://www.contoso.com/a:b/c") {
		t.Error("URI file rule does not match")
	}

	errs := map[string]string{
		"bad type":   "bogus:x\n",
		"no colon":   "exact www.contoso.com\n",
		"nested":     "file:other.txt\n",
		"bad regexp": "regexp:(\n",
		"ip in uris": "ipmask:10.0.0.0/8\n",
	}
	for name, content := range errs {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(dir, strings.ReplaceAll(name, " ", "_")+".txt")
			if err := os.WriteFile(p, []byte("exact:ok\n"+content), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Compile([]Rule{{File, p}}, WithName("exclude_uris"))
			if err == nil {
				t.Fatal("no error")
			}
			if msg := err.Error(); !strings.Contains(msg, "exclude_uris") || !strings.Contains(msg, p) || !strings.Contains(msg, "line 2") {
				t.Errorf("error %q does not name the section, file and line", msg)
			}
		})
	}
	if _, err := Compile([]Rule{{File, "missing.txt"}}, WithBaseDir(dir)); err == nil || !strings.Contains(err.Error(), "missing.txt") {
		t.Errorf("missing file: %v", err)
	}
}

func TestCompileErrors(t *testing.T) {
	tests := []struct {
		name  string
		kind  Kind
		rules []Rule
	}{
		{"empty pattern", URIs, []Rule{{Prefix, "  "}}},
		{"bad regexp", URIs, []Rule{{Regexp, "a(b"}}},
		{"ipmask on URIs", URIs, []Rule{{IPMask, "10.0.0.0/8"}}},
		{"bad ipmask", Domains, []Rule{{IPMask, "10.0.0.0/40"}}},
		{"bad ip6mask", Domains, []Rule{{IP6Mask, "zz::"}}},
		{"unknown type", URIs, []Rule{{RuleType(42), "x"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Compile(tt.rules, WithKind(tt.kind), WithName("include_x"))
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.HasPrefix(err.Error(), "filter: include_x") {
				t.Errorf("error %q does not name the section", err)
			}
		})
	}
}

func TestParseRuleType(t *testing.T) {
	for _, name := range []string{"exact", "prefix", "suffix", "regexp", "ipmask", "ip6mask", "file"} {
		rt, err := ParseRuleType(name)
		if err != nil || rt.String() != name {
			t.Errorf("ParseRuleType(%q) = %v, %v", name, rt, err)
		}
	}
	if _, err := ParseRuleType("Exact"); err == nil {
		t.Error("rule types are lower case in the configuration")
	}
}

func TestFilterCombination(t *testing.T) {
	f, err := New(Config{
		IncludeDomains: []Rule{{Suffix, ".contoso.com"}, {Exact, "contoso.com"}, {IPMask, "10.0.0.0/8"}},
		ExcludeDomains: []Rule{{Prefix, "private."}, {Regexp, `^test\d*\.`}, {IPMask, "10.66.0.0/16"}},
		IncludeURIs:    []Rule{{Prefix, "http://"}, {Prefix, "https://"}},
		ExcludeURIs:    []Rule{{Suffix, ".exe"}, {Regexp, `[?&]sid=`}},
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		uri, ip string
		ok      bool
		reason  string
	}{
		{"http://www.contoso.com/", "", true, ""},
		{"http://contoso.com/a", "", true, ""},
		{"http://WWW.Contoso.COM/a", "", true, ""},
		{"http://www.fabrikam.com/", "", false, ReasonNoIncludeDomain},
		{"http://www.fabrikam.com/", "10.1.2.3", true, ""},
		{"http://10.1.2.3/", "", true, ""}, // IP literal host stands for itself
		{"http://[::ffff:10.1.2.3]/", "", true, ""},
		{"http://private.contoso.com/", "", false, "exclude_domains prefix:private."},
		{"http://test7.contoso.com/", "", false, `exclude_domains regexp:^test\d*\.`},
		{"http://www.contoso.com/", "10.66.1.1", false, "exclude_domains ipmask:10.66.0.0/16"},
		{"ftp://www.contoso.com/", "", false, ReasonNoIncludeURI},
		{"http://www.contoso.com/setup.exe", "", false, "exclude_uris suffix:.exe"},
		{"http://www.contoso.com/p?a=1&sid=9", "", false, "exclude_uris regexp:[?&]sid="},
		{"http://user:pw@www.contoso.com:8080/", "", true, ""},
		{"not a uri", "", false, ReasonNoHost},
	}
	for _, tt := range tests {
		t.Run(tt.uri+" "+tt.ip, func(t *testing.T) {
			var ip netip.Addr
			if tt.ip != "" {
				ip = netip.MustParseAddr(tt.ip)
			}
			for i := 0; i < 2; i++ { // twice: the second answer comes from the cache
				ok, reason := f.Allowed(tt.uri, ip)
				if ok != tt.ok || reason != tt.reason {
					t.Errorf("Allowed(%q, %v) = %v, %q; want %v, %q", tt.uri, ip, ok, reason, tt.ok, tt.reason)
				}
			}
		})
	}
	if !f.UsesIP() {
		t.Error("UsesIP = false")
	}
	u, _ := url.Parse("http://www.contoso.com/x")
	if ok, _ := f.AllowedURL(u, netip.Addr{}); !ok {
		t.Error("AllowedURL rejected")
	}
}

// TestEmptySections checks the spec's rule for empty sections: an empty
// include section matches everything, an empty exclude section nothing.
func TestEmptySections(t *testing.T) {
	f, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	if ok, reason := f.Allowed("http://anything.example/x", netip.Addr{}); !ok {
		t.Errorf("empty filter rejects: %s", reason)
	}
	if f.UsesIP() {
		t.Error("UsesIP on an empty filter")
	}
	// An include_domains section with only ipmask rules rejects a host
	// whose address is unknown.
	f, err = New(Config{IncludeDomains: []Rule{{IPMask, "10.0.0.0/8"}}})
	if err != nil {
		t.Fatal(err)
	}
	if ok, _ := f.Allowed("http://h.example/", netip.Addr{}); ok {
		t.Error("unknown address accepted by an ipmask-only include section")
	}
	if ok, _ := f.Allowed("http://h.example/", netip.MustParseAddr("10.0.0.1")); !ok {
		t.Error("matching address rejected")
	}
}

func TestRegexpTimeout(t *testing.T) {
	f, err := New(Config{
		ExcludeURIs:  []Rule{{Regexp, `^(a+)+$`}},
		MatchTimeout: time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	uri := "http://h/" + strings.Repeat("a", 30) + "!"
	// The regexp is anchored at ^ and the URI starts with "http", so make
	// one that does start with a's.
	l, err := Compile([]Rule{{Regexp, `^(a+)+$`}}, WithMatchTimeout(time.Millisecond), WithName("exclude_uris"))
	if err != nil {
		t.Fatal(err)
	}
	_, ok, err := l.Find(strings.Repeat("a", 40)+"!", netip.Addr{})
	if ok || !IsTimeout(err) {
		t.Errorf("Find = %v, %v; want a timeout", ok, err)
	}
	if ok, reason := f.Allowed(uri, netip.Addr{}); !ok {
		t.Errorf("rejected a URI the regexp cannot match: %s", reason)
	}
	f, err = New(Config{ExcludeURIs: []Rule{{Regexp, `(a+)+$`}}, MatchTimeout: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ok, reason := f.Allowed("http://h/"+strings.Repeat("a", 40)+"!", netip.Addr{})
	if ok || !strings.Contains(reason, "timed out") {
		t.Errorf("Allowed = %v, %q; want a timeout rejection", ok, reason)
	}
}

func TestFilterConcurrent(t *testing.T) {
	f, err := New(Config{
		IncludeDomains: []Rule{{Regexp, `\.example\.(com|org)$`}},
		ExcludeURIs:    []Rule{{Regexp, `/private/`}},
		CacheSize:      8,
	})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 500; i++ {
				host := fmt.Sprintf("h%d.example.%s", i%50, []string{"com", "net"}[i%2])
				want := i%2 == 0 && i%3 != 0
				path := "/public/"
				if i%3 == 0 {
					path = "/private/"
				}
				if ok, reason := f.Allowed("http://"+host+path, netip.Addr{}); ok != want {
					t.Errorf("Allowed(%s%s) = %v (%s)", host, path, ok, reason)
					return
				}
			}
		}()
	}
	wg.Wait()
}

func TestHostOf(t *testing.T) {
	for in, want := range map[string]string{
		"http://h/":               "h",
		"http://u:p@h:80/x":       "h",
		"https://[::1]:8080/":     "::1",
		"http://h?q":              "h",
		"http://h#f":              "h",
		"http://a@b@h/":           "h",
		"mailto:x@y":              "",
		"http://[::1/":            "",
		"http://h.example.com:81": "h.example.com",
	} {
		if got := hostOf(in); got != want {
			t.Errorf("hostOf(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestAllowedDoesNotAllocate(t *testing.T) {
	f := benchFilter(t)
	uris := benchURIs()
	var ip netip.Addr
	for _, u := range uris {
		f.Allowed(u, ip) // warm the cache and the pools
	}
	n := testing.AllocsPerRun(20, func() {
		for _, u := range uris[:200] {
			f.Allowed(u, ip)
		}
	})
	if n > 0 && !raceEnabled {
		t.Errorf("%v allocations per 200 checks", n)
	}
}

func TestErrTimeoutWraps(t *testing.T) {
	if !errors.Is(fmt.Errorf("x: %w", ErrTimeout), ErrTimeout) {
		t.Fatal("ErrTimeout does not wrap")
	}
}
