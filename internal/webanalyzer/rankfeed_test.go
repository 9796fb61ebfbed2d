package webanalyzer

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/clicks"
	"github.com/trawl/trawl/internal/index"
)

// anchorWeb is a web of five sites on one loopback server: t.test/target
// lacks "zeppelin" in its own text while the three links to it from other
// sites carry it; d.test/zep holds it twice in its own text. a, b and c
// hold "common", c the least.
var anchorWeb = map[string]string{
	"a.test": `<title>a</title><p>common common portal page</p><a href="http://b.test:%[1]s/">b</a> <a href="http://c.test:%[1]s/">c</a>
<a href="http://t.test:%[1]s/target">zeppelin</a> <a href="http://d.test:%[1]s/zep">history</a>`,
	"b.test": `<title>b</title><p>common common second page</p><a href="http://t.test:%[1]s/target">zeppelin airship</a>`,
	"c.test": `<title>c</title><p>a longer third page with many words: filler text, more filler, still more filler, then
common once, then filler again and again</p><a href="http://t.test:%[1]s/target">zeppelin</a>`,
	"d.test": `<title>d</title><p>zeppelin zeppelin: a history of flight</p>`,
	"t.test": `<title>t</title><p>a plain page about flight</p>`,
}

// TestTrawlRunFeedsRanksAndClicks runs trawl run --once --webanalyzer on
// (a separate process) over anchorWeb, with a click log in which the page
// of "common" ranked last was clicked three times: the analysis's ranks
// and anchor text reach the index through the feeding chain (t.test/target
// is found by "zeppelin", first, above d.test/zep which holds the word
// twice and the pages whose links carry it;
// every analysed page has a rank, the most linked the highest), and the
// click build ran, so c.test comes first for "common" with the click
// relevance and for no other query.
func TestTrawlRunFeedsRanksAndClicks(t *testing.T) {
	dir := t.TempDir()
	// A binary without the race detector: the build is a chain of short
	// table processes, each a second slower with it.
	bin := filepath.Join(dir, "trawl")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/trawl/trawl/cmd/trawl").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, port, _ := net.SplitHostPort(r.Host)
		page, ok := anchorWeb[host]
		if !ok || (r.URL.Path != "/" && r.URL.Path != "/target" && r.URL.Path != "/zep") {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, "<html><head>"+page+"</body></html>", port)
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	hosts := filepath.Join(dir, "hosts")
	if err := os.WriteFile(hosts, []byte("127.0.0.1\ta.test b.test c.test d.test t.test\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var starts strings.Builder
	for _, u := range []string{"a.test/", "d.test/zep"} {
		fmt.Fprintf(&starts, "<member>http://%s</member>", strings.Replace(u, "/", ":"+port+"/", 1))
	}
	cfg := filepath.Join(dir, "crawl.xml")
	xml := `<?xml version="1.0" encoding="utf-8"?>
<CrawlerConfig><DomainSpecification name="web">
<attrib name="start_uris" type="list-string">` + starts.String() + `</attrib>
<attrib name="delay" type="real">0</attrib>
<attrib name="robots" type="boolean">no</attrib>
<section name="include_domains"><attrib name="suffix" type="list-string"><member>.test</member></attrib></section>
</DomainSpecification></CrawlerConfig>`
	if err := os.WriteFile(cfg, []byte(xml), 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	l, err := clicks.OpenLog(clicks.LogDir(data), nil)
	if err != nil {
		t.Fatal(err)
	}
	cURL := "http://c.test:" + port + "/"
	for range 3 {
		id, err := l.Query("common")
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Click(id, cURL, 3); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "run", "--once", "--webanalyzer", "on", "--webanalyzer-rounds", "3", "--config", cfg,
		"--hosts-file", hosts, "--data", data, "--listen", "off", "--progress", "off")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("trawl run: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "ranks and anchor text of 5 pages applied to the index") {
		t.Errorf("trawl run's output lacks the ranks applied:\n%s", out)
	}

	// Without the click relevance first (one read-only opening at a time).
	plain, err := index.Open(filepath.Join(data, "index"), index.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	search := func(ix *index.Index, q string) []index.Hit {
		t.Helper()
		r, err := ix.Search(context.Background(), q, index.SearchOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return r.Hits
	}
	show := func(hits []index.Hit) string {
		var s []string
		for _, h := range hits {
			s = append(s, fmt.Sprintf("%s score %.3f rank %.3f", h.URL, h.Score, h.Rank))
		}
		return strings.Join(s, "; ")
	}
	plainCommon, plainPage := search(plain, "common"), show(search(plain, "page"))
	plain.Close()
	ix, err := index.Open(filepath.Join(data, "index"), index.Options{ReadOnly: true, Clicks: clicks.NewRelevance(clicks.RelevancePath(data))})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	target := "http://t.test:" + port + "/target"
	// The pages linking to the target hold the word in their text too (a
	// link's text is part of its page's).
	hits := search(ix, "zeppelin")
	if len(hits) != 5 || hits[0].URL != target {
		t.Errorf("zeppelin finds %s, want %s first of 5", show(hits), target)
	}
	st, err := ix.Lookup(context.Background(), "web", target)
	if err != nil || !st.Found || strings.Contains(st.Body, "zeppelin") || st.FieldsVersion == 0 {
		t.Errorf("the target as stored: %+v, %v", st, err)
	}
	// Every page has a rank; the target, linked from three sites, the highest.
	all := search(ix, "page OR flight")
	if len(all) != 5 {
		t.Errorf("page OR flight finds %s, want the 5 pages", show(all))
	}
	for _, h := range all {
		if h.Rank <= 0 || h.URL != target && h.Rank >= st.Rank {
			t.Errorf("rank of %s is %.3f, the target's %.3f", h.URL, h.Rank, st.Rank)
		}
	}
	// The click build ran: c.test is first for "common" with the
	// relevance, not without; other queries are unchanged.
	if _, err := os.Stat(clicks.RelevancePath(data)); err != nil {
		t.Fatalf("no click relevance: %v", err)
	}
	if len(plainCommon) != 3 || plainCommon[0].URL == cURL {
		t.Errorf("without clicks, common finds %s", show(plainCommon))
	}
	if hits := search(ix, "common"); len(hits) != 3 || hits[0].URL != cURL {
		t.Errorf("with clicks, common finds %s, want %s first", show(hits), cURL)
	}
	if b := show(search(ix, "page")); plainPage != b {
		t.Errorf("the clicks for common moved the results of page:\n%s\n%s", plainPage, b)
	}
}
