package nodesched

import (
	"fmt"
	"testing"

	"github.com/trawl/trawl/internal/store"
)

// TestKeyFilterReads: the feeding records a machine reads through its
// filter are found when the store had them before the machine started,
// when they are written after the filter is loaded, and after the filter
// outgrew its size and was loaded again.
func TestKeyFilterReads(t *testing.T) {
	st, machine := feedTestStore(t)
	put := func(k, v []byte) {
		t.Helper()
		b := st.NewBatch()
		if err := b.SetRaw(store.SpaceMeta, k, v); err != nil {
			t.Fatal(err)
		}
		if err := b.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	const doc, dup = "http://a.test/doc", "http://a.test/dup"
	put(markKey("c1", doc), []byte("sum"))
	put(listKey("c1", listDuplicates, doc), encodeURIList([]string{dup}))
	put(listedKey("c1", dup), append([]byte{listDuplicates}, doc...))
	m, c := machine()
	check := func(when string) {
		t.Helper()
		if fed, sum, err := m.mark("c1", doc); err != nil || !fed || string(sum) != "sum" {
			t.Errorf("%s: mark of %s: %v %q %v", when, doc, fed, sum, err)
		}
		if l := m.storedList(c, listDuplicates, doc); len(l) != 1 || l[0] != dup {
			t.Errorf("%s: duplicates of %s: %q", when, doc, l)
		}
		if at := m.listedAt(c, dup); at != (listing{listDuplicates, doc}) {
			t.Errorf("%s: %s listed at %+v", when, dup, at)
		}
		if fed, _, _ := m.mark("c1", dup); fed {
			t.Errorf("%s: %s has a mark", when, dup)
		}
	}
	check("records from before the start")
	if c.keys == nil {
		t.Fatal("no filter loaded")
	}

	// Written after the filter was loaded, through the write points.
	for i := range c.keys.Limit() + 10 {
		u := fmt.Sprint("http://a.test/new/", i)
		b := st.NewBatch()
		c.keyAdded(famMark, u)
		if err := b.SetRaw(store.SpaceMeta, markKey("c1", u), nil); err != nil {
			t.Fatal(err)
		}
		if err := b.Commit(); err != nil {
			t.Fatal(err)
		}
		if i%10000 == 0 {
			if fed, _, _ := m.mark("c1", u); !fed {
				t.Fatalf("mark %s written after loading not found", u)
			}
		}
	}
	limit := c.keys.Limit()
	c.keysCheck()
	if c.keys != nil {
		t.Fatal("filter over its size not dropped")
	}
	check("after reloading")
	if c.keys.Limit() <= limit {
		t.Errorf("reloaded filter sized for %d keys, was %d", c.keys.Limit(), limit)
	}
	if fed, _, _ := m.mark("c1", fmt.Sprint("http://a.test/new/", limit+5)); !fed {
		t.Error("mark written before reloading not found")
	}
}
