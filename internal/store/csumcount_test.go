package store

import "testing"

// TestChecksumCount: the count of owned checksums starts with a scan and
// then follows every committed batch (a new owner counts, a replaced owner
// does not, a removed one uncounts, a discarded batch changes nothing, a
// collection's range delete counts again from the store).
func TestChecksumCount(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { s.Close() }()
	k := func(i byte) [16]byte { return [16]byte{i} }
	commit := func(f func(b *Batch) error) {
		t.Helper()
		b := s.NewBatch()
		if err := f(b); err != nil {
			t.Fatal(err)
		}
		if err := b.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	want := func(n int64) {
		t.Helper()
		if got, err := s.ChecksumCount("c"); err != nil || got != n {
			t.Errorf("ChecksumCount = %d, %v; want %d", got, err, n)
		}
	}
	commit(func(b *Batch) error { return b.PutChecksumOwner("c", k(1), "http://a/1") })
	want(1) // scanned
	commit(func(b *Batch) error {
		if err := b.PutChecksumOwner("c", k(2), "http://a/2"); err != nil {
			return err
		}
		if err := b.PutChecksumOwner("c", k(1), "http://a/3"); err != nil { // a new owner, same checksum
			return err
		}
		return b.PutChecksumOwner("other", k(3), "http://b/1")
	})
	want(2)
	commit(func(b *Batch) error { return b.DeleteChecksumOwner("c", k(2)) })
	want(1)
	b := s.NewBatch()
	if err := b.PutChecksumOwner("c", k(9), "http://a/9"); err != nil {
		t.Fatal(err)
	}
	b.Discard()
	want(1)
	commit(func(b *Batch) error { return b.DeletePrefix(SpaceChecksum, AppendLP(nil, "c")) })
	want(0)
	// After a reopen the checksum filter, built from the store, tells a
	// checksum with an owner from a new one: a new owner of a stored
	// checksum is not counted again.
	commit(func(b *Batch) error { return b.PutChecksumOwner("c", k(5), "http://a/5") })
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if s, err = Open(dir, Options{}); err != nil {
		t.Fatal(err)
	}
	want(1) // scanned
	commit(func(b *Batch) error { return b.PutChecksumOwner("c", k(5), "http://a/6") })
	want(1)
	commit(func(b *Batch) error { return b.PutChecksumOwner("c", k(6), "http://a/6") })
	want(2)
}
