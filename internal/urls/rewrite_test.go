package urls

import (
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestRewriteRules(t *testing.T) {
	tests := []struct {
		name, rule, in, want string
	}{
		// The spec's form "*match_pattern*replacement_string*" with '*' as
		// the delimiter itself.
		{name: "spec form", rule: "*contoso*fabrikam*", in: "http://www.contoso.com/contoso", want: "http://www.fabrikam.com/contoso"},
		{name: "python groups", rule: `@(.*)[?&]sid=[^&]*(.*)@\1\2@`, in: "http://h/p?sid=123&x=1", want: "http://h/p&x=1"},
		{name: "dotnet groups", rule: `|^(https?)://www\.(.*)$|$1://$2|`, in: "http://www.contoso.com/a", want: "http://contoso.com/a"},
		{name: "named group", rule: `#^http://(?<host>[^/]+)/old/#http://${host}/new/#`, in: "http://h/old/x", want: "http://h/new/x"},
		{name: "python named", rule: `#^http://(?<host>[^/]+)/old/#http://\g<host>/new/#`, in: "http://h/old/x", want: "http://h/new/x"},
		{name: "first match only", rule: "/a/b/", in: "http://h/aaa", want: "http://h/baa"},
		{name: "no match", rule: "/zzz/y/", in: "http://h/a", want: "http://h/a"},
		{name: "escaped delimiter", rule: `/\/old\//\/new\//`, in: "http://h/old/x", want: "http://h/new/x"},
		{name: "dollar literal", rule: `/x/$$1/`, in: "http://h/x", want: "http://h/$1"},
		{name: "trailing space", rule: " !a!b! ", in: "a", want: "b"},
		{name: "dotnet syntax", rule: `!(?<=;)jsessionid=\w+!!`, in: "http://h/p;jsessionid=ab12", want: "http://h/p;"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := ParseRewriteRule(tt.rule, 0)
			if err != nil {
				t.Fatal(err)
			}
			got, err := r.Apply(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Apply(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestRewriteRuleErrors(t *testing.T) {
	for _, rule := range []string{"", "   ", "/abc", "/abc/def", "/abc/def/x", "//x/", "/(/x/", `/a/\2/`, `/(?<n>a)/${m}/`, `\a\b\`} {
		if _, err := ParseRewriteRule(rule, 0); err == nil {
			t.Errorf("ParseRewriteRule(%q): no error", rule)
		} else if !strings.HasPrefix(err.Error(), "urls: rewrite rule") {
			t.Errorf("ParseRewriteRule(%q): error %q does not name the rule", rule, err)
		}
	}
}

func TestRewriteTimeout(t *testing.T) {
	r, err := ParseRewriteRule(`/^(a+)+$/x/`, time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Apply(strings.Repeat("a", 40) + "!"); err == nil {
		t.Error("catastrophic backtracking did not time out")
	}
}

func TestRewriterInNormalizer(t *testing.T) {
	rw, err := NewRewriter([]string{`@[?&]PHPSESSID=[0-9a-f]+@@`, `@^http://contoso\.com/@http://www.contoso.com/@`}, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := Normalizer{Rewrite: rw}
	got, err := n.NormalizeString("HTTP://Contoso.com/a?PHPSESSID=0af", "")
	if err != nil || got != "http://www.contoso.com/a" {
		t.Errorf("got %q, %v", got, err)
	}
}

func TestSortQueryParams(t *testing.T) {
	tests := []struct{ in, want string }{
		{"b=2&a=1", "a=1&b=2"},
		{"b=2;a=1", "a=1;b=2"},
		{"q=tl;dr", "q=tl;dr"},
		{"b=1;c=2&a=3", "a=3&b=1;c=2"},
		{"a=2&b=1&a=1", "a=2&a=1&b=1"},
		{"&b=1&&a=1&", "a=1&b=1"},
		{"=1&a=1", "a=1"},
		{"single", "single"},
		{"", ""},
		{"B=1&a=1", "B=1&a=1"},
	}
	for _, tt := range tests {
		if got := SortQueryParams(tt.in); got != tt.want {
			t.Errorf("SortQueryParams(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	u, _ := url.Parse("http://h/?z=1&y=2")
	if got := SortQuery(u).String(); got != "http://h/?y=2&z=1" {
		t.Errorf("SortQuery = %q", got)
	}
}

func TestSite(t *testing.T) {
	for in, want := range map[string]string{
		"http://WWW.Contoso.com/a":    "www.contoso.com",
		"https://www.contoso.com:443": "www.contoso.com",
		"http://www.contoso.com:80/":  "www.contoso.com",
		"http://www.contoso.com:8080": "www.contoso.com:8080",
		"https://h:80/":               "h:80",
		"http://[::1]:81/":            "[::1]:81",
		"http://[::1]/":               "[::1]",
		"ftp://f.example.:21/":        "f.example",
	} {
		u, err := url.Parse(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := Site(u); got != want {
			t.Errorf("Site(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSchemeAllowed(t *testing.T) {
	allowed := []string{"http", " https "}
	for scheme, want := range map[string]bool{"http": true, "HTTPS": true, "ftp": false, "": false} {
		if got := SchemeAllowed(scheme, allowed); got != want {
			t.Errorf("SchemeAllowed(%q) = %v", scheme, got)
		}
	}
}

func TestExt(t *testing.T) {
	for in, want := range map[string]string{
		"/a/b.JPG": ".jpg", "/a/b": "", "/a.b/c": "", "/x.tar.gz": ".gz", "/p.jpg;jsessionid=1": ".jpg", "/a.": "", "": "",
	} {
		if got := Ext(in); got != want {
			t.Errorf("Ext(%q) = %q, want %q", in, got, want)
		}
	}
	// The MS-FSCCFG default list, with ".ASF" in upper case.
	set := NewExtSet([]string{".jpg", ".ASF", "gz", ".tar.bz2", " "})
	for in, want := range map[string]bool{
		"/a.jpg": true, "/A.JPG": true, "/v.asf": true, "/x.gz": true, "/x.tar.bz2": true, "/x.bz2": false,
		"/a.jpg/": false, "/a.html": false, "/a": false, "/a.jpg;x=1": true, "/" + strings.Repeat("x", 20) + "." + strings.Repeat("j", 20): false,
	} {
		if got := set.Excluded(in); got != want {
			t.Errorf("Excluded(%q) = %v, want %v", in, got, want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { set.Excluded("/images/photo.JPG") }); n != 0 {
		t.Errorf("Excluded allocates %v times", n)
	}
}

func TestCheckLength(t *testing.T) {
	if err := CheckLength("http://h/", 5); !errors.Is(err, ErrTooLong) {
		t.Errorf("CheckLength: %v", err)
	}
	if err := CheckLength("http://h/", 0); err != nil {
		t.Errorf("CheckLength unlimited: %v", err)
	}
}

func TestPathRecursion(t *testing.T) {
	for in, want := range map[string]int{
		"/": 0, "/a": 1, "/a/b/c": 1, "/a/a/a": 3, "/x/a/b/a/b/a/b/y": 3, "/a/b/a/c/": 1, "/cal/2024/cal/2024/": 2,
	} {
		if got := PathRecursion(in); got != want {
			t.Errorf("PathRecursion(%q) = %d, want %d", in, got, want)
		}
	}
}
