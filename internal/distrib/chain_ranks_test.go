package distrib_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/clicks"
	"github.com/trawl/trawl/internal/distrib"
	"github.com/trawl/trawl/internal/distrib/indexer"
	"github.com/trawl/trawl/internal/distrib/wire"
	"github.com/trawl/trawl/internal/feed"
	"github.com/trawl/trawl/internal/index"
)

// feedOps feeds ops through the chain with a feeder of their own and
// waits until the index acknowledged every one.
func feedOps(t *testing.T, c *chain, ops ...feed.Operation) {
	t.Helper()
	ob, err := feed.OpenOutbox(t.TempDir(), feed.OutboxOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ob.Close()
	cl := distrib.NewClient(c.reg(), testLog())
	defer cl.Close()
	acked := make(chan feed.Result, len(ops))
	f, err := feed.NewFeeder(ob, []feed.Target{{Name: "default:web", Collection: "web", Primary: true}}, cl.Dial,
		feed.FeederOptions{Logger: testLog(), OnResult: func(r feed.Result) { acked <- r }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	defer func() { cancel(); <-done }()
	if err := f.Feed(ctx, ops...); err != nil {
		t.Fatal(err)
	}
	timeout := time.After(60 * time.Second)
	for range ops {
		select {
		case r := <-acked:
			if r.Err != nil {
				t.Fatalf("%s %s: %v", r.Kind, r.URI, r.Err)
			}
		case <-timeout:
			t.Fatal("the partial updates were not all acknowledged")
		}
	}
}

// TestChainRanksAndClicks: partial updates (rank and anchor text) travel
// through distributors to the indexer of each URL's partition, which
// merges them into the stored document (found by its new anchor text, its
// rank in the results, its content kept; one for a URL not indexed is
// acknowledged); the indexer.Searcher with a click relevance moves the
// hit clicked for a query to the top of that query's results and leaves
// another query's alone.
func TestChainRanksAndClicks(t *testing.T) {
	c := newChain(t, 1, 2)
	waitFor(t, "a master", 10*time.Second, func() bool { _, ok := c.master(); return ok })
	want := feedDocs(t, c, 30, nil)
	page7 := want[7]
	feedOps(t, c,
		feed.Operation{Kind: feed.UpdateFields, URI: page7, Rank: 3, Anchors: []string{"zeppelin airship"}},
		feed.Operation{Kind: feed.UpdateFields, URI: "http://nowhere.example/", Rank: 1})

	ctx := context.Background()
	s := indexer.Searcher{Registry: c.reg(), Client: &wire.Client{}}
	r, err := s.Search(ctx, "zeppelin", index.SearchOptions{Collection: "web"})
	if err != nil || r.Total != 1 || len(r.Hits) != 1 || r.Hits[0].URL != page7 || r.Hits[0].Rank != 3 || r.Hits[0].Title != "page 7" {
		t.Fatalf("zeppelin: %v, %+v", err, r)
	}
	if r, err := s.Search(ctx, "words", index.SearchOptions{Collection: "web", Size: 1}); err != nil || r.Hits[0].URL != page7 {
		t.Errorf("words: the ranked page is not first: %v, %+v", err, r)
	}

	// The click relevance: the fifth hit of "harbour" clicked 50 times (a
	// boost of 1+log2(51), above the ranked page's 1+3).
	before, err := s.Search(ctx, "harbour", index.SearchOptions{Collection: "web", Size: 10})
	if err != nil || len(before.Hits) != 10 {
		t.Fatalf("harbour: %v, %+v", err, before)
	}
	clicked := before.Hits[4].URL
	data := t.TempDir()
	rel := clicks.RelevancePath(data)
	if err := os.MkdirAll(filepath.Dir(rel), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(rel, []byte(fmt.Sprintf("%s 50 50 1 1 harbour\n", clicked)), 0o644); err != nil {
		t.Fatal(err)
	}
	s.Clicks = clicks.NewRelevance(rel)
	after, err := s.Search(ctx, "harbour", index.SearchOptions{Collection: "web", Size: 10})
	if err != nil || len(after.Hits) != 10 || after.Hits[0].URL != clicked || after.Total != before.Total {
		t.Errorf("harbour with the clicks: %v, %v; want %s first", err, hitURLs(after), clicked)
	}
	if got, err := s.Search(ctx, "lantern", index.SearchOptions{Collection: "web", Size: 10}); err != nil || len(got.Hits) != 10 || got.Hits[0].URL != page7 {
		t.Errorf("lantern with the clicks for harbour: %v, %v; want the ranked %s first still", err, hitURLs(got), page7)
	}
	c.checkIndexers(want)
}

func hitURLs(r *index.Results) []string {
	if r == nil {
		return nil
	}
	var out []string
	for _, h := range r.Hits {
		out = append(out, h.URL)
	}
	return out
}
