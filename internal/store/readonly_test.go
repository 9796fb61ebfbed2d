package store

import "testing"

// TestReadOnly: a store opened read-only reads what was written and
// refuses writes.
func TestReadOnly(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	b := s.NewBatch()
	if err := b.PutURI("c", &URIRecord{URI: "http://a/", Site: "a", Status: StatusFetched}); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	ro, err := Open(dir, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if r, ok, err := ro.URI("c", "http://a/"); err != nil || !ok || r.Status != StatusFetched {
		t.Fatalf("read-only lookup: %v %v %v", r, ok, err)
	}
	b = ro.NewBatch()
	if err := b.PutURI("c", &URIRecord{URI: "http://b/", Site: "b"}); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); err == nil {
		t.Fatal("a read-only store accepted a write")
	}
}
