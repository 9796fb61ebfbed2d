package frontier

import (
	"slices"
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

// TestSeenCacheSize checks the bound of Config.SeenCacheSize
// (cachesize/screened): negative turns the cache off (every duplicate is
// found on disk), a small bound holds at most that many entries.
func TestSeenCacheSize(t *testing.T) {
	for _, tc := range []struct {
		name string
		size int
		hits bool
	}{{"default", 0, true}, {"off", -1, false}, {"four", 4, true}} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.SeenCacheSize = tc.size
			f, _ := newFrontier(t, cfg)
			var es []Entry
			for i := range 100 {
				es = append(es, Entry{URI: "http://a/" + string(rune('a'+i%26)) + string(rune('a'+i/26)), Site: "a"})
			}
			for _, e := range es {
				mustAdd(t, f, t0, e)
			}
			r := mustAdd(t, f, t0, es[len(es)-1])
			if r.Duplicate != 1 {
				t.Fatalf("the last URI again: %+v", r)
			}
			if got := f.Stats().CacheHits > 0; got != tc.hits {
				t.Errorf("cache hits %d, want hits: %v", f.Stats().CacheHits, tc.hits)
			}
			if tc.size > 0 {
				if n := len(f.seenc.cur) + len(f.seenc.old); n > tc.size {
					t.Errorf("%d entries cached, bound %d", n, tc.size)
				}
			}
			if tc.size < 0 && f.seenc != nil {
				t.Error("a cache with SeenCacheSize < 0")
			}
		})
	}
}

// TestQueueEntriesInMemory checks that HeadSize and RefillSize
// (cachesize/wqcache) bound the queue entries of a site held in memory,
// while every entry is still served in order.
func TestQueueEntriesInMemory(t *testing.T) {
	cfg := testConfig()
	cfg.HeadSize, cfg.RefillSize = 2, 3
	f, _ := newFrontier(t, cfg)
	var names []string
	for i := range 40 {
		names = append(names, string(rune('A'+i/26))+string(rune('a'+i%26)))
	}
	mustAdd(t, f, t0, uris("a", names...)...)
	check := func() {
		t.Helper()
		for _, st := range f.sites {
			for i := range st.q {
				if n := len(st.q[i].head); n > 3 {
					t.Fatalf("site %s level %d: %d entries in memory, bound 3", st.name, i, n)
				}
			}
		}
	}
	check()
	var served []string
	for range names {
		served = append(served, serveN(t, f, t0, 1)...)
		check()
	}
	if got := short(served); !slices.Equal(got, names) {
		t.Errorf("served %v, want %v", got, names)
	}
}
