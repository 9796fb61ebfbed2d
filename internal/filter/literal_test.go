package filter

import (
	"net/netip"

	"github.com/google/go-cmp/cmp"
	"strings"
	"testing"

	"github.com/dlclark/regexp2"
)

func TestCommonSubstring(t *testing.T) {
	for _, tt := range []struct {
		set  []string
		want string
	}{
		{[]string{"&jsessionid=", "?sid=", "&phpsessid="}, "id="},
		{[]string{".gif", ".jpeg"}, "."},
		{[]string{"abc"}, "abc"},
		{[]string{"ab", "cd"}, ""},
	} {
		if got := commonSubstring(tt.set); got != tt.want {
			t.Errorf("commonSubstring(%q) = %q, want %q", tt.set, got, tt.want)
		}
	}
}

func TestAnalyze(t *testing.T) {
	tests := []struct {
		pat  string
		want prefilter
	}{
		{`[?&](jsessionid|sid)=`, prefilter{{"&jsessionid=", "&sid=", "?jsessionid=", "?sid="}}},
		{`/calendar/\d{4}/`, prefilter{{"/calendar/"}, {"/"}}},
		{`\.php\?.*sessionid=`, prefilter{{"sessionid="}, {".php?"}}},
		{`^https?://www\.contoso\.com/`, prefilter{{"http://www.contoso.com/", "https://www.contoso.com/"}}},
		{`\.(jpe?g|png|gif)$`, prefilter{{".gif", ".jpeg", ".jpg", ".png"}}},
		{`abc*`, prefilter{{"ab"}}},
		{`abc+d`, prefilter{{"abc"}, {"d"}}},
		{`abc{0,2}d`, prefilter{{"ab"}, {"d"}}},
		{`ab{0,1}c`, prefilter{{"abc", "ac"}}},
		{`a|b`, prefilter{{"a", "b"}}},
		{`x(a.*|b)y`, prefilter{{"x"}, {"a", "b"}, {"y"}}},
		{`a|.*`, nil},
		{`(?i)contoso`, nil},
		{`foo(?x) bar`, nil},
		{`(?s)a.b`, prefilter{{"a"}, {"b"}}},
		{`\p{Lu}xyz`, prefilter{{"xyz"}}},
		{`\k<n>abc`, nil}, // invalid: no group n, but the analysis does not care
		{`(?<n>ab)\k<n>cd`, prefilter{{"ab"}, {"cd"}}},
		{`[a-z-[aeiou]]xyz`, prefilter{{"xyz"}}},
		{`(?#comment ( )xyz`, prefilter{{"xyz"}}},
		{`(?=abc)def`, prefilter{{"def"}}},
		{`a{b}c`, prefilter{{"b}c"}, {"a"}}},
		{`äbc`, prefilter{{"bc"}}},
		{`(unterminated`, nil},
		{`x)`, nil},
		{`*x`, nil},
		{`(/[^/]+)\1\1`, prefilter{{"/"}}},
	}
	for _, tt := range tests {
		t.Run(tt.pat, func(t *testing.T) {
			got := analyze(tt.pat, false)
			if tt.pat == `\k<n>abc` {
				return
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("analyze(%q) (-want +got):\n%s", tt.pat, diff)
			}
		})
	}
	if got := analyze(`^Web\d+\.Contoso\.COM$`, true); !cmp.Equal(got, prefilter{{".contoso.com"}, {"web"}}) {
		t.Errorf("folded: %q", got)
	}
}

// FuzzPrefilter checks the prefilter's promise: whenever the regexp
// matches, the input passes the prefilter.
func FuzzPrefilter(f *testing.F) {
	for _, s := range []string{`[?&](jsessionid|sid)=`, `/calendar/\d{4}/`, `ab{0,2}c`, `(?#x)ab`, `a\|b`, `\p{L}ab`,
		`x{2,}y`, `[a-[b]]cd`, `\.(jpe?g|png|gif)$`, `(a|bc)+d?e`, `(?<n>x)(?(n)a|b)c`, `(?=ab)a(?!c)`} {
		f.Add(s, "http://h/calendar/2024/x?sid=1&ab=2.jpeg")
	}
	f.Fuzz(func(t *testing.T, pat, in string) {
		for _, fold := range []bool{false, true} {
			pre := analyze(pat, fold)
			if pre == nil {
				continue
			}
			opt := regexp2.RegexOptions(regexp2.None)
			s := in
			if fold {
				opt = regexp2.IgnoreCase
				s = strings.ToLower(in)
			}
			re, err := compileRegexp(pat, opt)
			if err != nil {
				continue
			}
			re.MatchTimeout = DefaultMatchTimeout
			if !isASCII(s) {
				continue
			}
			if ok, err := re.MatchString(s); err == nil && ok && (!pre.pass(s) || !pre.compile().pass(s)) {
				t.Fatalf("%q (fold %v) matches %q, which fails the prefilter %q", pat, fold, s, pre)
			}
		}
	})
}

// FuzzCompileMatch compiles arbitrary rules and matches arbitrary input:
// no panics, and the prefilter never changes a verdict.
func FuzzCompileMatch(f *testing.F) {
	f.Add(uint8(0), "www.contoso.com", "www.contoso.com")
	f.Add(uint8(3), `^web\d+\.`, "web12.contoso.com")
	f.Add(uint8(4), "207.46.197.0-100", "207.46.197.7")
	f.Add(uint8(4), "207.46.197.0 /24", "207.46.197.7")
	f.Add(uint8(4), "207.46.197.0:0xffffffff00", "207.46.197.7")
	f.Add(uint8(5), "2002:CF2E:C500-C564:0:0:0:0", "2002:cf2e:c500::")
	f.Add(uint8(5), "::ffff:207.46.197.0-100", "207.46.197.7")
	f.Add(uint8(5), "2002:CF2E:C500:0:0:0:0/60", "2002:cf2e:c500::")
	f.Add(uint8(1), "http://www.contoso.com/index", "http://www.contoso.com/index.html")
	f.Add(uint8(2), ".pdf", "http://h/a.pdf")
	f.Fuzz(func(t *testing.T, typ uint8, pattern, in string) {
		rt := RuleType(typ%6 + 1) // no file rules: they read the disk
		for _, kind := range []Kind{Domains, URIs} {
			l, err := Compile([]Rule{{rt, pattern}}, WithKind(kind))
			if err != nil {
				continue
			}
			got := l.Match(in)
			if ip, err := netip.ParseAddr(in); err == nil {
				l.MatchIP(ip)
			}
			if rt == Regexp {
				opt := regexp2.RegexOptions(regexp2.None)
				s := in
				if kind == Domains {
					opt = regexp2.IgnoreCase
					s = strings.ToLower(in)
				}
				re, err := compileRegexp(strings.TrimSpace(pattern), opt)
				if err != nil {
					t.Fatalf("Compile accepted %q, regexp2 does not: %v", pattern, err)
				}
				re.MatchTimeout = DefaultMatchTimeout
				want, err := re.MatchString(s)
				if err == nil && want != got {
					t.Fatalf("kind %d: Match(%q) with %q = %v, regexp2 says %v", kind, in, pattern, got, want)
				}
			}
		}
	})
}
