package index

import (
	"context"
	"strings"
)

// Searcher answers queries in the query language of ParseQuery: the
// embedded Index, or an external search engine fed instead of it
// (internal/opensearch). Handler serves the search page and API over one.
type Searcher interface {
	Search(ctx context.Context, q string, o SearchOptions) (*Results, error)
}

// Looker is a Searcher that also returns one stored document by its URL
// (the embedded Index, the indexer partitions of a distributed chain):
// Handler then serves GET /api/doc too.
type Looker interface {
	Lookup(ctx context.Context, collection, rawURL string) (Stored, error)
}

// SummaryBytes is how much of a document's description (or, without
// one, its body) the summary field keeps: the snippet shown when no
// fragment matches.
const SummaryBytes = summaryBytes

// Truncate cuts s to at most n bytes on a rune boundary.
func Truncate(s string, n int) string { return truncate(s, n) }

// PrepareQuery parses q and folds o's Site and Type filters into it, as
// Search does, and returns o with its page bounds applied (Size 1 to
// MaxPageSize, default 10; From 0 to MaxFrom).
func PrepareQuery(q string, o SearchOptions) (Query, SearchOptions) {
	if o.Size <= 0 {
		o.Size = 10
	}
	o.Size = min(o.Size, MaxPageSize)
	o.From = min(max(o.From, 0), MaxFrom)
	pq := ParseQuery(q)
	if o.Site != "" {
		if s := normalizeSite(o.Site); s != "" {
			pq.Sites = append(pq.Sites, s)
		}
	}
	if o.Type != "" {
		t := strings.ToLower(o.Type)
		if a, ok := typeAliases[t]; ok {
			t = a
		}
		pq.Types = append(pq.Types, t)
	}
	return pq, o
}

// FieldBoosts returns the text fields a word or phrase is looked for in,
// with their boosts (title 3, anchor 2, body 1).
func FieldBoosts() map[string]float64 {
	m := make(map[string]float64, len(fieldBoosts))
	for _, fb := range fieldBoosts {
		m[fb.field] = fb.boost
	}
	return m
}
