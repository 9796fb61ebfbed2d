package indexer

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/trawl/trawl/internal/clicks"
	"github.com/trawl/trawl/internal/distrib"
	"github.com/trawl/trawl/internal/distrib/nameserver"
	"github.com/trawl/trawl/internal/distrib/wire"
	"github.com/trawl/trawl/internal/index"
)

// Query is the job of the indexer's query method: the partition's first
// Options.Size hits of a query (Options.From is ignored), for a caller that
// merges partitions. They are read a page of index.MaxPageSize at a time,
// up to index.MaxFrom+index.MaxPageSize hits; the facets come from the
// first page.
type Query struct {
	Query   string
	Options index.SearchOptions
}

func (j Query) String() string { return fmt.Sprintf("query %q, %d hits", j.Query, j.Options.Size) }

func (j Query) run(ctx context.Context, ix *index.Index) (*index.Results, error) {
	want := min(max(j.Options.Size, 1), index.MaxFrom+index.MaxPageSize)
	o := j.Options
	o.From, o.Size = 0, min(want, index.MaxPageSize)
	var out *index.Results
	for {
		r, err := ix.Search(ctx, j.Query, o)
		if err != nil {
			return nil, err
		}
		if out == nil {
			out = r
		} else {
			out.Hits = append(out.Hits, r.Hits...)
		}
		if len(r.Hits) < o.Size || len(out.Hits) >= want || o.From+o.Size > index.MaxFrom {
			break
		}
		o.From += o.Size
		o.Facets = false
	}
	out.Hits = out.Hits[:min(len(out.Hits), want)]
	out.From, out.Size = 0, want
	return out, nil
}

// Searcher queries every indexer partition bound in a registry at once
// and merges their results (an index.Searcher: the search page and trawl
// search of a distributed chain). Each partition returns its first
// From+Size hits; the merge orders them by score (a tie to the partition
// first by name) and keeps the page, adds up the totals and the facet
// counts. An indexer that does
// not answer is an error: a partial answer would silently miss a
// partition. Scores are each partition's own (its term statistics), as
// with any partitioned index.
//
// With Clicks, the click relevance (internal/clicks) boosts a URL for the
// queries it was clicked for, as the embedded index does: when the query
// has clicked URLs, each partition is asked for at least its first
// ClickWindow hits, each hit's score is multiplied by its URL's boost and
// each partition's hits re-sorted before the merge, so a clicked URL moves
// up within the best ClickWindow hits of its partition.
type Searcher struct {
	Registry nameserver.Registry
	Client   *wire.Client
	Clicks   *clicks.Relevance
}

// ClickWindow is how many hits of each partition the click boost
// re-sorts (the embedded index's default re-rank window).
const ClickWindow = 100

