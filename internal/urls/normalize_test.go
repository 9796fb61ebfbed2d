package urls

import (
	"encoding/csv"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.Comment = '#'
	r.TrimLeadingSpace = true
	r.FieldsPerRecord = -1
	rows, err := r.ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	for _, row := range rows {
		for i := 1; i < len(row); i++ {
			row[i] = strings.TrimRight(row[i], " ")
		}
	}
	return rows
}

// ccNormalizer matches crawler-commons' BasicURLNormalizer options: it
// collapses slashes, sorts the query and guesses "http" for bare hosts.
var ccNormalizer = Normalizer{CollapseSlashes: true, SortQuery: true, DefaultScheme: "http"}

// ccDivergences lists the weirdToNormalizedUrls.csv rows where trawl
// deliberately differs from crawler-commons, with the reason. Counted: the
// test fails if a listed row passes or an unlisted row fails.
var ccDivergences = map[string]string{
	// Scheme-less or host-less special URLs: WHATWG rejects them, and a
	// crawler cannot fetch them.
	"ftp:/":        "special URL without host is invalid (WHATWG)",
	"http:////":    "special URL without host is invalid (WHATWG)",
	"http:///////": "special URL without host is invalid (WHATWG)",
	// file: is never crawled.
	"file:///foo/bar.txt":                      "file: scheme unsupported",
	"file:/path/index.html":                    "file: scheme unsupported",
	"file:/var/www/html/////./bar/index.html":  "file: scheme unsupported",
	"file:/var/www/html/foo/../bar/index.html": "file: scheme unsupported",
	// "b=" and "b" differ for some servers (PHP isset vs empty value):
	// values are never changed.
	"http://foo.com/index?a=1&b=": "empty value kept as b=",
	"http://foo.com/index?b=&a=1": "empty value kept as b=",
}

func TestCrawlerCommonsNormalizer(t *testing.T) {
	dir := testdataDir(t, "normalizer")
	rows := readCSV(t, filepath.Join(dir, "weirdToNormalizedUrls.csv"))
	passed, diverged := 0, 0
	for _, row := range rows {
		if len(row) != 2 {
			t.Fatalf("bad row %q", row)
		}
		in, want := row[0], strings.TrimSpace(row[1])
		got, err := ccNormalizer.NormalizeString(in, "")
		ok := err == nil && got == want
		if why, listed := ccDivergences[strings.TrimSpace(in)]; listed {
			diverged++
			if ok {
				t.Errorf("listed divergence (%s) now passes: %q", why, in)
			}
			continue
		}
		if !ok {
			t.Errorf("Normalize(%q) = %q, %v; want %q", in, got, err, want)
			continue
		}
		passed++
	}
	t.Logf("weirdToNormalizedUrls.csv: %d rows, %d pass, %d listed divergences", len(rows), passed, diverged)
	if diverged != len(ccDivergences) {
		t.Errorf("%d divergences matched, %d listed", diverged, len(ccDivergences))
	}
}

func TestCrawlerCommonsInvalid(t *testing.T) {
	dir := testdataDir(t, "normalizer")
	rows := readCSV(t, filepath.Join(dir, "invalidUrls.csv"))
	if len(rows) == 0 {
		t.Fatal("no rows")
	}
	for _, row := range rows {
		if got, err := ccNormalizer.NormalizeString(row[0], ""); err == nil {
			t.Errorf("Normalize(%q) = %q, want an error", row[0], got)
		}
	}
}

func TestNormalize(t *testing.T) {
	tests := []struct {
		name, raw, base string
		n               Normalizer
		want            string
		err             error
	}{
		{name: "relative", raw: "../c/./d?x=1#frag", base: "http://Example.COM:80/a/b/e", want: "http://example.com/a/c/d?x=1"},
		{name: "https default port", raw: "HTTPS://EXAMPLE.com:443", want: "https://example.com/"},
		{name: "ftp default port", raw: "ftp://h:21/x", want: "ftp://h/x"},
		{name: "other port kept", raw: "http://h:8080/", want: "http://h:8080/"},
		{name: "idna", raw: "http://Bücher.example/ä", want: "http://xn--bcher-kva.example/%C3%A4"},
		{name: "ipv4 forms", raw: "http://0x7f.1/", want: "http://127.0.0.1/"},
		{name: "ipv6", raw: "http://[0:0::1]:80/", want: "http://[::1]/"},
		{name: "unreserved decoded", raw: "http://h/%7euser/%41%2f%3f?%61=%7E&b=%2b", want: "http://h/~user/A%2F%3F?a=~&b=%2B"},
		{name: "bad escape", raw: "http://h/a%zz", want: "http://h/a%25zz"},
		{name: "rfc3986 only", raw: "http://h/a|b^c[d]?q=x|y[z]`", want: "http://h/a%7Cb%5Ec%5Bd%5D?q=x%7Cy%5Bz%5D%60"},
		{name: "slashes kept", raw: "http://h//a//b", want: "http://h//a//b"},
		{name: "slashes collapsed", raw: "http://h//a//b/", n: Normalizer{CollapseSlashes: true}, want: "http://h/a/b/"},
		{name: "empty query dropped", raw: "http://h/p?#x", want: "http://h/p"},
		{name: "query sorted", raw: "http://h/?b=2&a=1&a=0", n: Normalizer{SortQuery: true}, want: "http://h/?a=1&a=0&b=2"},
		{name: "userinfo", raw: "http://us%65r:p@ss@h/", want: "http://user:p%40ss@h/"},
		{name: "trailing dot", raw: "http://h.example./", want: "http://h.example/"},
		{name: "backslashes", raw: "http:\\\\h\\a\\..\\b", want: "http://h/b"},
		{name: "too long", raw: "http://h/" + strings.Repeat("a", 3000), n: Normalizer{MaxLength: 2048}, err: ErrTooLong},
		{name: "mailto", raw: "mailto:x@y", err: ErrUnsupportedScheme},
		{name: "javascript", raw: "javascript:void(0)", base: "http://h/", err: ErrUnsupportedScheme},
		{name: "relative without base", raw: "/a", err: ErrNoScheme},
		{name: "bad host", raw: "http://a b/", err: ErrInvalid},
		{name: "bad port", raw: "http://h:99999/", err: ErrInvalid},
		{name: "default scheme", raw: "www.contoso.com", n: Normalizer{DefaultScheme: "http"}, want: "http://www.contoso.com/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.n.NormalizeString(tt.raw, tt.base)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("NormalizeString(%q) = %q, %v; want error %v", tt.raw, got, err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("NormalizeString(%q, %q) = %q, %v; want %q", tt.raw, tt.base, got, err, tt.want)
			}
			u, err := url.Parse(got)
			if err != nil || u.String() != got {
				t.Errorf("net/url round trip of %q: %v, %v", got, u, err)
			}
		})
	}
}

func TestNormalizeURL(t *testing.T) {
	base, _ := url.Parse("http://example.com/dir/page.html")
	u, err := Normalize("sub/../other.html?x=1#top", base)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("http://example.com/dir/other.html?x=1", u.String()); diff != "" {
		t.Error(diff)
	}
	b, err := ParseBase("http://example.com/dir/")
	if err != nil {
		t.Fatal(err)
	}
	got, err := Normalizer{}.NormalizeRef("x y", b)
	if err != nil || got != "http://example.com/dir/x%20y" {
		t.Errorf("NormalizeRef = %q, %v", got, err)
	}
}
