package nodesched

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/feed"
	"github.com/trawl/trawl/internal/index"
	"github.com/trawl/trawl/internal/store"
	"github.com/trawl/trawl/internal/webfarm"
)

// feedRun is a crawl of the farm by a driver that feeds an index.
type feedRun struct {
	*crawlRun
	idx *index.Index
}

func runFeedCrawl(t testing.TB, farm *webfarm.Farm, dir string) *feedRun {
	t.Helper()
	return runFeedCrawlXML(t, farm, dir, "")
}

// runFeedCrawlXML is runFeedCrawl with extra configuration XML (sections
// or attribs of the collection).
func runFeedCrawlXML(t testing.TB, farm *webfarm.Farm, dir, extra string) *feedRun {
	t.Helper()
	crawl := farm.DefaultCrawl()
	opt := XMLOpts(0, 8)
	opt.Extra = extra
	col := farmCollection(t, farm, crawl, opt)
	st, err := store.Open(filepath.Join(dir, "store"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	idx, err := index.Open(filepath.Join(dir, "index"), index.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	mns := newFakeMNS(t, farm, "node1", col)
	d := New(Config{NodeID: "node1", Store: st, MNS: mns.dialer(ctx), Workers: 32, LogDir: filepath.Join(dir, "logs"),
		Feed: &FeedConfig{Dial: feed.IndexDialer(idx), Feeder: feed.FeederOptions{BatchOps: 50, MinBackoff: 10 * time.Millisecond}}})
	r := &feedRun{crawlRun: &crawlRun{farm: farm, crawl: crawl, mns: mns, d: d, st: st, cancel: cancel, done: make(chan error, 1)}, idx: idx}
	go func() { r.done <- d.Run(ctx) }()
	t.Cleanup(func() {
		r.stop(t)
		idx.Close()
	})
	return r
}

// waitFed waits until the crawl is idle and every operation is acknowledged.
func (r *feedRun) waitFed(t testing.TB) {
	t.Helper()
	waitIdle(t, r.d, 90*time.Second)
	deadline := time.Now().Add(60 * time.Second)
	for r.d.FeedPending() > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("feeding not done: %d pending, %+v", r.d.FeedPending(), r.d.FeedStats())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// checkFeedCountsPersisted: once every operation is acknowledged, the
// feeding chain's counters written with the acknowledgements (the
// "stats/f/" record a restarted process starts from) equal the live ones
// (with deletes when deleted is set): an answer is in the store exactly
// when its operation has left the outbox.
func checkFeedCountsPersisted(t testing.TB, r *feedRun, deleted bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, err := readFeedCounts(r.st, "farm")
		st := r.d.Stats()["farm"]
		want := FeedResults{Fed: st["pp_fed"], Succeeded: st["pp_succeeded"], Failed: st["pp_failed"], Deleted: st["pp_deleted"]}
		if err == nil && got == want && want.Succeeded > 0 && (!deleted || want.Deleted > 0) {
			t.Logf("feeding counters persisted with the acknowledgements: %+v", got)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("feeding counters in the store %+v (%v), live %+v", got, err, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// indexable returns the URIs the index must hold: fetched documents of the
// store that are not duplicates and that the farm did not mark noindex in
// cycle.
func indexable(t testing.TB, st *store.Store, farm *webfarm.Farm, cycle int) (want []string, noindex, dups int) {
	t.Helper()
	err := st.URIs("farm", "", func(r *store.URIRecord) error {
		switch r.Status {
		case store.StatusFetched, store.StatusNotModified:
		case store.StatusDuplicate:
			dups++
			return nil
		default:
			return nil
		}
		res, err := farm.Describe(r.URI, cycle)
		if err != nil {
			return err
		}
		if res.NoIndex {
			noindex++
			return nil
		}
		want = append(want, r.URI)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(want)
	return want, noindex, dups
}

// checkIndex checks that the index holds exactly want, each with the text
// the farm serves in cycle.
func checkIndex(t testing.TB, idx *index.Index, farm *webfarm.Farm, want []string, cycle int) {
	t.Helper()
	n, err := idx.Count()
	if err != nil {
		t.Fatal(err)
	}
	if int(n) != len(want) {
		t.Errorf("index holds %d documents, the store %d indexable ones", n, len(want))
	}
	bad := 0
	for _, u := range want {
		got, err := idx.Lookup(context.Background(), "farm", u)
		if err != nil {
			t.Fatal(err)
		}
		if !got.Found {
			t.Errorf("%s is not in the index", u)
			bad++
		} else if res, err := farm.Describe(u, cycle); err == nil && res.Status == 200 && int64(len(res.Body)) == res.Size {
			// (Describe keeps only the start of the large page.)
			x := feed.ExtractText(res.ContentType, res.Body)
			if got.Body != x.Text || got.Title != x.Title {
				t.Errorf("%s: index holds %q (%q), the farm serves %q (%q)", u, head1(got.Body), got.Title, head1(x.Text), x.Title)
				bad++
			}
		}
		if bad > 10 {
			t.Fatal("too many differences")
		}
	}
}

func head1(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
}

// TestFeedIndexMatchesStore crawls the farm with feeding on: the index must
// hold exactly the fetched, non-duplicate, indexable documents, with the
// farm's text. Then the farm moves to cycle 1 and a refresh cycle runs:
// changed pages must show their new text, deleted pages must be gone.
func TestFeedIndexMatchesStore(t *testing.T) {
	farm := startFarm(t, 5, 50)
	r := runFeedCrawl(t, farm, t.TempDir())
	r.waitFed(t)
	want, noindex, dups := indexable(t, r.st, farm, 0)
	if noindex == 0 || dups == 0 || len(want) < 100 {
		t.Fatalf("the farm gave %d indexable pages, %d noindex, %d duplicates: not a useful test", len(want), noindex, dups)
	}
	checkIndex(t, r.idx, farm, want, 0)
	checkFeedCountsPersisted(t, r, false)
	checkDSFeedLog(t, r.d.cfg.LogDir, want)
	t.Logf("cycle 0: %d documents indexed (%d noindex and %d duplicates left out); feed %+v", len(want), noindex, dups, r.d.FeedStats())

	farm.SetCycle(1)
	r.mns.send(context.Background(), &cmt.AdmConfRefresh{Collection: "farm", Flags: cmt.RefreshCollection})
	deadline := time.Now().Add(10 * time.Second)
	for r.d.Stats()["farm"]["refresh_cycles"] == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	r.waitFed(t)
	want1, _, _ := indexable(t, r.st, farm, 1)
	checkIndex(t, r.idx, farm, want1, 1)
	checkFeedCountsPersisted(t, r, true)
	in1 := map[string]bool{}
	for _, u := range want1 {
		in1[u] = true
	}
	gone := 0
	for _, u := range want {
		if !in1[u] {
			gone++
			if got, err := r.idx.Lookup(context.Background(), "farm", u); err != nil || got.Found {
				t.Errorf("%s left the crawl but is still in the index (%v)", u, err)
			}
		}
	}
	st := r.d.Stats()["farm"]
	if gone == 0 || st["modified"] == 0 {
		t.Errorf("cycle 1 removed %d indexed pages and modified %d: not a useful test", gone, st["modified"])
	}
	t.Logf("cycle 1: %d documents indexed, %d removed, %d modified", len(want1), gone, st["modified"])
}

// TestFeedSuspendAndRemove checks CMD_ADM_CONF_FEEDING_SUSPEND (crawling
// goes on, operations wait), CMD_UM_REPROCESS_SITE (documents are sent
// again), CMD_UM_DELETE_SITE and CMD_ADM_CONF_REMOVE (documents leave the
// index).
func TestFeedSuspendAndRemove(t *testing.T) {
	farm := startFarm(t, 3, 30)
	r := runFeedCrawl(t, farm, t.TempDir())
	deadline := time.Now().Add(10 * time.Second)
	for len(r.d.FeedStats()["farm"]) == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	r.mns.send(context.Background(), &cmt.AdmConfFeedingSuspend{Collection: "farm", Suspend: true})
	waitIdle(t, r.d, 90*time.Second)
	want, _, _ := indexable(t, r.st, farm, 0)
	// Suspended: the crawl is done, its operations wait in the outbox.
	fs := r.d.FeedStats()["farm"]
	if len(fs) != 1 || !fs[0].Suspended || r.d.FeedPending() == 0 {
		t.Fatalf("feeding not suspended: %+v, pending %d", fs, r.d.FeedPending())
	}
	before, _ := r.idx.Count()
	r.mns.send(context.Background(), &cmt.AdmConfFeedingSuspend{Collection: "farm", Suspend: false})
	r.waitFed(t)
	checkIndex(t, r.idx, farm, want, 0)
	t.Logf("while suspended the index held %d documents; resumed: %d", before, len(want))

	// Reprocess one site: its documents are sent again (new versions).
	site := ""
	for _, u := range want {
		site = strings.SplitN(strings.TrimPrefix(u, "http://"), "/", 2)[0]
		break
	}
	first, _ := r.idx.Lookup(context.Background(), "farm", want[0])
	r.mns.send(context.Background(), &cmt.UMReprocessSite{Collection: "farm", Site: site, Prefix: "http://" + site + "/"})
	deadline = time.Now().Add(30 * time.Second)
	for {
		again, _ := r.idx.Lookup(context.Background(), "farm", want[0])
		if again.Version > first.Version {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not reprocessed: version %d", want[0], again.Version)
		}
		time.Sleep(10 * time.Millisecond)
	}
	r.waitFed(t)
	checkIndex(t, r.idx, farm, want, 0)

	// Delete the site: its documents leave the index.
	r.mns.send(context.Background(), &cmt.UMDeleteSite{Collection: "farm", Site: site})
	var rest []string
	for _, u := range want {
		if !strings.HasPrefix(u, "http://"+site+"/") {
			rest = append(rest, u)
		}
	}
	waitCount(t, r.idx, len(rest))
	checkIndex(t, r.idx, farm, rest, 0)

	// Remove the collection: the index empties.
	r.mns.send(context.Background(), &cmt.AdmConfRemove{Collection: "farm"})
	waitCount(t, r.idx, 0)
}

func waitCount(t testing.TB, idx *index.Index, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := idx.Count()
		if err != nil {
			t.Fatal(err)
		}
		if int(c) == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("index holds %d documents, want %d", c, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// checkDSFeedLog polls the dsfeed log (flushed every second) until the
// URIs it shows added or updated with an ok answer are want.
func checkDSFeedLog(t testing.TB, logDir string, want []string) {
	t.Helper()
	path := filepath.Join(logDir, "farm", "dsfeed.log")
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, _ := os.ReadFile(path)
		set := map[string]bool{}
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			f := strings.Fields(l)
			if len(f) == 5 && (f[1] == "add" || f[1] == "update") && f[4] == "ok" {
				set[f[2]] = true
			}
		}
		got := make([]string, 0, len(set))
		for u := range set {
			got = append(got, u)
		}
		sort.Strings(got)
		diff := cmp.Diff(want, got)
		if diff == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("dsfeed log: documents fed ok (-indexed +logged):\n%s", diff)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
