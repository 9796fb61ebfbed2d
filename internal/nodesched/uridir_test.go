package nodesched

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/config"
	"github.com/trawl/trawl/internal/nodesched/crawlpipe"
	"github.com/trawl/trawl/internal/store"
	"github.com/trawl/trawl/internal/webfarm"
)

// readURIFiles reads every URI file under dir (a collection's uri_dir
// directory): document URI -> its lines. It fails on a file not named
// after its document, a file without the header line, and a file left in
// .tmp.
func readURIFiles(t *testing.T, dir string) map[string][]string {
	t.Helper()
	u := &uriFiles{dir: dir, tmp: filepath.Join(dir, ".tmp")}
	out := map[string][]string{}
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() {
			if p == u.tmp {
				if left, err := os.ReadDir(p); err != nil || len(left) > 0 {
					t.Errorf("files left in %s: %v %v", p, left, err)
				}
			}
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		if !sc.Scan() || !strings.HasPrefix(sc.Text(), "# document: ") {
			t.Errorf("%s: no header line: %q", p, b)
			return nil
		}
		doc := strings.TrimPrefix(sc.Text(), "# document: ")
		if want := u.path(doc); want != p {
			t.Errorf("the file of %s is %s, want %s", doc, p, want)
		}
		lines := []string{}
		for sc.Scan() {
			lines = append(lines, sc.Text())
		}
		if !bytes.HasSuffix(b, []byte("\n")) {
			t.Errorf("%s: last line unterminated", p)
		}
		out[doc] = lines
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return out
}

// farmLinks are the lines the URI file of a farm document must hold: its
// links of the crawl's kinds (those within the stored size of a truncated
// page), in document order without repeats.
func farmLinks(t *testing.T, farm *webfarm.Farm, crawl webfarm.Crawl, uri string, cycle int, size int64) []string {
	t.Helper()
	res, err := farm.Describe(uri, cycle)
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	seen := map[string]bool{}
	for _, l := range res.Links {
		if !crawl.LinkKinds.Has(l.Kind) || (size < res.Size && l.End > size) || seen[l.URL] {
			continue
		}
		seen[l.URL] = true
		out = append(out, l.URL)
	}
	return out
}

// checkURIFiles checks the URI files of a farm crawl against its store:
// one file per crawled document (fetched, unchanged or duplicate) and no
// other, each listing the links the farm's model gives the document in the
// farm cycle it was fetched in (cycleOf).
func checkURIFiles(t *testing.T, r *crawlRun, dir string, cycleOf func(*store.URIRecord) int) map[string][]string {
	t.Helper()
	files := readURIFiles(t, dir)
	docs := map[string]bool{}
	html := 0
	err := r.st.URIs("farm", "", func(rec *store.URIRecord) error {
		switch rec.Status {
		case store.StatusFetched, store.StatusNotModified, store.StatusDuplicate:
		default:
			return nil
		}
		docs[rec.URI] = true
		got, ok := files[rec.URI]
		if !ok {
			t.Errorf("no URI file for %s (%v, %s)", rec.URI, rec.Status, rec.ContentType)
			return nil
		}
		want := []string{}
		if crawlpipe.IsHTML(rec.ContentType) {
			html++
			want = farmLinks(t, r.farm, r.crawl, rec.URI, cycleOf(rec), rec.Size)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("URI file of %s (%v, %s, cycle %d) (-want +got):\n%s", rec.URI, rec.Status, rec.ContentType, cycleOf(rec), d)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for doc := range files {
		if !docs[doc] {
			t.Errorf("a URI file for %s, which is no crawled document", doc)
		}
	}
	if html == 0 {
		t.Fatal("no HTML document crawled")
	}
	return files
}

// TestCrawlURIDir crawls the farm with storage/uri_dir set (a relative
// path: under the node's data directory) and checks the files against the
// farm's model: after the crawl, after a refresh cycle in which pages
// change, appear and go (a refetch overwrites the file, a deleted page
// loses it), after a site is deleted and after the collection is removed.
func TestCrawlURIDir(t *testing.T) {
	farm := startFarm(t, 5, 50)
	data := t.TempDir()
	opt := XMLOpts(0, 8)
	opt.Extra = `<section name="storage"><attrib name="uri_dir" type="string"> uris </attrib></section>`
	r := runCrawlWith(t, farm, data, farm.DefaultCrawl(), opt)
	dir := filepath.Join(data, "uris", "farm")
	waitIdle(t, r.d, 90*time.Second)

	cycle0 := int64(-1)
	files0 := checkURIFiles(t, r, dir, func(rec *store.URIRecord) int {
		cycle0 = max(cycle0, rec.LastFetchedCycle)
		return 0
	})
	var st Counters
	if err := r.d.Exec(context.Background(), func(m *Machine, _ time.Time) error { st = m.Stats("farm"); return nil }); err != nil {
		t.Fatal(err)
	}
	if st["uri_files_written"] < int64(len(files0)) || st["uri_files_failed"] != 0 {
		t.Errorf("counters %v for %d files", st, len(files0))
	}
	t.Logf("cycle 0: %d URI files", len(files0))

	// A refresh cycle against the farm's cycle 1.
	farm.SetCycle(1)
	r.mns.send(context.Background(), &cmt.AdmConfRefresh{Collection: "farm", Flags: cmt.RefreshCollection})
	deadline := time.Now().Add(30 * time.Second)
	for r.d.Stats()["farm"]["refresh_cycles"] == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no refresh cycle started")
		}
		time.Sleep(10 * time.Millisecond)
	}
	waitIdle(t, r.d, 90*time.Second)
	r.crawl.Cycle = 1
	var st1 Counters
	if err := r.d.Exec(context.Background(), func(m *Machine, _ time.Time) error { st1 = m.Stats("farm"); return nil }); err != nil {
		t.Fatal(err)
	}
	if w, fetched := st1["uri_files_written"]-st["uri_files_written"], st1["http_200"]-st["http_200"]; w == 0 || w > fetched || st1["not_modified"] == 0 {
		t.Errorf("cycle 1: %d files written for %d documents fetched (200) and %d not modified (304): want a file per 200 at most", w, fetched, st1["not_modified"])
	}
	files1 := checkURIFiles(t, r, dir, func(rec *store.URIRecord) int {
		if rec.LastFetchedCycle > cycle0 {
			return 1
		}
		return 0
	})
	changed, gone, died := 0, 0, 0
	for doc, lines := range files0 {
		if res, err := farm.Describe(doc, 1); err == nil && (res.Status == 404 || res.Status == 410) {
			died++ // http_errors: 404 and 410 DELETE at once
		}
		if now, ok := files1[doc]; !ok {
			gone++
		} else if !cmp.Equal(now, lines) {
			changed++
		}
	}
	if changed == 0 || died == 0 || gone < died {
		t.Errorf("cycle 1: %d files rewritten with other links, %d removed, %d documents gone (404/410); want some of each", changed, gone, died)
	}
	t.Logf("cycle 1: %d URI files, %d rewritten with other links, %d removed (%d died); %d files written for %d answers 200 and %d answers 304",
		len(files1), changed, gone, died, st1["uri_files_written"]-st["uri_files_written"], st1["http_200"]-st["http_200"], st1["not_modified"]-st["not_modified"])

	// Deleting a site removes its files, and only those.
	site := strings.SplitN(strings.TrimPrefix(farm.StartURLs()[0], "http://"), "/", 2)[0]
	r.mns.send(context.Background(), &cmt.UMDeleteSite{Collection: "farm", Site: site})
	var files map[string][]string
	deadline = time.Now().Add(30 * time.Second)
	for {
		files = readURIFiles(t, dir)
		left := 0
		for doc := range files {
			if strings.HasPrefix(doc, "http://"+site+"/") {
				left++
			}
		}
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d URI files of deleted site %s left", left, site)
		}
		time.Sleep(10 * time.Millisecond)
	}
	for doc, lines := range files1 {
		if !strings.HasPrefix(doc, "http://"+site+"/") && !cmp.Equal(files[doc], lines) {
			t.Errorf("the file of %s, of another site, changed with the site's deletion", doc)
		}
	}
	if len(files) == 0 || len(files) == len(files1) {
		t.Errorf("%d files before deleting %s, %d after", len(files1), site, len(files))
	}

	// Removing the collection removes its directory.
	r.mns.send(context.Background(), &cmt.AdmConfRemove{Collection: "farm"})
	deadline = time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(dir); os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still there after the collection was removed", dir)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := os.Stat(filepath.Join(data, "uris")); err != nil {
		t.Errorf("the configured directory itself should stay: %v", err)
	}
}

