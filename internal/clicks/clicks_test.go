package clicks

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/trawl/trawl/internal/dmake"
)

func TestKey(t *testing.T) {
	tests := []struct {
		q    string
		want string
		ok   bool
	}{
		{"Harvest  Village", "harvest village", true},
		{`"harvest village"`, "harvest village", true},
		{`harvest village scope:"intranet"`, "harvest village", true},
		{"harvest -village", "", false},
		{"-harvest", "", false},
		{"harvest OR village", "", false},
		{"harvest and village", "", false},
		{"not harvest", "", false},
		{"harvest site:a.test", "", false},
		{"a=b", "", false},
		{"x near y", "", false},
		{"words(x", "", false},
		{"e-mail", "e mail", true},
		{"  !! ", "", false},
	}
	for _, tt := range tests {
		got, ok := Key(tt.q)
		if got != tt.want || ok != tt.ok {
			t.Errorf("Key(%q) = %q, %v; want %q, %v", tt.q, got, ok, tt.want, tt.ok)
		}
	}
}

func TestNormalizeURL(t *testing.T) {
	for in, want := range map[string]string{
		"HTTP://Example.COM:80":       "http://example.com/",
		"https://a.test:443/x/../y?q": "https://a.test/y?q",
		"http://a.test:8080/a/./b":    "http://a.test:8080/a/b",
		"not a url":                   "not a url",
	} {
		if got := NormalizeURL(in); got != want {
			t.Errorf("NormalizeURL(%q) = %q, want %q", in, got, want)
		}
	}
}

// clock is a settable clock for the log.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

// TestClickBuild logs searches and clicks over two weeks, runs the click
// build on dmake (two local workers), and checks the relevance table:
// the clicks before the from-date, and those of queries using operators,
// are not counted; a scope is cut; the counts, places (1, 2, 2) and
// NUMURLS are the spec's.
func TestClickBuild(t *testing.T) {
	data := t.TempDir()
	c := &clock{t: time.Date(2026, 11, 10, 12, 0, 0, 0, time.UTC)}
	l, err := OpenLog(LogDir(data), c.now)
	if err != nil {
		t.Fatal(err)
	}
	search := func(q string, urls ...string) {
		t.Helper()
		id, err := l.Query(q)
		if err != nil {
			t.Fatal(err)
		}
		for i, u := range urls {
			if err := l.Click(id, u, i+1); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Before the from-date: not counted.
	search("harvest village", "http://a.test/", "http://a.test/")
	c.t = time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	search("Harvest Village", "http://c.test/x", "HTTP://A.test:80")
	search("harvest village", "http://c.test/x")
	search("harvest -village", "http://b.test/") // an operator: not counted
	c.t = c.t.Add(20 * time.Hour)                // the next day's files
	search(`harvest village scope:"web"`, "http://c.test/x", "http://e.test/")
	search("harvest village", "http://c.test/x")
	search("apple")
	search("apple", "http://d.test/")
	// A second writer (another process) logs into the same files.
	l2, err := OpenLog(LogDir(data), c.now)
	if err != nil {
		t.Fatal(err)
	}
	id, _ := l2.Query("apple")
	if err := l2.Click(id, "http://d.test/", 1); err != nil {
		t.Fatal(err)
	}
	if err := l.Click("zz", "http://x.test/", 1); err == nil {
		t.Error("a bad query id was logged")
	}

	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	rs, err := Run(context.Background(), RunOptions{Data: data, FromDate: "2026-11-20", LocalWorkers: 2, Self: self, Builder: dmake.LocalBuild})
	if err != nil {
		t.Fatal(err)
	}
	if rs.LogFiles != 6 {
		t.Errorf("%d log files read, want 6 (two days of three kinds)", rs.LogFiles)
	}
	got, err := os.ReadFile(RelevancePath(data))
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{
		"http://d.test/ 2 2 1 1 apple",
		"http://c.test/x 4 6 1 1 harvest+village",
		"http://a.test/ 1 6 2 2 harvest+village",
		"http://e.test/ 1 6 2 2 harvest+village",
	}, "\n") + "\n"
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("relevance (-want +got):\n%s", diff)
	}
	info, err := os.ReadFile(filepath.Join(StateDir(data), OutQueryInfo))
	if err != nil || strings.Count(string(info), "\n") != 4 {
		t.Errorf("queryinfo: %q, %v", info, err)
	}

	rel := NewRelevance(RelevancePath(data))
	r := rel.For("HARVEST village")
	if len(r) != 3 || r["http://c.test/x"] != (Rel{LCount: 4, GCount: 6, Place: 1}) {
		t.Errorf("For = %+v", r)
	}
	if b := r["http://c.test/x"].Boost(); b <= r["http://a.test/"].Boost() || b <= 1 {
		t.Errorf("boosts: c %v, a %v", b, r["http://a.test/"].Boost())
	}
	if rel.For("harvest -village") != nil || rel.For("village") != nil {
		t.Error("relevance for a query that was not clicked")
	}

	// A later build with a later from-date: the relevance is read again.
	if raceEnabled {
		return
	}
	if _, err := Run(context.Background(), RunOptions{Data: data, FromDate: "2026-11-25", Self: self, Builder: dmake.LocalBuild}); err != nil {
		t.Fatal(err)
	}
	rel.Reload()
	if r := rel.For("harvest village"); len(r) != 2 || r["http://c.test/x"].LCount != 2 {
		t.Errorf("after the second build: %+v", r)
	}
}

func FuzzKey(f *testing.F) {
	for _, s := range []string{"harvest village", `a scope:"x"`, "a -b", "x OR y", "e-mail", "\xff\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		k, ok := Key(q)
		if !ok {
			return
		}
		// The build tokenizes the filtered query as Key does; a key is
		// tokenized already, and one table field once escaped.
		if k2 := Tokenize(k); k2 != k {
			t.Fatalf("Key(%q) = %q, but Tokenize(%q) = %q", q, k, k, k2)
		}
		if e := escape(k); strings.ContainsAny(e, " \n") || unescape(e) != k {
			t.Fatalf("escape(%q) = %q", k, e)
		}
	})
}

func FuzzParseRelevance(f *testing.F) {
	for _, s := range []string{"http://a.test/ 2 3 1 1 harvest+village\n", "x 1 1 1 1 -\n", "a b c\n", "u -1 2 3 4 q\n", "u 9999999999999999999 1 1 1 q"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tab, err := ParseRelevance(strings.NewReader(s), "fuzz")
		if err != nil {
			return
		}
		for _, urls := range tab {
			for _, r := range urls {
				if b := r.Boost(); b < 1 || b != b {
					t.Fatalf("boost %v for %+v", b, r)
				}
			}
		}
	})
}
