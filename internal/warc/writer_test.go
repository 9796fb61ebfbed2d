package warc

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/testenv"
)

// needWarcio returns the warcio command, skipping the test without it
// outside CI (CI=true: a missing warcio fails the test).
func needWarcio(t *testing.T) string {
	t.Helper()
	return testenv.Tool(t, "python3 -m pip install warcio; test.sh does", "warcio")
}

func exchange(url string, status int, body string) Exchange {
	hdr := "HTTP/1.1 " + map[int]string{200: "200 OK", 304: "304 Not Modified", 301: "301 Moved Permanently"}[status] +
		"\r\nContent-Type: text/html\r\n"
	if status != 304 {
		hdr += "Content-Length: " + itoa(len(body)) + "\r\n"
	}
	hdr += "\r\n"
	return Exchange{URL: url, Date: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), IP: "127.0.0.1", Status: status,
		Request: []byte("GET / HTTP/1.1\r\nHost: a.test\r\n\r\n"), Header: []byte(hdr), Body: []byte(body)}
}

func itoa(n int) string {
	s := ""
	for {
		s = string(rune('0'+n%10)) + s
		n /= 10
		if n == 0 {
			return s
		}
	}
}

// TestWriterRecords writes responses, an identical payload, a 304 and a
// redirect hop, rotating files; warcio check accepts every file and
// warcio index lists the records the Writer counted.
func TestWriterRecords(t *testing.T) {
	warcio := needWarcio(t)
	dir := t.TempDir()
	w, err := New(Options{Dir: dir, Prefix: "test", Node: "n1", MaxSize: 2000, Info: map[string]string{"isPartOf": "c1"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	page := strings.Repeat("<p>otters</p>", 50)
	caps := []*Capture{
		{Exchanges: []Exchange{exchange("http://a.test/", 200, page)}, Outlinks: []string{"http://a.test/b"}, Collection: "c1"},
		{Exchanges: []Exchange{exchange("http://a.test/copy", 200, page)}},
		{Exchanges: []Exchange{exchange("http://a.test/", 304, "")}},
		{Exchanges: []Exchange{exchange("http://a.test/r", 301, "moved"), exchange("http://a.test/c", 200, "other")}},
	}
	for _, c := range caps {
		if err := w.Add(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(200 * time.Millisecond)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	st := w.Stats()
	if st.Responses != 3 || st.Revisits != 2 || st.Identical != 1 || st.NotModified != 1 || st.Requests != 5 || st.Metadata != 4 || st.Errors != 0 {
		t.Errorf("stats %+v", st)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "test-*-n1.warc.gz"))
	if len(files) < 2 || int64(len(files)) != st.Files {
		t.Fatalf("files %v, stats %+v: want rotation into several files", files, st)
	}
	var types []string
	for _, f := range files {
		if out, err := exec.Command(warcio, "check", "-v", f).CombinedOutput(); err != nil {
			t.Errorf("warcio check %s: %v\n%s", f, err, out)
		}
		out, err := exec.Command(warcio, "index", "-f", "warc-type,warc-target-uri,warc-payload-digest", f).CombinedOutput()
		if err != nil {
			t.Fatalf("warcio index: %v\n%s", err, out)
		}
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if i := strings.Index(l, `"warc-type": "`); i >= 0 {
				types = append(types, strings.SplitN(l[i+14:], `"`, 2)[0])
			}
		}
	}
	count := map[string]int{}
	for _, ty := range types {
		count[ty]++
	}
	if count["response"] != 3 || count["revisit"] != 2 || count["request"] != 5 || count["metadata"] != 4 || count["warcinfo"] != len(files) {
		t.Errorf("record types %v", count)
	}
}

// TestWriterBackPressureAndErrors: a full queue makes Add wait (until its
// context ends) rather than drop the capture; a write that fails (the
// directory is gone) is counted, and the writer goes on.
func TestWriterBackPressureAndErrors(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "w")
	w, err := New(Options{Dir: dir, Queue: 1})
	if err != nil {
		t.Fatal(err)
	}
	c := &Capture{Exchanges: []Exchange{exchange("http://a.test/", 200, "x")}}
	if err := w.Add(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := w.Add(ctx, c); err == nil {
		t.Fatal("Add on a full queue returned at once; want it to wait")
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	rctx, rcancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(rctx) }()
	deadline := time.Now().Add(10 * time.Second)
	for w.Stats().Errors == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	rcancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
	if st := w.Stats(); st.Errors != 1 || st.Responses != 0 {
		t.Errorf("stats %+v, want the failed write counted", st)
	}
	if err := w.Add(context.Background(), c); err == nil {
		t.Error("Add after Run returned: succeeded, want an error")
	}
}
