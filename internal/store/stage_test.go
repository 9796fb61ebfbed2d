package store

import (
	"testing"
)

// TestStagedView: a staged view's commits reach the store only when its
// owner commits what TakeStaged returns; until then the view reads its own
// writes (records, routes, range deletions) and the store does not; the
// OnCommit functions of a view's batch run when it is staged.
func TestStagedView(t *testing.T) {
	s := openMem(t, Options{})
	b := s.NewBatch()
	if err := b.PutURI("c", &URIRecord{URI: "http://old/", Site: "old"}); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	v := s.Staged()
	if v.TakeStaged() != nil {
		t.Fatal("a fresh view has something staged")
	}
	ran := 0
	b = v.NewBatch()
	if err := b.PutURI("c", &URIRecord{URI: "http://a/", Site: "a"}); err != nil {
		t.Fatal(err)
	}
	if err := b.PutRoute("c", "a", 7); err != nil {
		t.Fatal(err)
	}
	b.OnCommit(func() { ran++ })
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	b = v.NewBatch()
	if err := b.DeletePrefix(SpaceURI, AppendLP(nil, "c")); err != nil {
		t.Fatal(err)
	}
	if err := b.PutURI("c", &URIRecord{URI: "http://b/", Site: "b"}); err != nil {
		t.Fatal(err)
	}
	if err := b.CommitSync(); err != nil {
		t.Fatal(err)
	}
	has := func(st *Store, uri string) bool {
		_, ok, err := st.URI("c", uri)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if has(v, "http://old/") || has(v, "http://a/") || !has(v, "http://b/") {
		t.Errorf("the view does not see its own writes")
	}
	if !has(s, "http://old/") || has(s, "http://b/") {
		t.Errorf("the store sees staged writes")
	}
	if n, ok, _ := v.Route("c", "a"); !ok || n != 7 {
		t.Errorf("view route = %d %v", n, ok)
	}
	if _, ok, _ := s.Route("c", "a"); ok {
		t.Errorf("the store has a staged route")
	}
	if ran != 1 {
		t.Errorf("OnCommit ran %d times when staged", ran)
	}
	tb := v.TakeStaged()
	if tb == nil || !tb.Sync() {
		t.Fatalf("TakeStaged = %v (want a batch asking for sync)", tb)
	}
	if err := tb.Commit(); err != nil {
		t.Fatal(err)
	}
	if ran != 1 || has(s, "http://old/") || !has(s, "http://b/") || !has(v, "http://b/") {
		t.Errorf("after the commit: ran %d, old %v, b %v", ran, has(s, "http://old/"), has(s, "http://b/"))
	}
	if n, ok, _ := s.Route("c", "a"); !ok || n != 7 {
		t.Errorf("store route after commit = %d %v", n, ok)
	}
	if v.TakeStaged() != nil {
		t.Errorf("the stage was not emptied")
	}
	// Batches committed with Commit only do not ask for an fsync: the
	// driver would fsync the log at every batch.
	b = v.NewBatch()
	if err := b.PutURI("c", &URIRecord{URI: "http://c/", Site: "c"}); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	if tb := v.TakeStaged(); tb == nil || tb.Sync() {
		t.Fatalf("TakeStaged after Commit = %v (want a batch not asking for sync)", tb)
	} else if err := tb.Commit(); err != nil {
		t.Fatal(err)
	}
}
