package urls

import (
	"net/url"
	"testing"
)

func FuzzNormalize(f *testing.F) {
	for _, s := range []string{
		"http://example.com/", "HTTP://Foo.Com:80/%66oo/../b?b=2&a=1#x", "http://bücher.de/", "http://[::ffff:1.2.3.4]/",
		"http://0x7f.1/", "https://example%2Ecom/", "http://x.com/?x[y]=1", "http://a/b?q=foobar%", "//h/p", "../x",
		"http://user:pa:ss@h:0080//a/./b/../c", "http:\\\\h\\p", "https://xn--/", "ftp://h:21", "ws://h", "\t http://h/\n",
		"*contoso*fabrikam*",
	} {
		f.Add(s, "http://base.example/dir/page?q#f")
	}
	f.Fuzz(func(t *testing.T, raw, base string) {
		_, _ = Resolve(raw, base)
		for _, n := range []Normalizer{{}, {CollapseSlashes: true, SortQuery: true}} {
			out, err := n.NormalizeString(raw, base)
			if err != nil {
				continue
			}
			u, err := url.Parse(out)
			if err != nil {
				t.Fatalf("Normalize(%q, %q) = %q, which net/url rejects: %v", raw, base, out, err)
			}
			if u.String() != out {
				t.Fatalf("Normalize(%q, %q) = %q, net/url prints %q", raw, base, out, u.String())
			}
			again, err := n.NormalizeString(out, "")
			if err != nil || again != out {
				t.Fatalf("not idempotent: Normalize(%q) = %q, then %q, %v", raw, out, again, err)
			}
		}
	})
}

func FuzzRewriteRule(f *testing.F) {
	f.Add(`@(.*)[?&]sid=[^&]*(.*)@\1\2@`, "http://h/p?sid=1&x=2")
	f.Add("*contoso*fabrikam*", "http://www.contoso.com/")
	f.Add(`#(?<h>x)#${h}$1\g<h>#`, "xx")
	f.Fuzz(func(t *testing.T, rule, in string) {
		r, err := ParseRewriteRule(rule, DefaultMatchTimeout)
		if err != nil {
			return
		}
		_, _ = r.Apply(in)
	})
}
