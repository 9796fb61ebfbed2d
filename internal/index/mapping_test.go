package index

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/mapping"
)

// TestStoredOnlyNumbers checks that an index whose date and rank are
// stored only (the mapping since they stopped being indexed) answers every
// kind of query as one created before, where they were indexed with doc
// values: same hits in the same order with the same scores, dates, ranks and
// facets, after rank updates too; and that the old index still opens and
// takes documents.
func TestStoredOnlyNumbers(t *testing.T) {
	m, err := newMapping()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{FieldModified, FieldRank} {
		fm := m.DefaultMapping.Properties[f].Fields[0]
		if fm.Index || fm.DocValues || !fm.Store {
			t.Fatalf("%s: index %v, doc values %v, store %v; want stored only", f, fm.Index, fm.DocValues, fm.Store)
		}
		fm.Index, fm.DocValues = true, true // as before
	}
	old := openWithMapping(t, m)
	if im, ok := old.parts[0].b.Mapping().(*mapping.IndexMappingImpl); !ok || !im.DefaultMapping.Properties[FieldRank].Fields[0].Index {
		t.Fatal("the old index's mapping does not index the rank")
	}
	now := openTest(t, Options{})

	day := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	docs := append([]Doc(nil), corpus...)
	for i := range docs {
		docs[i].Modified = day.AddDate(0, 0, i)
		docs[i].Rank = float64(i%3) / 4
	}
	load(t, old, docs, 1)
	load(t, now, docs, 1)
	queries := []string{"apples", `"red apples"`, "apples site:example.com", "apples -sour", "type:pdf", "type:text/plain apples",
		"apples OR pears", "red -pears site:other.org", "sweet"}
	compare := func(when string) {
		t.Helper()
		for _, q := range queries {
			a, err := old.Search(context.Background(), q, SearchOptions{Facets: true})
			if err != nil {
				t.Fatal(err)
			}
			b, err := now.Search(context.Background(), q, SearchOptions{Facets: true})
			if err != nil {
				t.Fatal(err)
			}
			if a.Total == 0 {
				t.Errorf("%s, %s: no hits", when, q)
			}
			if fmt.Sprint(hitsOf(a), a.Total, a.Sites, a.Types) != fmt.Sprint(hitsOf(b), b.Total, b.Sites, b.Types) {
				t.Errorf("%s, %s:\nold index %v %d %v %v\nnew index %v %d %v %v", when, q,
					hitsOf(a), a.Total, a.Sites, a.Types, hitsOf(b), b.Total, b.Sites, b.Types)
			}
		}
	}
	compare("added")
	// Rank updates (partial updates, fields.go) rewrite the stored rank.
	var ups []Op
	for i, d := range docs {
		ups = append(ups, Op{Fields: true, Version: 2, Doc: Doc{URL: d.URL, Collection: d.Collection, Rank: float64(len(docs)-i) / 2}})
	}
	for _, ix := range []*Index{old, now} {
		if _, err := ix.Apply(context.Background(), ups); err != nil {
			t.Fatal(err)
		}
	}
	compare("ranks updated")
	r, err := now.Search(context.Background(), "apples", SearchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range r.Hits {
		var want Doc
		for i, d := range docs {
			if d.URL == h.URL {
				want, want.Rank = d, float64(len(docs)-i)/2
			}
		}
		if !h.Modified.Equal(want.Modified) || h.Rank != want.Rank {
			t.Errorf("%s: modified %v rank %v, want %v %v", h.URL, h.Modified, h.Rank, want.Modified, want.Rank)
		}
	}
}

// openWithMapping creates an index with mapping m, as an earlier trawl
// did, and opens it.
func openWithMapping(t *testing.T, m *mapping.IndexMappingImpl) *Index {
	t.Helper()
	dir := t.TempDir()
	b, err := bleve.NewUsing(dir, m, bleve.Config.DefaultIndexType, bleve.Config.DefaultKVStore, nil)
	if err != nil {
		t.Fatal(err)
	}
	b.Close()
	ix, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

// hitsOf is what a reader of a result page sees of its hits.
func hitsOf(r *Results) []string {
	var out []string
	for _, h := range r.Hits {
		out = append(out, fmt.Sprintf("%s %.6f %s %v %v", h.URL, h.Score, h.Snippet, h.Modified.Format(time.RFC3339), h.Rank))
	}
	return out
}
