package index

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseQuery(t *testing.T) {
	tests := []struct {
		in   string
		want Query
	}{
		{`red apples`, Query{Words: []string{"red", "apples"}}},
		{`"red  apples" pie`, Query{Words: []string{"pie"}, Phrases: []string{"red apples"}}},
		{`-sour -"green pears" -site:a.com -type:PDF`, Query{NotWords: []string{"sour"}, NotPhrases: []string{"green pears"}, NotSites: []string{"a.com"}, NotTypes: []string{"pdf"}}},
		{`site:HTTPS://www.Example.com:8080/path type:txt type:application/pdf`, Query{Sites: []string{"www.example.com"}, Types: []string{"text", "application/pdf"}}},
		{`"one"`, Query{Words: []string{"one"}}},
		{`"unterminated phrase here`, Query{Phrases: []string{"unterminated phrase here"}}},
		{`a - b -- ! "" site: -`, Query{Words: []string{"a", "b", "site:"}}},
		{`e-mail http://x.test/y`, Query{Words: []string{"e-mail", "http://x.test/y"}}},
		{`site:[::1]:80 site:.`, Query{Sites: []string{"::1"}}},
		{"caf\xff\xfe ok", Query{Words: []string{"caf", "ok"}}},
		{"  \t\n", Query{}},
		{`a OR b c`, Query{Words: []string{"c"}, Or: [][]string{{"a", "b"}}}},
		{`a OR "b c" OR d e or f`, Query{Words: []string{"e", "or", "f"}, Or: [][]string{{"a", "b c", "d"}}}},
		{`"x y" OR z`, Query{Or: [][]string{{"x y", "z"}}}},
		{`OR a OR -b OR site:x.test OR c OR`, Query{Words: []string{"a", "c"}, NotWords: []string{"b"}, Sites: []string{"x.test"}}},
		{`a OR OR b "OR" -OR`, Query{Words: []string{"OR"}, NotWords: []string{"OR"}, Or: [][]string{{"a", "b"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got := ParseQuery(tt.in)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseQuery(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
	long := strings.Repeat("w ", 200)
	if n := len(ParseQuery(long).Words); n != MaxClauses {
		t.Errorf("%d clauses kept, want %d", n, MaxClauses)
	}
}

func FuzzParseQuery(f *testing.F) {
	for _, s := range []string{`red "apple pie" -sour site:example.com -type:pdf`, `"x`, `-"a b"`, `site:[::1]`, `type:"a b"`, `a OR "b c" OR -d`, `"OR" OR "-x"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q := ParseQuery(s)
		again := ParseQuery(q.String())
		if !cmp.Equal(q, again) {
			t.Fatalf("ParseQuery(%q) = %+v; its String %q parses as %+v", s, q, q.String(), again)
		}
	})
}
