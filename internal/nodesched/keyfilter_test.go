package nodesched

import (
	"fmt"
	"testing"

	"github.com/trawl/trawl/internal/store"
)

// TestKeyFilter: no key added is ever reported absent, and few keys not
// added are reported present while the filter is within its size.
func TestKeyFilter(t *testing.T) {
	f := newKeyFilter(1000)
	for i := range f.limit {
		f.add(famMark, fmt.Sprint("http://a.test/", i))
	}
	for i := range f.limit {
		if !f.has(famMark, fmt.Sprint("http://a.test/", i)) {
			t.Fatalf("key %d added and reported absent", i)
		}
	}
	fp := 0
	for i := range 100000 {
		if f.has(famListed, fmt.Sprint("http://a.test/", i)) || f.has(famMark, fmt.Sprint("http://b.test/", i)) {
			fp++
		}
	}
	if fp > 4000 { // 2 x 100,000 lookups at about 1 %
		t.Errorf("%d false positives in 200,000 lookups", fp)
	}
}

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
	for i := range c.keys.limit + 10 {
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
	limit := c.keys.limit
	c.keysCheck()
	if c.keys != nil {
		t.Fatal("filter over its size not dropped")
	}
	check("after reloading")
	if c.keys.limit <= limit {
		t.Errorf("reloaded filter sized for %d keys, was %d", c.keys.limit, limit)
	}
	if fed, _, _ := m.mark("c1", fmt.Sprint("http://a.test/new/", limit+5)); !fed {
		t.Error("mark written before reloading not found")
	}
}
