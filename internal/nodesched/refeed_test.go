package nodesched

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/cmt/cmtconfig"
	"github.com/trawl/trawl/internal/config"
	"github.com/trawl/trawl/internal/feed"
	"github.com/trawl/trawl/internal/index"
	"github.com/trawl/trawl/internal/store"
)

func acked(d *Driver) int {
	n := 0
	for _, ts := range d.FeedStats()["farm"] {
		n += ts.Acked
	}
	return n
}

func version(t testing.TB, idx *index.Index, uri string) uint64 {
	t.Helper()
	s, err := idx.Lookup(context.Background(), "farm", uri)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Found {
		t.Fatalf("%s is not in the index", uri)
	}
	return s.Version
}

// waitProcessed waits until the collection's processed counter passes n.
func waitProcessed(t testing.TB, d *Driver, n int64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for d.Stats()["farm"]["processed"] <= n {
		if time.Now().After(deadline) {
			t.Fatalf("no fetch after %d processed", n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestFeedRefeed checks URIF_FORCE_REFEED: a refetch of an unchanged page
// feeds nothing, the same refetch with Refeed (CollectionRefetchURI
// Refeed=1) resubmits it, and an administrator's refetch of the whole
// collection (CMD_ADM_CONF_REFRESH with REFRESH_COLLECTION) resubmits
// every document its cycle fetches although none changed.
func TestFeedRefeed(t *testing.T) {
	farm := startFarm(t, 2, 20)
	r := runFeedCrawl(t, farm, t.TempDir())
	r.waitFed(t)
	want, _, _ := indexable(t, r.st, farm, 0)
	if len(want) < 10 {
		t.Fatalf("only %d indexable pages", len(want))
	}
	u := want[len(want)/2]
	v0 := version(t, r.idx, u)
	ctx := context.Background()

	refetch := func(refeed bool) {
		t.Helper()
		before := r.d.Stats()["farm"]["processed"]
		err := r.d.Exec(ctx, func(m *Machine, now time.Time) error {
			n, err := m.RefetchWith("farm", []string{u}, RefetchOptions{Urgent: true, Refeed: refeed}, now)
			if err == nil && n != 1 {
				err = fmt.Errorf("%d URIs queued", n)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		waitProcessed(t, r.d, before)
		r.waitFed(t)
	}

	refetch(false)
	if v := version(t, r.idx, u); v != v0 {
		t.Errorf("a plain refetch of the unchanged %s fed it again: version %d, was %d", u, v, v0)
	}
	a0 := acked(r.d)
	refetch(true)
	if v := version(t, r.idx, u); v <= v0 {
		t.Errorf("a refetch with refeed of %s did not feed it: version %d, was %d", u, v, v0)
	}
	if a := acked(r.d); a != a0+1 {
		t.Errorf("refeed of one URI: %d operations acknowledged, want %d", a-a0, 1)
	}

	// The whole collection.
	versions := map[string]uint64{}
	for _, w := range want {
		versions[w] = version(t, r.idx, w)
	}
	cycles := r.d.Stats()["farm"]["refresh_cycles"]
	a1 := acked(r.d)
	r.mns.send(ctx, &cmt.AdmConfRefresh{Collection: "farm", Flags: cmt.RefreshCollection})
	deadline := time.Now().Add(10 * time.Second)
	for r.d.Stats()["farm"]["refresh_cycles"] == cycles {
		if time.Now().After(deadline) {
			t.Fatal("no refresh cycle")
		}
		time.Sleep(5 * time.Millisecond)
	}
	r.waitFed(t)
	var cycle int64
	if err := r.d.Exec(ctx, func(m *Machine, _ time.Time) error {
		cycle = m.refeedCycle(m.colls["farm"])
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if cycle == 0 {
		t.Fatal("no refeed cycle recorded")
	}
	refed, stale := 0, []string{}
	for _, w := range want {
		rec, ok, err := r.st.URI("farm", w)
		if err != nil || !ok {
			t.Fatalf("%s: %v %v", w, ok, err)
		}
		if rec.LastFetchedCycle != cycle {
			continue
		}
		if version(t, r.idx, w) > versions[w] {
			refed++
		} else {
			stale = append(stale, w)
		}
	}
	if len(stale) > 0 || refed < len(want)/2 {
		t.Errorf("refetch of the collection (cycle %d): %d of %d documents fed again; refetched but not fed: %v", cycle, refed, len(want), stale)
	}
	if a := acked(r.d) - a1; a < refed {
		t.Errorf("%d operations acknowledged for %d documents fed again", a, refed)
	}
	if m := r.d.Stats()["farm"]["modified"]; m != 0 {
		t.Logf("note: %d pages reported modified", m)
	}
	t.Logf("refetch of the collection: cycle %d, %d of %d documents fed again", cycle, refed, len(want))
}

// anchorSite serves a home page whose only link to /target.html has a
// distinctive anchor text that the target page does not contain.
func anchorSite(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html")
	switch r.URL.Path {
	case "/":
		fmt.Fprint(w, `<html><head><title>home</title></head><body><p>Welcome home.</p>
<p>See <a href="/target.html">quixotic zephyrs</a> and <a href="/other.html">other things</a>.</p></body></html>`)
	case "/target.html":
		fmt.Fprint(w, `<html><head><title>target</title></head><body><p>A plain page about nothing much.</p></body></html>`)
	case "/other.html":
		fmt.Fprint(w, `<html><head><title>other</title></head><body><p>Another plain page, <a href="/target.html">plain link</a>.</p></body></html>`)
	default:
		http.NotFound(w, r)
	}
}

// TestFeedAnchors checks that the anchor text of the links to a page is
// fed with the page: a search for a word found only in the anchor text of
// a link to the target finds the target.
func TestFeedAnchors(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(anchorSite)}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	host := "anchors.test"
	base := fmt.Sprintf("http://%s:%d", host, ln.Addr().(*net.TCPAddr).Port)
	cfg, err := config.Parse("anchors.xml", []byte(crawlXML(base+"/", host, "")), nil)
	if err != nil {
		t.Fatal(err)
	}
	col := cfg.Collections[0]
	dir := t.TempDir()
	st, err := store.Open(filepath.Join(dir, "store"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	idx, err := index.Open(filepath.Join(dir, "index"), index.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { idx.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	mns := &loopMNS{conf: cmt.CrawlConfig{Collections: []cmt.Collection{cmtconfig.CrawlConfig(col)}}, name: col.Name, seen: map[string]bool{}}
	d := New(Config{NodeID: "node1", Store: st, MNS: mns.dialer(ctx), Workers: 4,
		Feed: &FeedConfig{Dial: feed.IndexDialer(idx), Feeder: feed.FeederOptions{BatchOps: 10, MinBackoff: 10 * time.Millisecond}}})
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	waitIdle(t, d, 60*time.Second)
	deadline := time.Now().Add(30 * time.Second)
	for n, _ := idx.Count(); d.FeedPending() > 0 || n < 3; n, _ = idx.Count() {
		if time.Now().After(deadline) {
			t.Fatalf("feeding not done: %d pending, %d indexed", d.FeedPending(), n)
		}
		time.Sleep(10 * time.Millisecond)
	}

	target := base + "/target.html"
	var anchors []string
	if err := d.Exec(ctx, func(m *Machine, _ time.Time) error {
		anchors = m.anchors("acc", target)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	slices.Sort(anchors)
	if diff := cmp.Diff([]string{"plain link", "quixotic zephyrs"}, anchors); diff != "" {
		t.Errorf("anchors of %s (-want +got):\n%s", target, diff)
	}
	res, err := idx.Search(ctx, "zephyrs", index.SearchOptions{Collection: "acc"})
	if err != nil {
		t.Fatal(err)
	}
	var urls []string
	for _, h := range res.Hits {
		urls = append(urls, h.URL)
	}
	if !slices.Contains(urls, target) {
		t.Errorf("search for the anchor word: %v, want %s among them", urls, target)
	}
	// The target's own text does not hold the word: only its anchor field.
	if s, err := idx.Lookup(ctx, "acc", target); err != nil || !s.Found || strings.Contains(s.Body, "zephyr") {
		t.Errorf("target stored as %+v (%v)", s, err)
	}
}
