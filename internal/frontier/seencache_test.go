package frontier

import (
	"testing"
)

// TestSeenCache checks that the seen-set cache gives the disk's verdicts:
// a URI committed this cycle is a duplicate without a disk read; one
// queued by a discarded transaction, dropped, or seen in an earlier cycle
// is not; a shorter path under DEPTH still lowers the depth.
func TestSeenCache(t *testing.T) {
	cfg := testConfig()
	cfg.MaxHops = 5
	f, _ := newFrontier(t, cfg)
	x := Entry{URI: "http://a/x", Site: "a", Hops: 3}
	mustAdd(t, f, t0, x)
	if r := mustAdd(t, f, t0, x); r.Duplicate != 1 || f.Stats().CacheHits != 1 {
		t.Fatalf("second add of x: %+v, cache hits %d; want a duplicate from the cache", r, f.Stats().CacheHits)
	}

	// A discarded transaction leaves nothing behind.
	tx, err := f.Begin(t0)
	if err != nil {
		t.Fatal(err)
	}
	y := Entry{URI: "http://a/y", Site: "a", Hops: 1}
	if _, err := tx.Add(y); err != nil {
		t.Fatal(err)
	}
	tx.Discard()
	if r := mustAdd(t, f, t0, y); r.Queued != 1 {
		t.Fatalf("y after a discarded add: %+v, want queued", r)
	}

	// A shorter path is not a duplicate.
	if r := mustAdd(t, f, t0, Entry{URI: x.URI, Site: "a", Hops: 1}); r.Shorter != 1 {
		t.Fatalf("x by a shorter path: %+v, want shorter", r)
	}
	hits := f.Stats().CacheHits
	if r := mustAdd(t, f, t0, Entry{URI: x.URI, Site: "a", Hops: 2}); r.Duplicate != 1 || f.Stats().CacheHits != hits+1 {
		t.Fatalf("x by a longer path after the shorter one: %+v, hits %d (was %d)", r, f.Stats().CacheHits, hits)
	}

	// Dropped URIs are forgotten.
	serveAll(t, f, t0)
	if _, err := f.DropURIs(t0, "a", []string{y.URI}); err != nil {
		t.Fatal(err)
	}
	if r := mustAdd(t, f, t0, y); r.Queued != 1 {
		t.Fatalf("y after DropURIs: %+v, want queued", r)
	}
	serveAll(t, f, t0)

	// A new cycle: everything is of an earlier cycle and queued again.
	if _, err := f.Refresh(t0, nil, nil); err != nil {
		t.Fatal(err)
	}
	hits = f.Stats().CacheHits
	if r := mustAdd(t, f, t0, x); r.Duplicate != 0 || f.Stats().CacheHits != hits {
		t.Fatalf("x in the next cycle: %+v, cache hits %d (was %d)", r, f.Stats().CacheHits, hits)
	}
}
