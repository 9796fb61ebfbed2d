package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/index"
	"github.com/trawl/trawl/internal/testenv"
)

// searchData makes DIR/index with a few documents and returns DIR.
func searchData(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	ix, err := index.Open(filepath.Join(dir, "index"), index.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	var ops []index.Op
	for i := range 15 {
		ops = append(ops, index.Op{Version: 1, Doc: index.Doc{
			URL: fmt.Sprintf("http://site%d.test/page%d", i%3, i), Collection: "web", MIME: "text/html",
			Title: fmt.Sprintf("Page %d about otters", i), Body: strings.Repeat("otters swim ", i+1) + "in the river",
		}})
	}
	ops = append(ops, index.Op{Version: 1, Doc: index.Doc{URL: "http://docs.test/otters.pdf", Collection: "docs", MIME: "application/pdf",
		Title: "Otter handbook", Body: "Everything about sea otters."}})
	if _, err := ix.Apply(context.Background(), ops); err != nil {
		t.Fatal(err)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

func runSearchCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := runMain(context.Background(), &cmdEnv{stdin: strings.NewReader(""), stdout: &out, stderr: &errb}, append([]string{"search"}, args...))
	return code, out.String(), errb.String()
}

func TestSearchCommand(t *testing.T) {
	dir := searchData(t)
	code, out, errs := runSearchCmd(t, "--data", dir, "--size", "3", "otters", "river")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	// One URL per result, then its title and snippet.
	lines := strings.Split(out, "\n")
	m := regexp.MustCompile(`^1\. http://site\d\.test/page(\d+)$`).FindStringSubmatch(lines[0])
	if m == nil || !strings.Contains(lines[1], "Page "+m[1]+" about otters") || !strings.HasPrefix(lines[3], "2. http://") ||
		!strings.Contains(lines[2], "*otters*") || !strings.Contains(out, "results 1-3 of 15 for otters river") {
		t.Errorf("output:\n%s", out)
	}

	code, out, _ = runSearchCmd(t, "--data", dir, "--from", "13", "--size", "5", "otters", "-sea")
	if code != 0 || !strings.Contains(out, "results 14-15 of 15") || !strings.HasPrefix(out, "14. ") {
		t.Errorf("paging: exit %d\n%s", code, out)
	}

	code, out, _ = runSearchCmd(t, "--data", dir, "--collection", "docs", "--json", "otters")
	if code != 0 {
		t.Fatalf("json: exit %d", code)
	}
	var res index.Results
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	if res.Total != 1 || len(res.Hits) != 1 || res.Hits[0].URL != "http://docs.test/otters.pdf" || !strings.Contains(res.Hits[0].Snippet, "<mark>otters</mark>") {
		t.Errorf("json results %+v", res)
	}

	code, out, _ = runSearchCmd(t, "--data", dir, "otters", "site:site1.test", "type:html")
	if code != 0 || !strings.Contains(out, "of 5 for otters site:site1.test type:html") || strings.Contains(out, "site0.test") {
		t.Errorf("filters: exit %d\n%s", code, out)
	}

	code, out, _ = runSearchCmd(t, "--data", dir, "walrus")
	if code != 0 || !strings.HasPrefix(out, "no results for walrus") {
		t.Errorf("no results: exit %d\n%s", code, out)
	}
}

func TestSearchCommandErrors(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"no query", []string{"--data", t.TempDir()}, 2, "no query"},
		{"bad size", []string{"--size", "0", "x"}, 2, "--size"},
		{"no index", []string{"--data", t.TempDir(), "x"}, 1, "no index"},
		{"help", []string{"--help"}, 0, "usage: trawl search"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errs := runSearchCmd(t, tt.args...)
			if code != tt.code || !strings.Contains(errs, tt.stderr) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, errs, tt.code, tt.stderr)
			}
		})
	}
}

func TestSearchServe(t *testing.T) {
	dir := searchData(t)
	ctx, cancel := context.WithCancel(context.Background())
	var out, errb testenv.Buffer
	done := make(chan int, 1)
	go func() {
		done <- runMain(ctx, &cmdEnv{stdin: strings.NewReader(""), stdout: &out, stderr: &errb},
			[]string{"search", "--data", dir, "--serve", "127.0.0.1:0"})
	}()
	re := regexp.MustCompile(`serving search on (http://\S+)/search`)
	var base string
	deadline := time.Now().Add(20 * time.Second)
	for base == "" {
		if m := re.FindStringSubmatch(out.String()); m != nil {
			base = m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("server did not start: %s", errb.String())
		} else {
			time.Sleep(5 * time.Millisecond)
		}
	}
	get := func(path string) string {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s: %s", path, resp.Status)
		}
		return string(b)
	}
	page := get("/search?q=otters&size=5")
	for _, want := range []string{`name="q" value="otters"`, `<mark>otters</mark>`, `rel="next"`, "Results 1-5 of 16"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	var res index.Results
	if err := json.Unmarshal([]byte(get("/api/search?q=otter+type:pdf")), &res); err != nil {
		t.Fatal(err)
	}
	if res.Total != 1 || res.Hits[0].Type != "pdf" {
		t.Errorf("api: %+v", res)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("exit %d: %s", code, errb.String())
	}
}
