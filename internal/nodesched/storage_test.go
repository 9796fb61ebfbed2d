package nodesched

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/trawl/trawl/internal/feed"
	"github.com/trawl/trawl/internal/index"
	"github.com/trawl/trawl/internal/nodesched/crawlpipe"
	"github.com/trawl/trawl/internal/store"
)

// storageSite serves a home page linking an article, an exact copy of it
// under another URL (linked after it, so the first one owns the content),
// an image and a text file; every response carries an X-Served-By header.
func storageSite(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Served-By", "storage-site")
	html := func(s string) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, s)
	}
	switch r.URL.Path {
	case "/robots.txt":
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "User-agent: *\nAllow: /\n")
	case "/":
		html(`<html><body><p>home</p><a href="/article.html">a</a> <a href="/picture">i</a> <a href="/notes.txt">n</a></body></html>`)
	case "/article.html":
		html(`<html><body><p>the same article text, twice on this site</p><a href="/copy.html">copy</a></body></html>`)
	case "/copy.html":
		html(`<html><body><p>the same article text, twice on this site</p><a href="/copy.html">copy</a></body></html>`)
	case "/picture":
		w.Header().Set("Content-Type", "image/png")
		fmt.Fprint(w, strings.Repeat("\x89PNG pixels ", 200))
	case "/notes.txt":
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, strings.Repeat("plain notes ", 200))
	default:
		http.NotFound(w, r)
	}
}

