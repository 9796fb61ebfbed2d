package index

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/trawl/trawl/internal/clicks"
)

// TestClickRelevanceBoost: a URL clicked for a query rises for that query
// (the words in any case and order of spaces) and for no other.
func TestClickRelevanceBoost(t *testing.T) {
	dir := t.TempDir()
	relPath := filepath.Join(dir, clicks.OutRelevance)
	rel := clicks.NewRelevance(relPath)
	ix := openTest(t, Options{Clicks: rel})
	var docs []Doc
	for i := range 5 {
		docs = append(docs, Doc{URL: "http://o.test/" + string(rune('a'+i)), Collection: "c",
			Body: strings.Repeat("orchard cider ", 6-i) + strings.Repeat("filler ", 20)})
	}
	load(t, ix, docs, 1)
	order := func(q string, o SearchOptions) []string {
		t.Helper()
		res, err := ix.Search(context.Background(), q, o)
		if err != nil {
			t.Fatal(err)
		}
		return urls(res)
	}
	before := map[string][]string{}
	queries := []string{"orchard cider", "orchard", "cider"}
	for _, q := range queries {
		before[q] = order(q, SearchOptions{})
	}
	if before["orchard cider"][2] != "http://o.test/c" {
		t.Fatalf("order %v", before["orchard cider"])
	}
	if err := os.WriteFile(relPath, []byte("http://o.test/c 3 3 1 1 orchard+cider\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rel.Reload()
	if got := order("Orchard  CIDER", SearchOptions{}); got[0] != "http://o.test/c" {
		t.Errorf("after the clicks: %v, want o.test/c first", got)
	}
	for _, q := range queries[1:] {
		if diff := cmp.Diff(before[q], order(q, SearchOptions{})); diff != "" {
			t.Errorf("%s: order changed (-before +after):\n%s", q, diff)
		}
	}
	// With the page's site field, the query is a filtered one: no boost.
	if got := order("orchard cider", SearchOptions{Site: "o.test"}); got[0] == "http://o.test/c" {
		t.Errorf("a site-filtered search got the boost: %v", got)
	}
	// A bad table keeps the last good one.
	if err := os.WriteFile(relPath, []byte("garbage\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rel.Reload()
	if got := order("orchard cider", SearchOptions{}); got[0] != "http://o.test/c" || rel.Err() == nil {
		t.Errorf("after a bad table: %v, err %v", got, rel.Err())
	}
}

// TestClickRedirect: with a click log, the page's result links and the
// API's click_url go through /click, which logs the click and redirects;
// a link with a bad signature is not followed automatically nor logged.
func TestClickRedirect(t *testing.T) {
	data := t.TempDir()
	l, err := clicks.OpenLog(clicks.LogDir(data), nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(NewHandler(pageCorpus(t), HandlerOptions{Clicks: l}))
	defer srv.Close()
	_, page := get(t, srv, "/search?q=lemon+juice&size=3")
	if n := strings.Count(page, `href="/click?`); n != 3 {
		t.Fatalf("%d result links through /click, want 3", n)
	}
	code, body := get(t, srv, "/api/search?q=lemon&size=2&from=4")
	var res Results
	if err := json.Unmarshal([]byte(body), &res); err != nil || code != 200 {
		t.Fatal(code, err)
	}
	if res.QueryID == "" || len(res.Hits) != 2 || !strings.Contains(res.Hits[1].ClickURL, "pos=6") {
		t.Fatalf("results %+v", res)
	}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(srv.URL + res.Hits[1].ClickURL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != res.Hits[1].URL {
		t.Errorf("click: %s to %q", resp.Status, resp.Header.Get("Location"))
	}
	forged := "/click?" + url.Values{"q": {res.QueryID}, "u": {"http://evil.test/phish"}, "pos": {"1"}, "s": {"00"}}.Encode()
	resp, err = noFollow.Get(srv.URL + forged)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("forged click: %s", resp.Status)
	}
	logged := func(kind string) []string {
		t.Helper()
		m, _ := filepath.Glob(filepath.Join(clicks.LogDir(data), "*."+kind))
		var lines []string
		for _, f := range m {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			lines = append(lines, strings.Split(strings.TrimSpace(string(b)), "\n")...)
		}
		return lines
	}
	if q := logged(clicks.KindQueries); len(q) != 2 || !strings.HasSuffix(q[0], " lemon+juice") {
		t.Errorf("queries logged: %q", q)
	}
	c := logged(clicks.KindClicks)
	if len(c) != 1 || !strings.HasPrefix(c[0], clicks.URLID(res.Hits[1].URL)+" "+res.QueryID+" "+l.LCID()+" ") || !strings.HasSuffix(c[0], " 6") {
		t.Errorf("clicks logged: %q", c)
	}
}
