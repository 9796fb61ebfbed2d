package datadir

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trawl/trawl/internal/cli"
	"github.com/trawl/trawl/internal/cli/clitest"
	"github.com/trawl/trawl/internal/store"
)

func runTrawl(args ...string) (int, string) {
	code, out, errOut := clitest.Run(context.Background(), []cli.Command{StoreCommand(), ExportCommand("test")}, "", args...)
	return code, out + errOut
}

func TestStoreListGet(t *testing.T) {
	dir := t.TempDir()
	st, err := store.Open(dir, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	b := st.NewBatch()
	rec := &store.URIRecord{URI: "http://a.test/x", Site: "a.test", Status: store.StatusFetched, HTTPCode: 200, ContentType: "text/html"}
	if err := b.PutURI("c", rec); err != nil {
		t.Fatal(err)
	}
	if err := b.PutDocument("c", rec.URI, []byte("<p>hello</p>")); err != nil {
		t.Fatal(err)
	}
	if err := b.PutHeader("c", rec.URI, []byte("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nX-Served-By: farm\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	st.Close()
	run := runTrawl
	if code, out := run("store", "list", "--data", dir); code != 0 || !strings.Contains(out, "fetched") || !strings.Contains(out, "http://a.test/x") {
		t.Errorf("list: %d %q", code, out)
	}
	if code, out := run("store", "list", "--data", dir, "--collection", "c", "--site", "a.test"); code != 0 || !strings.Contains(out, "200") {
		t.Errorf("list --site: %d %q", code, out)
	}
	if code, out := run("store", "get", "--data", dir, "http://a.test/x"); code != 0 || !strings.HasSuffix(out, "<p>hello</p>") || !strings.Contains(out, "status: fetched") {
		t.Errorf("get: %d %q", code, out)
	}
	if _, out := run("store", "get", "--data", dir, "http://a.test/x"); !strings.Contains(out, "http_header:\n  HTTP/1.1 200 OK\n  Content-Type: text/html\n  X-Served-By: farm\n\n<p>hello</p>") {
		t.Errorf("get does not show the stored response header: %q", out)
	}
	if code, _ := run("store", "get", "--data", dir, "http://a.test/none"); code != 1 {
		t.Errorf("get of a missing URI: exit %d", code)
	}
	for _, args := range [][]string{{"store", "list", "--help"}, {"store", "get", "--help"}} {
		if code, out := run(args...); code != 0 || !strings.Contains(out, "usage: trawl") {
			t.Errorf("%v: %d %q", args, code, out)
		}
	}
	// trawl export warc writes the stored document and its CDXJ index.
	out := filepath.Join(t.TempDir(), "out")
	if code, msg := run("export", "warc", "--data", dir, "--out", out); code != 0 || !strings.Contains(msg, "exported 1 documents") {
		t.Fatalf("export: %d %q", code, msg)
	}
	idx, _ := filepath.Glob(filepath.Join(out, "*.cdxj"))
	if b, err := os.ReadFile(idx[0]); len(idx) != 1 || err != nil || !strings.Contains(string(b), `"url":"http://a.test/x"`) {
		t.Errorf("CDXJ %v: %q %v", idx, b, err)
	}
	if code, _ := run("export", "warc", "--data", dir); code != 2 {
		t.Errorf("export without --out: exit %d", code)
	}
}

// TestRefusals: a --data that is not a crawl's data directory is refused
// with what to give instead, before anything is opened.
func TestRefusals(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	os.WriteFile(file, nil, 0o644)
	for _, tc := range []struct{ data, want string }{
		{filepath.Join(dir, "none"), "does not exist: give --data"},
		{file, "is a file, not a crawl's data directory"},
		{dir, "is not a crawl's data directory: expected " + filepath.Join(dir, "node")},
	} {
		if code, msg := runTrawl("store", "list", "--data", tc.data); code != 1 || !strings.Contains(msg, tc.want) {
			t.Errorf("store list --data %s: %d %q, want %q", tc.data, code, msg, tc.want)
		}
	}
	if _, err := IndexDir(dir); err == nil || !strings.Contains(err.Error(), "no index: ") {
		t.Errorf("IndexDir of an empty directory: %v", err)
	}
	st, err := store.Open(filepath.Join(dir, "node"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	if _, err := IndexDir(dir); err == nil || !strings.Contains(err.Error(), "ran with --index=false") {
		t.Errorf("IndexDir of a crawl without an index: %v", err)
	}
	os.MkdirAll(filepath.Join(dir, "index"), 0o755)
	os.WriteFile(filepath.Join(dir, "index", "index_meta.json"), []byte("{}"), 0o644)
	if d, err := IndexDir(dir); err != nil || d != filepath.Join(dir, "index") {
		t.Errorf("IndexDir: %q %v", d, err)
	}
}