// TestCrawlStorage crawls storageSite under storage and diffcheck
// settings and reads the crawl store: which documents have bodies, their
// codecs, their headers, and the copy's status.
func TestCrawlStorage(t *testing.T) {
	type want struct {
		copyStatus store.Status
		bodies     []string // paths with a stored body
		codecs     map[string]store.Codec
		header     bool // article.html has its response header
	}
	all := []string{"/", "/article.html", "/copy.html", "/picture", "/notes.txt"}
	noCopy := []string{"/", "/article.html", "/picture", "/notes.txt"}
	snappy := map[string]store.Codec{"/": store.CodecSnappy, "/article.html": store.CodecSnappy, "/picture": store.CodecSnappy, "/notes.txt": store.CodecSnappy}
	for _, tc := range []struct {
		name, xml string
		want      want
	}{
		{"defaults", "", want{store.StatusDuplicate, noCopy, snappy, true}},
		{"store_dupes", `<section name="storage"><attrib name="store_dupes" type="boolean"> yes </attrib></section>`,
			want{store.StatusDuplicate, all, snappy, true}},
		{"diffcheck off", `<attrib name="diffcheck" type="boolean"> no </attrib>`,
			want{store.StatusFetched, all, snappy, true}},
		{"compress off, no headers", `<section name="storage"><attrib name="compress" type="boolean"> no </attrib><attrib name="store_http_header" type="boolean"> no </attrib></section>`,
			want{store.StatusDuplicate, noCopy, map[string]store.Codec{"/": store.CodecNone, "/article.html": store.CodecNone, "/picture": store.CodecNone, "/notes.txt": store.CodecNone}, false}},
		{"compress_exclude_mime", `<section name="storage"><attrib name="compress_exclude_mime" type="list-string"><member> image/* </member><member> text/plain </member></attrib></section>`,
			want{store.StatusDuplicate, noCopy, map[string]store.Codec{"/": store.CodecSnappy, "/article.html": store.CodecSnappy, "/picture": store.CodecNone, "/notes.txt": store.CodecNone}, true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := fmt.Sprintf("http://store.test:%d", serveHandler(t, http.HandlerFunc(storageSite)))
			extra := `<attrib name="max_pending" type="integer"> 1 </attrib>
    <attrib name="allowed_types" type="list-string"><member> */* </member></attrib>
    ` + tc.xml
			var extracted atomic.Int64 // without storage/uri_dir no outcome lists its links for a file
			c := startCrawlWith(t, optXML(optCollection("st", base+"/", "store.test", extra)), func(dc *Config) {
				dc.Observe = func(_ string, o *crawlpipe.Outcome) {
					if o.Extracted != nil {
						extracted.Add(1)
					}
				}
			})
			waitIdle(t, c.d, 60*time.Second)
			if extracted.Load() != 0 || c.d.files.Load() != nil {
				t.Errorf("storage/uri_dir unset, yet %d outcomes list extracted URIs, file writer %v", extracted.Load(), c.d.files.Load())
			}
			rec, ok, err := c.st.URI("st", base+"/copy.html")
			if err != nil || !ok {
				t.Fatalf("no record of the copy: %v", err)
			}
			if rec.Status != tc.want.copyStatus {
				t.Errorf("copy status %v, want %v", rec.Status, tc.want.copyStatus)
			}
			var bodies []string
			codecs := map[string]store.Codec{}
			for _, p := range all {
				if _, ok, err := c.st.Document("st", base+p); err != nil {
					t.Fatal(err)
				} else if ok {
					bodies = append(bodies, p)
				}
				if cd, ok, err := c.st.DocumentCodec("st", base+p); err == nil && ok && p != "/copy.html" {
					codecs[p] = cd
				}
			}
			if d := cmp.Diff(tc.want.bodies, bodies); d != "" {
				t.Errorf("stored bodies (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.want.codecs, codecs); d != "" {
				t.Errorf("codecs (-want +got):\n%s", d)
			}
			hdr, ok, err := c.st.Header("st", base+"/article.html")
			if err != nil {
				t.Fatal(err)
			}
			if ok != tc.want.header {
				t.Errorf("header stored: %v, want %v", ok, tc.want.header)
			}
			if ok && (!strings.HasPrefix(string(hdr), "HTTP/1.1 200 OK\r\n") || !strings.Contains(string(hdr), "X-Served-By: storage-site\r\n")) {
				t.Errorf("header %q", hdr)
			}
		})
	}
}

// TestCrawlRemoveDocs feeds a crawl to an embedded index: with remove_docs
// the bodies of the fed documents leave the crawl store (the index has
// them); without it they stay.
func TestCrawlRemoveDocs(t *testing.T) {
	for _, remove := range []bool{false, true} {
		t.Run(fmt.Sprintf("remove_docs=%v", remove), func(t *testing.T) {
			base := fmt.Sprintf("http://store.test:%d", serveHandler(t, http.HandlerFunc(storageSite)))
			idx, err := index.Open(filepath.Join(t.TempDir(), "index"), index.Options{Create: true})
			if err != nil {
				t.Fatal(err)
			}
			extra := fmt.Sprintf(`<attrib name="allowed_types" type="list-string"><member> text/html </member></attrib>
    <section name="storage"><attrib name="remove_docs" type="boolean"> %s </attrib></section>`, map[bool]string{true: "yes", false: "no"}[remove])
			c := startCrawlWith(t, optXML(optCollection("st", base+"/", "store.test", extra)), func(dc *Config) {
				dc.Feed = &FeedConfig{Dial: feed.IndexDialer(idx), Feeder: feed.FeederOptions{BatchOps: 10, MinBackoff: 10 * time.Millisecond}}
			})
			t.Cleanup(func() { idx.Close() })
			waitIdle(t, c.d, 60*time.Second)
			deadline := time.Now().Add(60 * time.Second)
			for c.d.FeedPending() > 0 {
				if time.Now().After(deadline) {
					t.Fatalf("feeding not done: %d pending", c.d.FeedPending())
				}
				time.Sleep(10 * time.Millisecond)
			}
			n, err := idx.Count()
			if err != nil || n != 2 { // "/" and article.html; the copy is a duplicate
				t.Errorf("index holds %d documents (%v), want 2", n, err)
			}
			docs, err := c.st.CountDocuments("st")
			if err != nil {
				t.Fatal(err)
			}
			if want := map[bool]int{false: 2, true: 0}[remove]; docs != want {
				t.Errorf("%d bodies in the crawl store, want %d", docs, want)
			}
			if r, ok, _ := c.st.URI("st", base+"/article.html"); !ok || r.Status != store.StatusFetched {
				t.Errorf("record of the article %+v", r)
			}
		})
	}
}
