package index

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// corpus is a small set of documents with known words.
var corpus = []Doc{
	{URL: "http://www.example.com/", Collection: "web", Title: "Example home", Body: "Welcome to the example site. We sell red apples and green pears.", MIME: "text/html; charset=utf-8"},
	{URL: "http://www.example.com/apples", Collection: "web", Title: "Apples", Body: "Red apples are sweet. Green apples are sour. Apple pie recipes.", MIME: "text/html"},
	{URL: "http://docs.example.com/manual.pdf", Collection: "web", Title: "Manual", Body: "The apple press manual: clean the press after every use.", MIME: "application/pdf"},
	{URL: "http://other.org/notes.txt", Collection: "web", Title: "", Body: "Notes about red apples and the sweet taste of autumn.", MIME: "text/plain"},
	{URL: "http://other.org/pears", Collection: "web", Title: "Pears", Body: "Green pears ripen slowly.", MIME: "text/html"},
	{URL: "http://intranet.local/apples", Collection: "intra", Title: "Internal apples", Body: "Red apples inventory for the intranet.", MIME: "text/html"},
}

func openTest(t *testing.T, opts Options) *Index {
	t.Helper()
	opts.Create = true
	ix, err := Open(t.TempDir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

func load(t *testing.T, ix *Index, docs []Doc, version uint64) {
	t.Helper()
	ops := make([]Op, len(docs))
	for i, d := range docs {
		ops[i] = Op{Version: version, Doc: d}
	}
	if _, err := ix.Apply(context.Background(), ops); err != nil {
		t.Fatal(err)
	}
}

func urls(r *Results) []string {
	out := []string{}
	for _, h := range r.Hits {
		out = append(out, h.URL)
	}
	return out
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

func TestSearchQueryLanguage(t *testing.T) {
	ix := openTest(t, Options{})
	load(t, ix, corpus, 1)
	tests := []struct {
		name  string
		q     string
		opts  SearchOptions
		want  []string // any order
		first string   // best hit, if set
	}{
		{name: "word", q: "pears", want: []string{"http://www.example.com/", "http://other.org/pears"}, first: "http://other.org/pears"},
		{name: "words are ANDed", q: "red sweet", want: []string{"http://www.example.com/apples", "http://other.org/notes.txt"}},
		{name: "case insensitive", q: "RED Sweet", want: []string{"http://www.example.com/apples", "http://other.org/notes.txt"}},
		{name: "phrase", q: `"red apples are sweet"`, want: []string{"http://www.example.com/apples"}},
		{name: "phrase order matters", q: `"apples red"`, want: []string{}},
		{name: "exclusion", q: "apples -sour", want: []string{"http://www.example.com/", "http://other.org/notes.txt", "http://intranet.local/apples"}},
		{name: "phrase exclusion", q: `apples -"green pears"`, want: []string{"http://www.example.com/apples", "http://other.org/notes.txt", "http://intranet.local/apples"}},
		{name: "site", q: "apples site:example.com", want: []string{"http://www.example.com/", "http://www.example.com/apples"}},
		{name: "site subdomain", q: "press site:docs.example.com", want: []string{"http://docs.example.com/manual.pdf"}},
		{name: "site as URL", q: "apples site:http://WWW.example.com/x", want: []string{"http://www.example.com/", "http://www.example.com/apples"}},
		{name: "excluded site", q: "red -site:example.com", want: []string{"http://other.org/notes.txt", "http://intranet.local/apples"}},
		{name: "two sites", q: "red site:other.org site:intranet.local", want: []string{"http://other.org/notes.txt", "http://intranet.local/apples"}},
		{name: "type pdf", q: "apple type:pdf", want: []string{"http://docs.example.com/manual.pdf"}},
		{name: "type text", q: "apples type:text", want: []string{"http://other.org/notes.txt"}},
		{name: "type alias txt", q: "apples type:txt", want: []string{"http://other.org/notes.txt"}},
		{name: "type MIME", q: "press type:application/pdf", want: []string{"http://docs.example.com/manual.pdf"}},
		{name: "excluded type", q: "red -type:html", want: []string{"http://other.org/notes.txt"}},
		{name: "only filters", q: "site:other.org", want: []string{"http://other.org/notes.txt", "http://other.org/pears"}},
		{name: "only exclusion", q: "-apples", want: []string{"http://docs.example.com/manual.pdf", "http://other.org/pears"}}, // no stemming: "apple" stays
		{name: "collection", q: "red apples", opts: SearchOptions{Collection: "intra"}, want: []string{"http://intranet.local/apples"}},
		{name: "site option", q: "red", opts: SearchOptions{Site: "other.org"}, want: []string{"http://other.org/notes.txt"}},
		{name: "type option", q: "apple", opts: SearchOptions{Type: "pdf"}, want: []string{"http://docs.example.com/manual.pdf"}},
		{name: "title boost", q: "apples", first: "http://www.example.com/apples",
			want: []string{"http://www.example.com/", "http://www.example.com/apples", "http://other.org/notes.txt", "http://intranet.local/apples"}},
		{name: "punctuation ignored", q: "apples - ! ,", want: []string{"http://www.example.com/", "http://www.example.com/apples", "http://other.org/notes.txt", "http://intranet.local/apples"}},
		{name: "empty", q: "   ", want: []string{}},
		{name: "no match", q: "bananas", want: []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := ix.Search(context.Background(), tt.q, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			got := urls(res)
			if diff := cmp.Diff(sorted(tt.want), sorted(got)); diff != "" {
				t.Errorf("Search(%q) (-want +got):\n%s", tt.q, diff)
			}
			if res.Total != uint64(len(tt.want)) {
				t.Errorf("Total = %d, want %d", res.Total, len(tt.want))
			}
			if tt.first != "" && (len(got) == 0 || got[0] != tt.first) {
				t.Errorf("best hit = %v, want %s", got, tt.first)
			}
		})
	}
}

func TestSnippetHighlights(t *testing.T) {
	ix := openTest(t, Options{})
	load(t, ix, corpus, 1)
	res, err := ix.Search(context.Background(), `"apple pie" sour`, SearchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) != 1 {
		t.Fatalf("hits = %v", urls(res))
	}
	h := res.Hits[0]
	for _, want := range []string{"<mark>sour</mark>", "<mark>Apple</mark> <mark>pie</mark>"} {
		if !strings.Contains(h.Snippet, want) {
			t.Errorf("snippet %q lacks %q", h.Snippet, want)
		}
	}
	if h.Title != "Apples" || h.Site != "www.example.com" || h.Type != "html" || h.MIME != "text/html" || h.Score <= 0 {
		t.Errorf("hit = %+v", h)
	}
	if got := PlainSnippet("a <mark>b</mark> &amp; c", "[", "]"); got != "a [b] & c" {
		t.Errorf("PlainSnippet = %q", got)
	}
	// A title-only match falls back to the summary, escaped.
	load(t, ix, []Doc{{URL: "http://x.test/", Collection: "web", Title: "Zebra", Body: "<b> & stripes"}}, 2)
	res, err = ix.Search(context.Background(), "zebra", SearchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) != 1 || res.Hits[0].Snippet != "&lt;b&gt; &amp; stripes" || res.Hits[0].TitleHTML != "<mark>Zebra</mark>" {
		t.Errorf("hits = %+v", res.Hits)
	}
}

func TestSearchPaging(t *testing.T) {
	for _, window := range []int{100, 7} { // 7: pages straddle and pass the rerank window
		t.Run(fmt.Sprint("window", window), func(t *testing.T) {
			ix := openTest(t, Options{RerankWindow: window})
			var docs []Doc
			for i := range 25 {
				// Doc i mentions "kiwi" i+1 times: higher i scores higher.
				docs = append(docs, Doc{URL: fmt.Sprintf("http://k.test/%02d", i), Collection: "c",
					Body: strings.Repeat("kiwi ", i+1) + strings.Repeat("filler ", 30)})
			}
			load(t, ix, docs, 1)
			var all []string
			for from := 0; from < 30; from += 10 {
				res, err := ix.Search(context.Background(), "kiwi", SearchOptions{From: from, Size: 10})
				if err != nil {
					t.Fatal(err)
				}
				if res.Total != 25 {
					t.Fatalf("total = %d", res.Total)
				}
				all = append(all, urls(res)...)
			}
			if len(all) != 25 {
				t.Fatalf("paged %d hits: %v", len(all), all)
			}
			seen := map[string]bool{}
			for _, u := range all {
				if seen[u] {
					t.Fatalf("hit %s on two pages", u)
				}
				seen[u] = true
			}
			if all[0] != "http://k.test/24" {
				t.Errorf("best = %s", all[0])
			}
		})
	}
}

func TestRankBoosts(t *testing.T) {
	ix := openTest(t, Options{})
	load(t, ix, []Doc{
		{URL: "http://a.test/", Collection: "c", Body: "plum plum plum"},
		{URL: "http://b.test/", Collection: "c", Body: "plum", Rank: 5},
	}, 1)
	res, err := ix.Search(context.Background(), "plum", SearchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := urls(res); len(got) != 2 || got[0] != "http://b.test/" || res.Hits[0].Rank != 5 {
		t.Errorf("hits = %v", res.Hits)
	}
}

func TestApplyIdempotent(t *testing.T) {
	dir := t.TempDir()
	ix, err := Open(dir, Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	mod := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	d := Doc{URL: "http://v.test/", Collection: "c", Title: "v3", Body: "three", MIME: "text/plain", Modified: mod, Language: "EN"}
	steps := []struct {
		name    string
		ops     []Op
		want    ApplyResult
		title   string
		found   bool
		version uint64
	}{
		{"add", []Op{{Version: 3, Doc: d}}, ApplyResult{Applied: 1}, "v3", true, 3},
		{"resend", []Op{{Version: 3, Doc: d}}, ApplyResult{Skipped: 1}, "v3", true, 3},
		{"stale", []Op{{Version: 2, Doc: Doc{URL: d.URL, Collection: "c", Title: "v2"}}}, ApplyResult{Skipped: 1}, "v3", true, 3},
		{"two in one batch", []Op{{Version: 5, Doc: Doc{URL: d.URL, Collection: "c", Title: "v5"}}, {Version: 4, Doc: Doc{URL: d.URL, Collection: "c", Title: "v4"}}},
			ApplyResult{Applied: 1, Skipped: 1}, "v5", true, 5},
		{"remove", []Op{{Remove: true, Version: 6, Doc: Doc{URL: d.URL, Collection: "c"}}}, ApplyResult{Applied: 1}, "", false, 6},
		{"stale add after remove", []Op{{Version: 5, Doc: Doc{URL: d.URL, Collection: "c", Title: "v5"}}}, ApplyResult{Skipped: 1}, "", false, 6},
		{"re-add", []Op{{Version: 7, Doc: d}}, ApplyResult{Applied: 1}, "v3", true, 7},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			got, err := ix.Apply(ctx, s.ops)
			if err != nil {
				t.Fatal(err)
			}
			if got != s.want {
				t.Errorf("Apply = %+v, want %+v", got, s.want)
			}
			st, err := ix.Lookup(ctx, "c", d.URL)
			if err != nil {
				t.Fatal(err)
			}
			if st.Found != s.found || st.Title != s.title || st.Version != s.version {
				t.Errorf("stored = %+v", st)
			}
		})
	}
	// Persisted: reopen and look again.
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	ix, err = Open(dir, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	st, err := ix.Lookup(ctx, "c", d.URL)
	if err != nil {
		t.Fatal(err)
	}
	want := Stored{URL: d.URL, Collection: "c", Title: "v3", Body: "three", MIME: "text/plain", Type: "text", Site: "v.test",
		Language: "en", Modified: mod, Version: 7, Found: true}
	if diff := cmp.Diff(want, st); diff != "" {
		t.Errorf("after reopen (-want +got):\n%s", diff)
	}
	if n, err := ix.Count(); err != nil || n != 1 {
		t.Errorf("Count = %d, %v", n, err)
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := Open(dir, Options{}); err == nil || !strings.Contains(err.Error(), "no index") {
		t.Errorf("Open(empty) = %v", err)
	}
	ix, err := Open(dir, Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Apply(context.Background(), []Op{{Doc: Doc{URL: "http://a/"}}}); err == nil {
		t.Error("version 0 accepted")
	}
	if _, err := ix.Apply(context.Background(), []Op{{Version: 1}}); err == nil {
		t.Error("empty URL accepted")
	}
	// A second open of a locked index times out with a clear error.
	if _, err := Open(dir, Options{LockTimeout: 50 * time.Millisecond}); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Errorf("second Open = %v", err)
	}
	ix.Close()
	if _, err := ix.Apply(context.Background(), []Op{{Version: 1, Doc: Doc{URL: "http://a/"}}}); err != ErrClosed {
		t.Errorf("Apply after Close = %v", err)
	}
}

func TestSiteAndType(t *testing.T) {
	tests := []struct {
		in, site string
		domains  []string
	}{
		{"http://A.B.Example.COM:8080/x", "a.b.example.com", []string{"a.b.example.com", "b.example.com", "example.com", "com"}},
		{"http://127.0.0.1:80/", "127.0.0.1", []string{"127.0.0.1"}},
		{"http://[::1]/", "::1", []string{"::1"}},
		{"http://example.com./", "example.com", []string{"example.com", "com"}},
		{"%zz", "", nil},
	}
	for _, tt := range tests {
		if s := Site(tt.in); s != tt.site {
			t.Errorf("Site(%q) = %q", tt.in, s)
		}
		if d := Domains(Site(tt.in)); !cmp.Equal(d, tt.domains) {
			t.Errorf("Domains(%q) = %q", tt.in, d)
		}
	}
	for mime, want := range map[string]string{
		"text/html; charset=x": "html", "application/xhtml+xml": "html", "application/pdf": "pdf", "text/plain": "text",
		"application/vnd.openxmlformats-officedocument.wordprocessingml.document": "office", "application/msword": "office",
		"application/rss+xml": "xml", "image/png": "other", "": "other",
	} {
		if got := TypeOf(mime); got != want {
			t.Errorf("TypeOf(%q) = %q, want %q", mime, got, want)
		}
	}
}

// TestReportedURIs checks that the URI lists a crawler reports with a
// document (links, duplicates, redirects, mirrors) are stored as given.
func TestReportedURIs(t *testing.T) {
	ix := openTest(t, Options{})
	ctx := context.Background()
	d := Doc{URL: "http://a.example/", Collection: "web", Body: "hello",
		Links: []string{"http://a.example/x"}, Duplicates: []string{"http://a.example/copy", "http://b.example/copy"},
		Redirects: []string{"http://a.example/old"}, Mirrors: []string{"http://mirror.example/"}}
	tests := []struct {
		name string
		doc  Doc
	}{
		{"all lists", d},
		{"lists dropped", Doc{URL: d.URL, Collection: d.Collection, Body: d.Body}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := ix.Apply(ctx, []Op{{Version: uint64(i + 1), Doc: tt.doc}}); err != nil {
				t.Fatal(err)
			}
			st, err := ix.Lookup(ctx, "web", d.URL)
			if err != nil {
				t.Fatal(err)
			}
			got := [][]string{st.Links, st.Duplicates, st.Redirects, st.Mirrors}
			want := [][]string{tt.doc.Links, tt.doc.Duplicates, tt.doc.Redirects, tt.doc.Mirrors}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("stored lists (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSearchAndOrProximity: every word is required, OR joins alternatives,
// and the page holding the words next to each other ranks first.
func TestSearchAndOrProximity(t *testing.T) {
	ix := openTest(t, Options{})
	filler := strings.Repeat("meadow river stone ", 8)
	load(t, ix, []Doc{
		{URL: "http://p.test/scattered", Collection: "c", Body: "harvest " + filler + "village " + filler + "harvest"},
		{URL: "http://p.test/adjacent", Collection: "c", Body: filler + "the harvest village fair " + filler},
		{URL: "http://p.test/reversed", Collection: "c", Body: "village " + filler + "harvest " + filler},
		{URL: "http://p.test/harvest", Collection: "c", Body: "harvest harvest harvest " + filler},
		{URL: "http://p.test/village", Collection: "c", Body: "village village village " + filler},
		{URL: "http://p.test/none", Collection: "c", Body: filler},
	}, 1)
	search := func(q string) []string {
		t.Helper()
		res, err := ix.Search(context.Background(), q, SearchOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Total != uint64(len(res.Hits)) {
			t.Fatalf("%s: total %d, %d hits", q, res.Total, len(res.Hits))
		}
		return urls(res)
	}
	got := search("harvest village")
	if diff := cmp.Diff(sorted([]string{"http://p.test/adjacent", "http://p.test/reversed", "http://p.test/scattered"}), sorted(got)); diff != "" {
		t.Errorf("harvest village (-want +got):\n%s", diff)
	}
	if len(got) == 0 || got[0] != "http://p.test/adjacent" {
		t.Errorf("harvest village: order %v, want the adjacent page first", got)
	}
	got = search("harvest OR village")
	want := []string{"http://p.test/adjacent", "http://p.test/harvest", "http://p.test/reversed", "http://p.test/scattered", "http://p.test/village"}
	if diff := cmp.Diff(want, sorted(got)); diff != "" {
		t.Errorf("harvest OR village (-want +got):\n%s", diff)
	}
	got = search(`harvest OR village -fair`)
	if diff := cmp.Diff(want[1:], sorted(got)); diff != "" {
		t.Errorf("harvest OR village -fair (-want +got):\n%s", diff)
	}
	// Three words: all three together beat two together, which beat none.
	load(t, ix, []Doc{
		{URL: "http://q.test/three", Collection: "c", Body: filler + "harvest village show " + filler},
		{URL: "http://q.test/two", Collection: "c", Body: "show " + filler + "harvest village " + filler},
		{URL: "http://q.test/apart", Collection: "c", Body: "show " + filler + "harvest " + filler + "village"},
	}, 2)
	got = search("harvest village show")
	if diff := cmp.Diff([]string{"http://q.test/three", "http://q.test/two", "http://q.test/apart"}, got); diff != "" {
		t.Errorf("harvest village show (-want +got):\n%s", diff)
	}
}

// TestCloseSettlesFirst: Close waits for bleve's persister and merger to
// catch up with the batches (closing in the middle of a persist races
// inside bleve), so a batch closed right after Apply is on disk and the
// background threads are idle when the index closes.
func TestCloseSettlesFirst(t *testing.T) {
	dir := t.TempDir()
	ix, err := Open(dir, Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	for v := uint64(1); v <= 20; v++ {
		load(t, ix, corpus, v)
	}
	p := ix.parts[0]
	p.settle(10 * time.Second)
	idx, _ := p.b.StatsMap()["index"].(map[string]interface{})
	if active, ok := idx["index_bgthreads_active"].(bool); !ok || active {
		t.Fatalf("after settle: index_bgthreads_active %v (present %v)", active, ok)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	ix, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	r, err := ix.Search(context.Background(), "apples", SearchOptions{Collection: "intra"})
	if err != nil || r.Total != 1 {
		t.Fatalf("after reopening: %v %+v", err, r)
	}
}
