package webanalyzer

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/dmake"
	"github.com/trawl/trawl/internal/store"
)

// graphStore writes a synthetic crawl into data/node: pages on sites,
// each with a few links carrying anchor text, some duplicates and
// redirects.
type graphStore struct {
	t     *testing.T
	st    *store.Store
	pages int
	links map[int][]int
	rng   *rand.Rand
	// anchor, when set for a target, is the text of every link to it.
	anchor map[int]string
}

const coll = "c"

func pageURL(i int) string { return fmt.Sprintf("http://s%d.test/p%d", i%7, i) }

func (g *graphStore) putPage(i int, at time.Time) {
	var body strings.Builder
	body.WriteString("<html><body><p>page</p>")
	for _, j := range g.links[i] {
		a := fmt.Sprintf("word%d topic%d", j%5, j%3)
		if s, ok := g.anchor[j]; ok {
			a = s
		}
		fmt.Fprintf(&body, `<a href="%s">%s</a>`, pageURL(j), a)
	}
	body.WriteString("</body></html>")
	b := g.st.NewBatch()
	u := pageURL(i)
	if err := b.PutURI(coll, &store.URIRecord{URI: u, Site: fmt.Sprintf("s%d.test", i%7), Status: store.StatusFetched,
		ContentType: "text/html", LastFetched: at}); err != nil {
		g.t.Fatal(err)
	}
	if err := b.PutDocument(coll, u, []byte(body.String())); err != nil {
		g.t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		g.t.Fatal(err)
	}
}

func (g *graphStore) putStatus(i int, s store.Status, other int, at time.Time) {
	r := &store.URIRecord{URI: pageURL(i), Site: fmt.Sprintf("s%d.test", i%7), Status: s, LastFetched: at}
	switch s {
	case store.StatusDuplicate:
		r.Owner = pageURL(other)
	case store.StatusRedirect:
		r.Location = pageURL(other)
	}
	b := g.st.NewBatch()
	if err := b.PutURI(coll, r); err != nil {
		g.t.Fatal(err)
	}
	if err := b.DeleteDocument(coll, r.URI); err != nil {
		g.t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		g.t.Fatal(err)
	}
}

func (g *graphStore) randomLinks(i int) {
	n := g.rng.Intn(8)
	g.links[i] = nil
	for k := 0; k < n; k++ {
		g.links[i] = append(g.links[i], g.rng.Intn(g.pages))
	}
}

// childCPU is the CPU time (user and system) of this process's waited-for
// children so far: the table programs the workers ran.
func childCPU() time.Duration { return cpuOf(syscall.RUSAGE_CHILDREN) }

// selfCPU is this process's CPU time so far (in a run: the dump, the
// master and the embedded workers).
func selfCPU() time.Duration { return cpuOf(syscall.RUSAGE_SELF) }

