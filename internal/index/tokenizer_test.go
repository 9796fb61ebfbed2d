package index

import (
	"context"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/custom"
	"github.com/blevesearch/bleve/v2/analysis/token/lowercase"
	"github.com/blevesearch/bleve/v2/analysis/tokenizer/unicode"
	"github.com/blevesearch/bleve/v2/mapping"
)

var tokenizerCases = []string{
	"",
	" ",
	"word",
	"Two words",
	"a1 1a 123 12.5 1,000 3:4 a.b a:b a'b a;b a,b a_b _ __ _a a_ 1_ _1 a. .a a.. ..a",
	"can't won't o'clock e.g. U.S.A. x.y.z 3.14.15 1.a a.1 \"quoted\" a\"b 'a' ''",
	"end. end, end; end: end' end_ end\" (paren) [b] {c} <d> a-b a/b a+b a=b a@b a#b a$b a%b a&b a*b a!b a?b a|b a\\b a~b a`b a^b",
	"tab\tnewline\ncr\r\nvt\vff\fnul\x00del\x7f",
	"http://site0001.farm.test:18491/page/12.html?x=1&y=2#frag",
	"The harvest village's 2nd market, on 12.05.2026 at 10:30; prices: $3.50, 4,5 EUR.",
	"café crème", "naïve 東京 タワー 한국어 ok", "mixed ascii then é", "combining e\u0301 and zwj a\u200db",
	"Mr.Smith's e-mail:smith@example.com,then;more",
	"a.'b a'.b a:.b 1.,2 1,.2 1'2 1:2 a1.b2 a1:b2 1a.2b",
}

func tokensOf(t analysis.Tokenizer, s string) string {
	var b strings.Builder
	for _, tk := range t.Tokenize([]byte(s)) {
		fmt.Fprintf(&b, "%q %d-%d @%d t%d\n", tk.Term, tk.Start, tk.End, tk.Position, tk.Type)
	}
	return b.String()
}

// TestWordsTokenizer: trawl's tokenizer gives bleve's unicode tokenizer's
// tokens.
func TestWordsTokenizer(t *testing.T) {
	ref := unicode.NewUnicodeTokenizer()
	for _, c := range tokenizerCases {
		if got, want := tokensOf(wordTokenizer{}, c), tokensOf(ref, c); got != want {
			t.Errorf("%q:\n got %s\nwant %s", c, got, want)
		}
	}
	// Random ASCII over the bytes that matter.
	const alphabet = "aZ09_.':,;\" \t\n-/x"
	rng := rand.New(rand.NewSource(1))
	for range 200000 {
		n := rng.Intn(16)
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[rng.Intn(len(alphabet))]
		}
		if got, want := tokensOf(wordTokenizer{}, string(b)), tokensOf(ref, string(b)); got != want {
			t.Fatalf("%q:\n got %s\nwant %s", b, got, want)
		}
	}
}

func FuzzWordsTokenizer(f *testing.F) {
	for _, c := range tokenizerCases {
		f.Add(c)
	}
	ref := unicode.NewUnicodeTokenizer()
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := tokensOf(wordTokenizer{}, s), tokensOf(ref, s); got != want {
			t.Fatalf("%q:\n got %s\nwant %s", s, got, want)
		}
	})
}

func BenchmarkTokenizer(b *testing.B) {
	text := []byte(strings.Repeat("The harvest village's market opens at 10:30 on the 12th; prices rise, 3.5 percent. ", 40))
	for _, c := range []struct {
		name string
		t    analysis.Tokenizer
	}{{"unicode", unicode.NewUnicodeTokenizer()}, {"words", wordTokenizer{}}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for range b.N {
				c.t.Tokenize(text)
			}
		})
	}
}

// TestIndexBeforeWordsTokenizer: an index created before trawl's tokenizer
// (its stored mapping names bleve's "unicode") opens, takes documents and
// finds what an index created now finds.
func TestIndexBeforeWordsTokenizer(t *testing.T) {
	m, err := newMapping()
	if err != nil {
		t.Fatal(err)
	}
	m.CustomAnalysis.Analyzers[textAnalyzer] = map[string]interface{}{
		"type": custom.Name, "tokenizer": unicode.Name, "token_filters": []string{lowercase.Name},
	}
	old := openWithMapping(t, m)
	if im, ok := old.parts[0].b.Mapping().(*mapping.IndexMappingImpl); !ok || im.CustomAnalysis.Analyzers[textAnalyzer]["tokenizer"] != unicode.Name {
		t.Fatalf("the old index's mapping does not name bleve's tokenizer")
	}
	if im, ok := openTest(t, Options{}).parts[0].b.Mapping().(*mapping.IndexMappingImpl); !ok || im.CustomAnalysis.Analyzers[textAnalyzer]["tokenizer"] != wordsTokenizer {
		t.Fatalf("a new index's mapping does not name trawl's tokenizer")
	}
	now := openTest(t, Options{})
	docs := append(append([]Doc(nil), corpus...), Doc{URL: "http://x.example/o", Collection: "web", Title: "O'Clock", Body: "It's 10:30, e.g. at U.S. time; 3.5 percent of 1,000 naïve cafés."})
	load(t, old, docs, 1)
	load(t, now, docs, 1)
	for _, q := range []string{"apples", `"red apples are sweet"`, "it's", "e.g", "u.s", "3.5", "1,000", "10", "30", "naïve", `"percent of 1,000"`, "apples -sour site:example.com"} {
		a, err := old.Search(context.Background(), q, SearchOptions{})
		if err != nil {
			t.Fatal(err)
		}
		b, err := now.Search(context.Background(), q, SearchOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(urls(a)) != fmt.Sprint(urls(b)) || a.Total != b.Total {
			t.Errorf("%s: old index %v (%d), new %v (%d)", q, urls(a), a.Total, urls(b), b.Total)
		}
		if q == "e.g" && a.Total != 1 {
			t.Errorf("e.g: %d hits, want the page", a.Total)
		}
	}
}