// Search implements index.Searcher.
func (s Searcher) Search(ctx context.Context, q string, o index.SearchOptions) (*index.Results, error) {
	start := time.Now()
	if o.Size <= 0 {
		o.Size = 10
	}
	o.Size = min(o.Size, index.MaxPageSize)
	o.From = min(max(o.From, 0), index.MaxFrom)
	aors, err := s.Registry.List(ctx, wire.NameIndexPrefix)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(aors, func(a, b wire.AOR) int { return cmp.Compare(a.Name, b.Name) })
	if len(aors) == 0 {
		return nil, fmt.Errorf("indexer: no indexer is registered")
	}
	rel := s.Clicks.For(index.ClickQuery(q, o))
	sub := o
	sub.From, sub.Size = 0, o.From+o.Size
	if len(rel) > 0 {
		sub.Size = max(sub.Size, ClickWindow)
	}
	opts, err := json.Marshal(sub)
	if err != nil {
		return nil, fmt.Errorf("indexer: %w", err)
	}
	parts := make([]*index.Results, len(aors))
	errs := make([]error, len(aors))
	var wg sync.WaitGroup
	for i, a := range aors {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f, err := s.Client.Call(ctx, a.Addr(), Object, "query", wire.Str(q), wire.Byt(opts))
			if err != nil {
				errs[i] = fmt.Errorf("indexer %s (%s): %w", a.Name, a.Addr(), err)
				return
			}
			var r index.Results
			if err := json.Unmarshal(f.Arg(0).B, &r); err != nil {
				errs[i] = fmt.Errorf("indexer %s: bad results: %w", a.Name, err)
				return
			}
			parts[i] = &r
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	if len(rel) > 0 {
		for _, p := range parts {
			boost(p.Hits, rel)
		}
	}
	res := merge(parts, o)
	res.Query, res.Took = q, time.Since(start)
	return res, nil
}

// Lookup implements index.Looker: it asks the partition that holds rawURL
// (distrib.Partition of it, as the distributors place it) for the
// document.
func (s Searcher) Lookup(ctx context.Context, collection, rawURL string) (index.Stored, error) {
	var st index.Stored
	aors, err := s.Registry.List(ctx, wire.NameIndexPrefix)
	if err != nil {
		return st, err
	}
	for _, a := range aors {
		var i, n int
		if _, err := fmt.Sscanf(a.ObjectID, "partition %d of %d", &i, &n); err != nil || n <= 0 ||
			a.Name != distrib.IndexerName(i) || i != distrib.Partition(rawURL, n) {
			continue
		}
		f, err := s.Client.Call(ctx, a.Addr(), Object, "lookup", wire.Str(collection), wire.Str(rawURL))
		if err != nil {
			return st, fmt.Errorf("indexer %s (%s): %w", a.Name, a.Addr(), err)
		}
		if err := json.Unmarshal(f.Arg(0).B, &st); err != nil {
			return st, fmt.Errorf("indexer %s: bad document: %w", a.Name, err)
		}
		return st, nil
	}
	return st, fmt.Errorf("indexer: no indexer of the partition of %s is registered", rawURL)
}

// boost multiplies the score of each hit clicked for the query by its
// click boost, and sorts the hits by score again (stable: equal scores
// keep the partition's order).
func boost(hits []index.Hit, rel map[string]clicks.Rel) {
	for i := range hits {
		hits[i].Score *= rel[clicks.NormalizeURL(hits[i].URL)].Boost()
	}
	slices.SortStableFunc(hits, func(a, b index.Hit) int { return cmp.Compare(b.Score, a.Score) })
}

// merge merges the partitions' results into the page o asks for.
func merge(parts []*index.Results, o index.SearchOptions) *index.Results {
	res := &index.Results{From: o.From, Size: o.Size, Hits: []index.Hit{}}
	sites, types := map[string]int{}, map[string]int{}
	nSites, nTypes := 0, 0
	for _, p := range parts {
		if res.Parsed == "" {
			res.Parsed = p.Parsed
		}
		res.Total += p.Total
		for _, f := range p.Sites {
			sites[f.Value] += f.Count
		}
		for _, f := range p.Types {
			types[f.Value] += f.Count
		}
		nSites, nTypes = max(nSites, len(p.Sites)), max(nTypes, len(p.Types))
	}
	// A k-way merge of the partitions' lists, each kept in its own order:
	// the best head first, a tie to the earlier partition. The first n
	// merged hits then depend only on the first n of each partition, so
	// pages of any size agree with each other (up to the order of equal
	// scores, which an index does not keep from one query to the next).
	heads := make([]int, len(parts))
	for n := 0; n < o.From+o.Size; n++ {
		best := -1
		for i, p := range parts {
			if heads[i] < len(p.Hits) && (best < 0 || p.Hits[heads[i]].Score > parts[best].Hits[heads[best]].Score) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		if n >= o.From {
			res.Hits = append(res.Hits, parts[best].Hits[heads[best]])
		}
		heads[best]++
	}
	res.Sites, res.Types = topFacets(sites, nSites), topFacets(types, nTypes)
	return res
}

// topFacets returns the n values of counts with the highest counts (ties by
// value).
func topFacets(counts map[string]int, n int) []index.Facet {
	if len(counts) == 0 {
		return nil
	}
	out := make([]index.Facet, 0, len(counts))
	for v, c := range counts {
		out = append(out, index.Facet{Value: v, Count: c})
	}
	slices.SortFunc(out, func(a, b index.Facet) int {
		if c := cmp.Compare(b.Count, a.Count); c != 0 {
			return c
		}
		return cmp.Compare(a.Value, b.Value)
	})
	return out[:min(len(out), n)]
}