func cpuOf(who int) time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(who, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// testRounds are the rank iteration's rounds and partitions in the tests.
func testRounds() (rounds, parts int) {
	if raceEnabled {
		return 5, 1
	}
	return 20, 2
}

func testRun(t *testing.T, data string, now time.Time, full bool, workers int) (RunStats, time.Duration) {
	t.Helper()
	self, err := os.Executable()
	// TRAWL_WA_SELF names a program the workers run instead of this
	// binary, for "table serve": a wrapper that measures the table
	// servers (docs/benchmarks.md).
	if s := os.Getenv("TRAWL_WA_SELF"); s != "" {
		self = s
	}
	if err != nil {
		t.Fatal(err)
	}
	rounds, parts := testRounds()
	start, cpu, self0 := time.Now(), childCPU(), selfCPU()
	defer func() {
		t.Logf("run (full %v): %v wall, %v CPU in the table programs, %v in the test process (dump, master, workers)",
			full, time.Since(start), childCPU()-cpu, selfCPU()-self0)
	}()
	// TRAWL_WA_LOG names a file to append the master's log to (a line per
	// target done, with its time: docs/benchmarks.md's profile).
	log := slog.New(slog.DiscardHandler)
	if name := os.Getenv("TRAWL_WA_LOG"); name != "" {
		fh, err := os.OpenFile(name, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer fh.Close()
		log = slog.New(slog.NewTextHandler(fh, nil))
		log.Info("run", "full", full)
	}
	rs, err := Run(context.Background(), RunOptions{Data: data, LocalWorkers: workers, Self: self, Full: full, Logger: log,
		Now: func() time.Time { return now }, Build: BuildOptions{Rounds: rounds, Partitions: parts},
		Builder: func(ctx context.Context, b BuildRun) error {
			return dmake.LocalBuild(ctx, b.Work, b.Text, b.Local, b.Remote, b.Self, b.Slots, b.Logger, b.TargetDone)
		}})
	if err != nil {
		t.Fatal(err)
	}
	return rs, time.Since(start)
}

// testPages is the size of the incremental tests' graphs.
func testPages() int {
	pages := 3000
	if raceEnabled {
		pages = 600
	}
	if n, err := strconv.Atoi(os.Getenv("TRAWL_WA_PAGES")); err == nil && n > 0 {
		pages = n // docs/benchmarks.md's measurement
	}
	return pages
}

// firstCrawl writes a crawl of pages pages at t1 into data/node (some
// duplicates and redirects) and runs the first analysis.
func firstCrawl(t *testing.T, data string, pages int, t1 time.Time) (*graphStore, RunStats, time.Duration) {
	t.Helper()
	st, err := store.Open(filepath.Join(data, "node"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	g := &graphStore{t: t, st: st, pages: pages, links: map[int][]int{}, rng: rand.New(rand.NewSource(1))}
	for i := 0; i < pages; i++ {
		switch {
		case i%50 == 7:
			g.putStatus(i, store.StatusDuplicate, i-1, t1)
		case i%50 == 9:
			g.putStatus(i, store.StatusRedirect, i+1, t1)
		default:
			g.randomLinks(i)
			g.putPage(i, t1.Add(time.Duration(i)))
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	rs1, d1 := testRun(t, data, t1.Add(24*time.Hour), false, 1)
	if rs1.Incremental || rs1.Dump.Pages < pages*9/10 {
		t.Fatalf("first run: %+v", rs1)
	}
	return g, rs1, d1
}

// refresh opens the store for a refresh cycle's changes; done closes it.
func (g *graphStore) refresh(data string) (done func()) {
	st, err := store.Open(filepath.Join(data, "node"), store.Options{})
	if err != nil {
		g.t.Fatal(err)
	}
	g.st = st
	return func() {
		if err := st.Close(); err != nil {
			g.t.Fatal(err)
		}
	}
}

// equalToFull keeps the state's tables, runs a full analysis of the same
// store and checks that it keeps the same tables, except the URI and site
// maps, which keep the URLs of earlier runs too; none but those of emptyOK
// may be empty.
func equalToFull(t *testing.T, data string, now time.Time, emptyOK ...string) (RunStats, time.Duration) {
	t.Helper()
	inc := map[string][]byte{}
	var err error
	for _, f := range Kept() {
		if inc[f], err = os.ReadFile(filepath.Join(StateDir(data), f)); err != nil {
			t.Fatal(err)
		}
	}
	rs3, d3 := testRun(t, data, now, true, 1)
	for _, f := range Kept() {
		if f == Compacted(TableURIMap) || f == Compacted(TableSiteMap) {
			continue
		}
		full, err := os.ReadFile(filepath.Join(StateDir(data), f))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(full, inc[f]) {
			t.Errorf("%s: incremental (%d bytes) and full run (%d bytes) differ", f, len(inc[f]), len(full))
		}
		if len(full) == 0 && !slices.Contains(emptyOK, f) {
			t.Errorf("%s is empty", f)
		}
	}
	return rs3, d3
}

// TestIncrementalEqualsFull: after a refresh in which 5% of the pages
// changed (new links, one of them now without links), a few were deleted
// and a duplicate became a page of its own, the incremental run (the
// pages fetched since the last run, compacted with the last run's tables)
// keeps the same tables as a full run over the whole store.
func TestIncrementalEqualsFull(t *testing.T) {
	pages := testPages()
	data := t.TempDir()
	t1 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	g, rs1, d1 := firstCrawl(t, data, pages, t1)

	// The refresh: 5% of the pages change.
	done := g.refresh(data)
	t2 := t1.Add(48 * time.Hour)
	changed := 0
	for i := 0; i < pages; i += 20 {
		switch {
		case i%100 == 0:
			g.putStatus(i+1, store.StatusDeleted, 0, t2)
		case i%100 == 40:
			g.links[i] = nil
			g.putPage(i, t2)
		default:
			g.randomLinks(i)
			g.putPage(i, t2)
		}
		changed++
	}
	g.links[7] = []int{1, 2, 3}
	g.putPage(7, t2) // was a duplicate of page 6
	done()
	rs2, d2 := testRun(t, data, t2.Add(24*time.Hour), false, 1)
	if !rs2.Incremental || rs2.RankReused || rs2.Dump.Pages+rs2.Dump.Deletes != changed+1 {
		t.Fatalf("second run: incremental %v, rank reused %v, %d pages and %d deletes dumped, want %d",
			rs2.Incremental, rs2.RankReused, rs2.Dump.Pages, rs2.Dump.Deletes, changed+1)
	}
	rs3, d3 := equalToFull(t, data, t2.Add(24*time.Hour))
	t.Logf("%d pages: first run %v (dump %v); incremental %v (dump %v, %d pages); full %v (dump %v)",
		pages, d1, rs1.DumpTime, d2, rs2.DumpTime, rs2.Dump.Pages, d3, rs3.DumpTime)
}

// TestIncrementalKeepsRank: a refresh in which 5% of the pages were
// fetched again with the same links (their text changed) leaves the link
// graph and the site map as they were: the incremental run keeps the last
// static rank, site ranks and anchor text instead of computing them again
// (its targets are the compaction's only), and its tables still equal a
// full run's. A later refresh that adds a redirect nothing links to leaves
// the graph but not the site map: the static rank is kept, the site and
// anchor steps run, and the tables equal a full run's again.
func TestIncrementalKeepsRank(t *testing.T) {
	pages := testPages()
	if raceEnabled {
		pages /= 2 // five analyses of race-built table programs
	}
	data := t.TempDir()
	t1 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	g, rs1, d1 := firstCrawl(t, data, pages, t1)
	refetch := func(at time.Time) (changed int) {
		for i := 3; i < pages; i += 20 {
			if _, ok := g.links[i]; ok {
				g.putPage(i, at) // same links, fetched again
				changed++
			}
		}
		return changed
	}
	done := g.refresh(data)
	t2 := t1.Add(48 * time.Hour)
	changed := refetch(t2)
	done()
	rs2, d2 := testRun(t, data, t2.Add(24*time.Hour), false, 1)
	if !rs2.Incremental || !rs2.RankReused || !rs2.OutputsReused || rs2.Dump.Pages != changed {
		t.Fatalf("second run: incremental %v, rank reused %v, outputs reused %v, %d pages dumped, want %d",
			rs2.Incremental, rs2.RankReused, rs2.OutputsReused, rs2.Dump.Pages, changed)
	}
	// No ranking build: only the compaction.
	rounds, parts := testRounds()
	want, err := targets(rounds, parts, StageCompact)
	if err != nil {
		t.Fatal(err)
	}
	if rs2.Targets != want {
		t.Errorf("the incremental run had %d targets (want %d), the first %d", rs2.Targets, want, rs1.Targets)
	}
	rs3, d3 := equalToFull(t, data, t2.Add(24*time.Hour), Compacted(TableDelete)) // nothing was deleted
	if rs3.RankReused || rs3.OutputsReused {
		t.Error("a full run reused the rank")
	}
	t.Logf("%d pages: first run %v (%d targets); incremental, outputs kept %v (%d targets, %d pages dumped); full %v (%d targets)",
		pages, d1, rs1.Targets, d2, rs2.Targets, rs2.Dump.Pages, d3, rs3.Targets)

	// A redirect from a new URL that no page links to: a new site map
	// record, the same graph.
	done = g.refresh(data)
	t3 := t2.Add(48 * time.Hour)
	g.putStatus(pages+1, store.StatusRedirect, 5, t3)
	changed = refetch(t3)
	done()
	rs4, _ := testRun(t, data, t3.Add(24*time.Hour), false, 1)
	if !rs4.Incremental || !rs4.RankReused || rs4.OutputsReused || rs4.Dump.Pages != changed {
		t.Fatalf("fourth run: incremental %v, rank reused %v, outputs reused %v, %d pages dumped, want %d",
			rs4.Incremental, rs4.RankReused, rs4.OutputsReused, rs4.Dump.Pages, changed)
	}
	if want, err = targets(rounds, parts, StageCompact, StageReuseRank); err != nil {
		t.Fatal(err)
	}
	if rs4.Targets != want {
		t.Errorf("the run after the redirect had %d targets (want %d)", rs4.Targets, want)
	}
	equalToFull(t, data, t3.Add(24*time.Hour), Compacted(TableDelete))
}

// targets is the number of targets of the incremental builds of stages.
func targets(rounds, parts int, stages ...Stage) (int, error) {
	want := 0
	for _, st := range stages {
		_, n, err := BuildFile(BuildOptions{Rounds: rounds, Partitions: parts, Incremental: true, Stage: st})
		if err != nil {
			return 0, err
		}
		want += n
	}
	return want, nil
}
