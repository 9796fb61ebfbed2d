package webanalyzer

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"path/filepath"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/feed"
	"github.com/trawl/trawl/internal/index"
	"github.com/trawl/trawl/internal/store"
)

// TestAnchorTextAndRankInIndex: a page whose own text lacks "zebracorn",
// which five links from other sites carry, is not found by that word
// before the analysis is applied to the index, and is found and ranked
// first (above the two pages holding the word in their own text) after;
// every indexed page gets a positive rank, and the most linked page the
// highest. The ranks go through the rank feed's outbox: queued and not
// sent before a crash, they are sent by the next start.
func TestAnchorTextAndRankInIndex(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	st, err := store.Open(filepath.Join(data, "node"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const pages = 200
	const target = 5 // on site s5
	g := &graphStore{t: t, st: st, pages: pages, links: map[int][]int{}, rng: rand.New(rand.NewSource(2)),
		anchor: map[int]string{target: "zebracorn stripes"}}
	ix, err := index.Open(filepath.Join(data, "index"), index.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	var ops []index.Op
	t1 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < pages; i++ {
		g.randomLinks(i)
		body := fmt.Sprintf("page %d about farming and harvest", i)
		switch i {
		case 10, 11, 13, 15, 16: // sites s3, s4, s6, s1, s2: other sites than the target's
			g.links[i] = append(g.links[i], target)
		case 40, 41:
			body += " zebracorn"
		}
		g.putPage(i, t1)
		ops = append(ops, index.Op{Version: 1, Doc: index.Doc{URL: pageURL(i), Collection: coll, Title: fmt.Sprintf("page %d", i), Body: body}})
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Apply(ctx, ops); err != nil {
		t.Fatal(err)
	}
	before, err := ix.Search(ctx, "zebracorn", index.SearchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(before.Hits) != 2 {
		t.Fatalf("before the analysis zebracorn finds %d pages, want the 2 holding it", len(before.Hits))
	}
	testRun(t, data, t1.Add(time.Hour), false, 1)
	// The ranks queued, then a crash before anything was sent: the next
	// start of the rank feed sends them.
	rf, err := OpenRankFeed(data, feed.IndexDialer(ix), nil)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := rf.Queue(ctx, coll, StateDir(data)); err != nil || n != pages {
		t.Fatalf("queued %d, %v", n, err)
	}
	if err := rf.Close(); err != nil {
		t.Fatal(err)
	}
	if st, err := ix.Lookup(ctx, coll, pageURL(target)); err != nil || st.Rank != 0 {
		t.Fatalf("ranked before the feed ran: %+v, %v", st, err)
	}
	rf, err = OpenRankFeed(data, feed.IndexDialer(ix), nil)
	if err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- rf.Run(rctx) }()
	werr := rf.Wait(rctx)
	fs := rf.Stats()
	cancel()
	<-done
	if err := errors.Join(werr, rf.Close()); err != nil {
		t.Fatal(err)
	}
	if fs.Applied != pages || fs.Pending != 0 {
		t.Errorf("after the restart: %+v, want %d applied", fs, pages)
	}
	// FeedIndex (trawl webanalyzer run) feeds them again, through the same
	// outbox: its versions are newer, so they are applied again.
	fs, err = FeedIndex(ctx, ix, data, coll)
	if err != nil {
		t.Fatal(err)
	}
	if fs.Applied != pages || fs.Queued != pages || fs.Pending != 0 {
		t.Errorf("%+v, want %d applied", fs, pages)
	}
	after, err := ix.Search(ctx, "zebracorn", index.SearchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(after.Hits) != 3 || after.Hits[0].URL != pageURL(target) {
		var got []string
		for _, h := range after.Hits {
			got = append(got, fmt.Sprintf("%s %.3f rank %.3f", h.URL, h.Score, h.Rank))
		}
		t.Fatalf("after the analysis zebracorn finds %q, want %s first of 3", got, pageURL(target))
	}
	ranks, err := Ranks(StateDir(data))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range ranks {
		s, err := ix.Lookup(ctx, coll, r.URL)
		if err != nil || !s.Found || s.Rank <= 0 || s.Version != 1 || s.FieldsVersion == 0 {
			t.Fatalf("%s: found %v, rank %v, version %d, fields version %d, %v", r.URL, s.Found, s.Rank, s.Version, s.FieldsVersion, err)
		}
	}
	// A content update after the analysis keeps the rank and anchor text.
	if _, err := ix.Apply(ctx, []index.Op{{Version: 2, Doc: index.Doc{URL: pageURL(target), Collection: coll, Title: "changed", Body: "new text"}}}); err != nil {
		t.Fatal(err)
	}
	if again, err := ix.Search(ctx, "zebracorn", index.SearchOptions{}); err != nil || len(again.Hits) != 3 || again.Hits[0].URL != pageURL(target) {
		t.Errorf("after a content update zebracorn finds %+v, %v", again, err)
	}
	top, err := ix.Lookup(ctx, coll, ranks[0].URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("top page %s: static rank %.4f, site rank %.4f, index rank %.3f", ranks[0].URL, ranks[0].Static, ranks[0].SiteRank, top.Rank)
}
