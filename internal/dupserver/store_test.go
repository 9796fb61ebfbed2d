package dupserver

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/trawl/trawl/internal/cmt"
)

// testStore exercises the Store contract; MemStore and PebbleStore must
// behave alike.
func testStore(t *testing.T, st Store) {
	a1, a2, b1 := Key{"a", csum("1")}, Key{"a", csum("2")}, Key{"ab", csum("1")}
	for _, k := range []Key{a1, a2, b1} {
		if err := st.Put(k, Owner{"http://" + k.String(), "node"}, true); err != nil {
			t.Fatal(err)
		}
	}
	if o, ok, err := st.Get(a1); err != nil || !ok || o != (Owner{"http://" + a1.String(), "node"}) {
		t.Fatalf("Get = %+v %v %v", o, ok, err)
	}
	if _, ok, _ := st.Get(Key{"a", csum("none")}); ok {
		t.Fatal("Get of an absent key found it")
	}
	dirty, err := st.DirtyKeys(Key{}, 10)
	if err != nil || len(dirty) != 3 {
		t.Fatalf("DirtyKeys = %v %v", dirty, err)
	}
	for i := 1; i < len(dirty); i++ {
		if dirty[i-1].compare(dirty[i]) >= 0 {
			t.Fatalf("DirtyKeys out of order: %v", dirty)
		}
	}
	page, _ := st.DirtyKeys(dirty[0], 1)
	if diff := cmp.Diff(dirty[1:2], page); diff != "" {
		t.Fatalf("DirtyKeys after: %s", diff)
	}
	if err := st.ClearDirty(a1); err != nil {
		t.Fatal(err)
	}
	if err := st.Delete(a2, false); err != nil {
		t.Fatal(err)
	}
	if n := countMappings(t, st, "a"); n != 1 {
		t.Fatalf("collection a has %d mappings, want 1", n)
	}
	if err := st.DeleteCollection("a"); err != nil {
		t.Fatal(err)
	}
	got := dump(t, st)
	if diff := cmp.Diff(map[Key]Owner{b1: {"http://" + b1.String(), "node"}}, got); diff != "" {
		t.Fatalf("after DeleteCollection(a) (-want +got):\n%s", diff)
	}
	if d, _ := st.DirtyKeys(Key{}, 10); len(d) != 1 || d[0] != b1 {
		t.Fatalf("dirty after DeleteCollection: %v", d)
	}

	rec := CollectionRecord{Name: "example", Removing: true, Config: cmt.Collection{Name: "example",
		Params: cmt.Params{Attribs: []cmt.Attrib{cmt.StrAttrib("format", "gigabase"), cmt.IntAttrib("compact", 1)}}}}
	if err := st.PutCollection(rec); err != nil {
		t.Fatal(err)
	}
	recs, err := st.Collections()
	if err != nil || len(recs) != 1 || recs[0].Name != "example" || !recs[0].Removing {
		t.Fatalf("Collections = %+v %v", recs, err)
	}
	if a, ok := recs[0].Config.Attrib("format"); !ok || a.Str != "gigabase" {
		t.Fatalf("config lost: %+v", recs[0].Config)
	}
	if err := st.DeleteCollectionRecord("example"); err != nil {
		t.Fatal(err)
	}
	if recs, _ := st.Collections(); len(recs) != 0 {
		t.Fatalf("record not deleted: %+v", recs)
	}
	st.PutTombstone("x")
	st.PutTombstone("a")
	if ts, _ := st.Tombstones(); !cmp.Equal(ts, []string{"a", "x"}) {
		t.Fatalf("Tombstones = %v", ts)
	}
	st.DeleteTombstone("a")
	if ts, _ := st.Tombstones(); !cmp.Equal(ts, []string{"x"}) {
		t.Fatalf("Tombstones = %v", ts)
	}
}

func TestMemStore(t *testing.T) { testStore(t, NewMemStore()) }

func TestPebbleStore(t *testing.T) {
	dir := t.TempDir()
	st, err := OpenPebble(dir, PebbleOptions{})
	if err != nil {
		t.Fatal(err)
	}
	testStore(t, st)
	before := dump(t, st)
	st.PutCollection(CollectionRecord{Name: "kept"})
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.Get(Key{"a", csum("1")}); err == nil {
		t.Fatal("Get on a closed store succeeded")
	}
	// Everything survives a reopen.
	st2, err := OpenPebble(dir, PebbleOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	if diff := cmp.Diff(before, dump(t, st2)); diff != "" {
		t.Fatalf("mappings after reopen (-before +after):\n%s", diff)
	}
	if recs, _ := st2.Collections(); len(recs) != 1 || recs[0].Name != "kept" {
		t.Fatalf("collections after reopen: %+v", recs)
	}
	if ts, _ := st2.Tombstones(); len(ts) != 1 {
		t.Fatalf("tombstones after reopen: %v", ts)
	}
	if d, _ := st2.DirtyKeys(Key{}, 10); len(d) != 1 {
		t.Fatalf("dirty keys after reopen: %v", d)
	}
}

func TestOwnerEncoding(t *testing.T) {
	for _, o := range []Owner{{}, {"http://a/", "n1"}, {"", "n"}, {"u", ""}} {
		got, err := decodeOwner(encodeOwner(o))
		if err != nil || got != o {
			t.Errorf("round trip of %+v = %+v %v", o, got, err)
		}
	}
	for _, b := range [][]byte{nil, {0x80}, {5, 'a'}} {
		if _, err := decodeOwner(b); err == nil {
			t.Errorf("decodeOwner(%x) accepted", b)
		}
	}
}
