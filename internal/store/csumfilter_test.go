package store

import (
	"crypto/md5"
	"fmt"
	"hash/maphash"
	"testing"
)

func TestCSumFilterGrowsWithoutFalseNegatives(t *testing.T) {
	f := &csumFilter{seed: maphash.MakeSeed(), parts: []*csumPart{newCSumPart(1000)}}
	const n = 20000
	for i := range n {
		f.add("c", md5.Sum(fmt.Appendf(nil, "doc %d", i)))
	}
	if len(f.parts) < 4 {
		t.Fatalf("filter has %d parts after %d adds to a 1000-entry part, want it to grow", len(f.parts), n)
	}
	for i := range n {
		if !f.mayHave("c", md5.Sum(fmt.Appendf(nil, "doc %d", i))) {
			t.Fatalf("checksum %d added but not found", i)
		}
	}
	fp := 0
	for i := range n {
		if f.mayHave("c", md5.Sum(fmt.Appendf(nil, "other %d", i))) {
			fp++
		}
		if f.mayHave("d", md5.Sum(fmt.Appendf(nil, "doc %d", i))) {
			fp++
		}
	}
	// Each part is sized for 1% at its limit; the parts' rates add up.
	if rate := float64(fp) / (2 * n); rate > 0.06 {
		t.Errorf("false positive rate %.3f, want under 0.06", rate)
	}
}

func TestChecksumOwnerFilterSurvivesReopen(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	cs := md5.Sum([]byte("body"))
	b := s.NewBatch()
	if err := b.PutChecksumOwner("coll", cs, "http://a/"); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	check := func(s *Store, coll string, cs [16]byte, wantOwner string, wantOK bool) {
		t.Helper()
		owner, ok, err := s.ChecksumOwner(coll, cs)
		if err != nil || ok != wantOK || owner != wantOwner {
			t.Fatalf("ChecksumOwner(%q) = %q, %v, %v; want %q, %v", coll, owner, ok, err, wantOwner, wantOK)
		}
	}
	check(s, "coll", cs, "http://a/", true)
	check(s, "other", cs, "", false)
	check(s, "coll", md5.Sum([]byte("new")), "", false)
	// A discarded batch leaves a bit set but no owner.
	b = s.NewBatch()
	if err := b.PutChecksumOwner("coll", md5.Sum([]byte("discarded")), "http://b/"); err != nil {
		t.Fatal(err)
	}
	b.Discard()
	check(s, "coll", md5.Sum([]byte("discarded")), "", false)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.ChecksumOwner("coll", md5.Sum([]byte("new"))); err != ErrClosed {
		t.Fatalf("ChecksumOwner on a closed store: %v, want ErrClosed", err)
	}
	s, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	check(s, "coll", cs, "http://a/", true) // found by the scan at Open
	check(s, "coll", md5.Sum([]byte("new")), "", false)
}
