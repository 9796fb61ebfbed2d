package index

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestPartitions: an index of three partitions spreads documents over
// them, applies versions per document as one partition does, finds every
// document by search and Lookup, and keeps its partition count when opened
// again (whatever Options.Partitions says then).
func TestPartitions(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "ix")
	ix, err := Open(dir, Options{Create: true, Partitions: 3})
	if err != nil {
		t.Fatal(err)
	}
	var ops []Op
	for i := range 60 {
		ops = append(ops, Op{Version: uint64(i + 1), Doc: Doc{URL: fmt.Sprintf("http://s%d.example/%d", i%5, i),
			Collection: "web", Title: fmt.Sprintf("page %d", i), Body: "common words and a marker" + fmt.Sprint(i%2), MIME: "text/html"}})
	}
	res, err := ix.Apply(ctx, ops)
	if err != nil || res.Applied != 60 {
		t.Fatalf("apply: %+v %v", res, err)
	}
	// A resend is skipped everywhere; a newer version of one document wins.
	res, err = ix.Apply(ctx, append(ops[:10:10], Op{Version: 100, Remove: true, Doc: Doc{URL: ops[20].Doc.URL, Collection: "web"}}))
	if err != nil || res.Applied != 1 || res.Skipped != 10 {
		t.Fatalf("resend: %+v %v", res, err)
	}
	counts := make([]uint64, ix.Partitions())
	for i, p := range ix.parts {
		if counts[i], err = p.b.DocCount(); err != nil {
			t.Fatal(err)
		}
		if counts[i] == 0 {
			t.Errorf("partition %d is empty", i)
		}
	}
	if n, _ := ix.Count(); n != 59 {
		t.Errorf("count %d, want 59 (%v)", n, counts)
	}
	r, err := ix.Search(ctx, "common marker0", SearchOptions{Size: 100})
	if err != nil || r.Total != 29 || len(r.Hits) != 29 {
		t.Fatalf("search: %v hits of %v (%v), want 29", len(r.Hits), r.Total, err)
	}
	st, err := ix.Lookup(ctx, "web", ops[7].Doc.URL)
	if err != nil || !st.Found || st.Version != 8 || st.Title != "page 7" {
		t.Errorf("lookup: %+v %v", st, err)
	}
	if st, _ := ix.Lookup(ctx, "web", ops[20].Doc.URL); st.Found || st.Version != 100 {
		t.Errorf("removed document: %+v", st)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "p2", "index_meta.json")); err != nil {
		t.Error(err)
	}
	ro, err := Open(dir, Options{ReadOnly: true, Partitions: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if ro.Partitions() != 3 {
		t.Errorf("reopened with %d partitions", ro.Partitions())
	}
	if n, _ := ro.Count(); n != 59 {
		t.Errorf("reopened count %d", n)
	}
}
