package index

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/testenv"
)

func pageCorpus(t *testing.T) *Index {
	t.Helper()
	ix := openTest(t, Options{})
	var docs []Doc
	for i := range 23 {
		docs = append(docs, Doc{URL: fmt.Sprintf("http://site%d.test/lemon/%d", i%2, i), Collection: "web", MIME: "text/html",
			Title: fmt.Sprintf("Lemon %d", i), Body: "Fresh lemon juice & lemon cake. " + strings.Repeat("citrus ", i)})
	}
	docs = append(docs, Doc{URL: "http://evil.test/x", Collection: "web", MIME: "text/plain",
		Title: `<script>alert(1)</script> lemon`, Body: `lemon <img src=x onerror=alert(1)>`})
	load(t, ix, docs, 1)
	return ix
}

func get(t *testing.T, srv *httptest.Server, path string) (int, string) {
	t.Helper()
	resp, err := http.Get(srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

func TestSearchPage(t *testing.T) {
	srv := httptest.NewServer(Handler(pageCorpus(t)))
	defer srv.Close()

	code, page := get(t, srv, "/search?q=lemon&size=10")
	if code != 200 {
		t.Fatalf("status %d", code)
	}
	for _, want := range []string{
		`<form id="search" action="/search"`, `name="q" value="lemon"`, // the query box, filled
		`<ol class="results" id="results" start="1">`, "Results 1-10 of 24",
		`<mark>lemon</mark>`,               // highlighted snippets
		`rel="next"`, `from=10`, `from=20`, // paging
		`id="sites"`, `site=site0.test`, `id="types"`, `type=text`, // facet filters
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if n := strings.Count(page, `<li class="hit">`); n != 10 {
		t.Errorf("%d results on the page, want 10", n)
	}
	if strings.Contains(page, "<script>alert") || strings.Contains(page, "<img src=x") {
		t.Error("document text reaches the page unescaped")
	}

	// The last page has a previous link and no next one.
	_, page = get(t, srv, "/search?q=lemon&size=10&from=20")
	if !strings.Contains(page, `rel="prev"`) || strings.Contains(page, `rel="next"`) || !strings.Contains(page, "Results 21-24 of 24") {
		t.Errorf("last page:\n%s", page)
	}
	// Filters from the form.
	_, page = get(t, srv, "/search?q=lemon&site=site1.test&type=html")
	if !strings.Contains(page, "of 11 for") || strings.Contains(page, "site0.test/lemon") {
		t.Errorf("filtered page lacks the site filter")
	}
	// No query: just the box.
	code, page = get(t, srv, "/search")
	if code != 200 || !strings.Contains(page, `name="q" value=""`) || strings.Contains(page, `id="results"`) {
		t.Errorf("empty page: %d", code)
	}
	code, page = get(t, srv, "/search?q=lemon&from=x")
	if code != 400 || !strings.Contains(page, "bad from") {
		t.Errorf("bad from: %d", code)
	}
	resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Get(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "/search" {
		t.Errorf("/ = %s %s", resp.Status, resp.Header.Get("Location"))
	}
}

func TestSearchAPI(t *testing.T) {
	srv := httptest.NewServer(Handler(pageCorpus(t)))
	defer srv.Close()
	code, body := get(t, srv, "/api/search?q=lemon+citrus&from=5&size=5&site=site0.test")
	if code != 200 {
		t.Fatalf("status %d: %s", code, body)
	}
	var res Results
	if err := json.Unmarshal([]byte(body), &res); err != nil {
		t.Fatal(err)
	}
	// Docs 2..22 even have citrus (doc 0 has none): 11 on site0.
	if res.Total != 11 || len(res.Hits) != 5 || res.From != 5 || res.Parsed != "lemon citrus site:site0.test" {
		t.Errorf("results %+v", res)
	}
	for _, h := range res.Hits {
		if h.Site != "site0.test" || !strings.Contains(h.Snippet, "<mark>") || h.URL == "" || h.Score <= 0 {
			t.Errorf("hit %+v", h)
		}
	}
	if len(res.Types) == 0 || res.Types[0].Value != "html" {
		t.Errorf("type facet %+v", res.Types)
	}
	code, body = get(t, srv, "/api/search?q=x&size=-1")
	if code != 400 || !strings.Contains(body, "bad size") {
		t.Errorf("bad size: %d %s", code, body)
	}
}

// TestDocAPI: GET /api/doc gives a document's stored fields and version,
// and the version of a removed one.
func TestDocAPI(t *testing.T) {
	ix := pageCorpus(t)
	srv := httptest.NewServer(Handler(ix))
	defer srv.Close()
	doc := func(path string) (int, DocInfo) {
		t.Helper()
		code, body := get(t, srv, path)
		var d DocInfo
		if code == 200 {
			if err := json.Unmarshal([]byte(body), &d); err != nil {
				t.Fatal(err)
			}
		}
		return code, d
	}
	u := "http://site1.test/lemon/3"
	if code, d := doc("/api/doc?collection=web&url=" + url.QueryEscape(u)); code != 200 || !d.Found || d.Version != 1 ||
		d.Title != "Lemon 3" || d.Site != "site1.test" || d.Type != "html" || d.URL != u {
		t.Errorf("stored document: %d %+v", code, d)
	}
	if code, d := doc("/api/doc?collection=other&url=" + url.QueryEscape(u)); code != 200 || d.Found || d.Version != 0 {
		t.Errorf("another collection: %d %+v", code, d)
	}
	if _, err := ix.Apply(context.Background(), []Op{{Version: 5, Remove: true, Doc: Doc{URL: u, Collection: "web"}}}); err != nil {
		t.Fatal(err)
	}
	if code, d := doc("/api/doc?collection=web&url=" + url.QueryEscape(u)); code != 200 || d.Found || d.Version != 5 {
		t.Errorf("removed document: %d %+v", code, d)
	}
	if code, body := get(t, srv, "/api/doc?collection=web"); code != 400 || !strings.Contains(body, "no url") {
		t.Errorf("no url: %d %s", code, body)
	}
	plain := httptest.NewServer(Handler(searchOnly{ix}))
	defer plain.Close()
	if code, _ := get(t, plain, "/api/doc?url=x"); code != 404 {
		t.Errorf("a Searcher that is not a Looker serves /api/doc: %d", code)
	}
}

// searchOnly hides every method of an Index but Search.
type searchOnly struct{ ix *Index }

func (s searchOnly) Search(ctx context.Context, q string, o SearchOptions) (*Results, error) {
	return s.ix.Search(ctx, q, o)
}

// TestSearchPageInBrowser renders the page in headless Chromium and checks
// the DOM it built and that a screenshot comes out. It needs chromium.
func TestSearchPageInBrowser(t *testing.T) {
	var bin string
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			bin = p
			break
		}
	}
	if bin == "" {
		testenv.Missing(t, "chromium is not installed (apt-get install chromium)")
	}
	srv := httptest.NewServer(Handler(pageCorpus(t)))
	defer srv.Close()
	dir := t.TempDir()
	args := func(extra ...string) []string {
		return append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
			"--user-data-dir=" + filepath.Join(dir, "profile"), "--window-size=1024,900"}, extra...)
	}
	url := srv.URL + "/search?q=lemon+juice&size=5"
	run := func(extra ...string) []byte {
		cmd := exec.Command(bin, args(extra...)...)
		cmd.Env = append(os.Environ(), "HOME="+dir)
		done := make(chan struct{})
		var out []byte
		var err error
		go func() { out, err = cmd.Output(); close(done) }()
		select {
		case <-done:
		case <-time.After(60 * time.Second):
			_ = cmd.Process.Kill()
			<-done
			t.Fatal("chromium hung")
		}
		if err != nil {
			t.Fatalf("chromium: %v", err)
		}
		return out
	}
	dom := string(run("--dump-dom", url))
	if n := len(regexp.MustCompile(`<li class="hit">`).FindAllString(dom, -1)); n != 5 {
		t.Errorf("browser DOM has %d results, want 5", n)
	}
	for _, want := range []string{`<mark>lemon</mark>`, `rel="next"`, `name="q"`} {
		if !strings.Contains(dom, want) {
			t.Errorf("browser DOM lacks %q", want)
		}
	}
	shot := filepath.Join(dir, "search.png")
	run("--screenshot="+shot, url)
	b, err := os.ReadFile(shot)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 1000 || string(b[1:4]) != "PNG" {
		t.Errorf("screenshot is %d bytes", len(b))
	}
}