// TestURIDirConfig: the uri_dir a collection sets is created when the
// collection is configured (relative to the data directory, or absolute);
// one that cannot be created is a configuration error naming the
// parameter; unset or "none" writes nothing.
func TestURIDirConfig(t *testing.T) {
	abs := filepath.Join(t.TempDir(), "abs", "uris")
	for _, tc := range []struct {
		name, value string
		wantDir     string // relative to the data directory unless absolute; "" none
		wantErr     string
	}{
		{"unset", "", "", ""},
		{"none", "none", "", ""},
		{"relative", "uris/x", "uris/x/c1", ""},
		{"absolute", abs, filepath.Join(abs, "c1"), ""},
		{"under a file", "blocker/uris", "", `nodesched: collection c1: storage/uri_dir "blocker/uris": `},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := t.TempDir()
			st, err := store.Open(filepath.Join(data, "store"), store.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			if err := os.WriteFile(filepath.Join(data, "store", "blocker"), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			m, err := NewMachine(MachineConfig{NodeID: "n1", Store: st}, time.Unix(1e9, 0))
			if err != nil {
				t.Fatal(err)
			}
			extra := ""
			if tc.value != "" {
				extra = fmt.Sprintf(`<section name="storage"><attrib name="uri_dir" type="string"> %s </attrib></section>`, tc.value)
			}
			cfg, err := config.Parse("c.xml", []byte(optXML(optCollection("c1", "http://a.test/", "a.test", extra))), nil)
			if err != nil {
				t.Fatal(err)
			}
			err = m.AddCollection(cfg.Collections[0], time.Unix(1e9, 0))
			if tc.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) {
					t.Fatalf("AddCollection: %v, want %s...", err, tc.wantErr)
				}
				t.Log(err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			entries, _ := os.ReadDir(filepath.Join(data, "store"))
			for _, e := range entries {
				if e.IsDir() && tc.wantDir == "" {
					t.Errorf("a directory %s in the data directory with uri_dir %q", e.Name(), tc.value)
				}
			}
			if tc.wantDir == "" {
				if m.colls["c1"].files != nil {
					t.Error("URI files on")
				}
				return
			}
			want := tc.wantDir
			if !filepath.IsAbs(want) {
				want = filepath.Join(data, "store", want)
			}
			if fi, err := os.Stat(filepath.Join(want, ".tmp")); err != nil || !fi.IsDir() {
				t.Errorf("%s/.tmp not created: %v", want, err)
			}
		})
	}
}

