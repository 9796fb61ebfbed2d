package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/trawl/trawl/internal/store"
)

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
	run := func(args ...string) (int, string) {
		var out, errb bytes.Buffer
		code := runMain(context.Background(), &cmdEnv{stdout: &out, stderr: &errb}, args)
		return code, out.String() + errb.String()
	}
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
	for _, args := range [][]string{{"node", "--help"}, {"store", "list", "--help"}, {"store", "get", "--help"}} {
		if code, out := run(args...); code != 0 || !strings.Contains(out, "usage: trawl") {
			t.Errorf("%v: %d %q", args, code, out)
		}
	}
	if code, _ := run("node", "--id", "x"); code != 2 {
		t.Errorf("node without --multinode: exit %d", code)
	}
}