// TestURIFiles exercises the file layer: names, content, atomic
// replacement, removal, collection names that are no safe path.
func TestURIFiles(t *testing.T) {
	base := t.TempDir()
	for _, tc := range []struct {
		coll, wantDir string
	}{
		{"c1", "c1"},
		{"..", "%2E."},
		{".hidden", "%2Ehidden"},
		{"a/b", "a%2Fb"},
		{`a\b c`, "a%5Cb%20c"},
	} {
		t.Run(tc.coll, func(t *testing.T) {
			u, err := openURIFiles("uris", base, tc.coll)
			if err != nil {
				t.Fatal(err)
			}
			if want := filepath.Join(base, "uris", tc.wantDir); u.dir != want {
				t.Errorf("directory %s, want %s", u.dir, want)
			}
		})
	}
	u, err := openURIFiles(filepath.Join(base, "abs"), "/elsewhere", "c")
	if err != nil {
		t.Fatal(err)
	}
	doc := "http://a.test/path?q=1&r=%0A"
	p := u.path(doc)
	if rel, _ := filepath.Rel(u.dir, p); len(strings.Split(rel, string(filepath.Separator))) != 3 || !strings.HasSuffix(p, ".uris") {
		t.Errorf("path %s: want <dir>/xx/yy/<hash>.uris", p)
	}
	if u.path(doc) != p || u.path(doc+"x") == p {
		t.Error("path not a function of the URI")
	}
	for _, tc := range []struct {
		name  string
		links []string
		want  string
	}{
		{"links", []string{"http://a.test/1", "http://b.test/2"}, "# document: " + doc + "\nhttp://a.test/1\nhttp://b.test/2\n"},
		{"rewritten", []string{"http://a.test/3", "", "bad\nline"}, "# document: " + doc + "\nhttp://a.test/3\n"},
		{"none", nil, "# document: " + doc + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if written, err := u.write(doc, tc.links); !written || err != nil {
				t.Fatal(written, err)
			}
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, string(b)); d != "" {
				t.Errorf("content (-want +got):\n%s", d)
			}
			if left, _ := os.ReadDir(u.tmp); len(left) != 0 {
				t.Errorf("left in .tmp: %v", left)
			}
		})
	}
	if err := os.RemoveAll(u.tmp); err != nil { // an operator cleaning up
		t.Fatal(err)
	}
	if written, err := u.write(doc, nil); !written || err != nil {
		t.Errorf("write without .tmp: %v %v", written, err)
	}
	if written, err := u.writeMissing(doc, []string{"http://a.test/other"}); written || err != nil {
		t.Errorf("writeMissing over a file: %v %v", written, err)
	}
	if b, _ := os.ReadFile(p); string(b) != "# document: "+doc+"\n" {
		t.Errorf("writeMissing changed the file: %q", b)
	}
	if removed, err := u.remove(doc); !removed || err != nil {
		t.Errorf("remove: %v %v", removed, err)
	}
	if removed, err := u.remove(doc); removed || err != nil {
		t.Errorf("remove again: %v %v", removed, err)
	}
	if written, err := u.writeMissing(doc, []string{"http://a.test/other"}); !written || err != nil {
		t.Errorf("writeMissing without a file: %v %v", written, err)
	}
	if b, _ := os.ReadFile(p); string(b) != "# document: "+doc+"\nhttp://a.test/other\n" {
		t.Errorf("writeMissing wrote %q", b)
	}
	if got := uriFileContent("http://a.test/x\ny", nil); string(got) != "# document: http://a.test/x%0Ay\n" {
		t.Errorf("header of a URI with a newline: %q", got)
	}
}

// BenchmarkURIFileWrite is the cost of one document's URI file (50
// links): "new" writes files of new documents (their shard directories
// made as needed), "rewrite" replaces the files of 1,000 documents.
func BenchmarkURIFileWrite(b *testing.B) {
	links := make([]string, 50)
	for i := range links {
		links[i] = fmt.Sprintf("http://host%d.example.test/some/path/page-%d.html", i%7, i)
	}
	for _, bc := range []struct {
		name string
		docs int
	}{{"new", 1 << 30}, {"rewrite", 1000}} {
		b.Run(bc.name, func(b *testing.B) {
			u, err := openURIFiles(b.TempDir(), "", "c")
			if err != nil {
				b.Fatal(err)
			}
			if bc.docs < 1<<30 {
				for i := 0; i < bc.docs; i++ {
					if _, err := u.write(fmt.Sprintf("http://example.test/doc/%d", i), links); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				if _, err := u.write(fmt.Sprintf("http://example.test/doc/%d", i%bc.docs), links); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
