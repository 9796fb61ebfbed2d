package feed

import (
	"errors"
	"testing"

	"github.com/cockroachdb/pebble"
	"github.com/google/go-cmp/cmp"
)

// TestOutboxPutWith puts operations in the caller's batch: they are in
// the outbox exactly when the caller's own writes are.
func TestOutboxPutWith(t *testing.T) {
	db, err := pebble.Open(t.TempDir(), &pebble.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ob, err := NewOutbox(db, OutboxOptions{Prefix: "mfeed/o/", NoSync: true, SyncOnClaim: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ob.Close()

	// A failed commit changes nothing.
	b := db.NewBatch()
	if err := b.Set([]byte("step/1"), []byte("x"), nil); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("disk full")
	if _, err := ob.PutWith(b, func() error { return boom }, addOp("d", "lost", Normal)); !errors.Is(err, boom) {
		t.Fatalf("PutWith: %v, want %v", err, boom)
	}
	b.Close()
	if ob.Pending("d") != 0 {
		t.Errorf("pending after a failed commit: %d", ob.Pending("d"))
	}

	// A commit puts the caller's writes and the operations together.
	b = db.NewBatch()
	if err := b.Set([]byte("step/2"), []byte("y"), nil); err != nil {
		t.Fatal(err)
	}
	seqs, err := ob.PutWith(b, func() error { return b.Commit(pebble.NoSync) }, addOp("d", "u1", Normal), addOp("d", "u2", High))
	if err != nil {
		t.Fatal(err)
	}
	b.Close()
	if diff := cmp.Diff([]uint64{1, 2}, seqs); diff != "" {
		t.Errorf("seqs (-want +got):\n%s", diff)
	}
	if v, closer, err := db.Get([]byte("step/2")); err != nil || string(v) != "y" {
		t.Errorf("caller's write: %q, %v", v, err)
	} else {
		closer.Close()
	}
	if _, _, err := db.Get([]byte("step/1")); !errors.Is(err, pebble.ErrNotFound) {
		t.Errorf("the failed batch was written: %v", err)
	}
	got, _ := claimURIs(t, ob, "d", 10)
	if diff := cmp.Diff([]string{"u2", "u1"}, got); diff != "" {
		t.Errorf("claimed (-want +got):\n%s", diff)
	}

	// Without operations PutWith only commits.
	b = db.NewBatch()
	_ = b.Set([]byte("step/3"), nil, nil)
	if _, err := ob.PutWith(b, func() error { return b.Commit(pebble.NoSync) }); err != nil {
		t.Fatal(err)
	}
	b.Close()
	if _, closer, err := db.Get([]byte("step/3")); err != nil {
		t.Errorf("step/3: %v", err)
	} else {
		closer.Close()
	}

	// Reopened, the outbox has what was committed, and continues the
	// sequence.
	ob2, err := NewOutbox(db, OutboxOptions{Prefix: "mfeed/o/"})
	if err != nil {
		t.Fatal(err)
	}
	if ob2.Pending("d") != 2 {
		t.Errorf("reopened: pending %d, want 2", ob2.Pending("d"))
	}
	s, err := ob2.Put(addOp("d", "u3", Normal))
	if err != nil || s[0] != 3 {
		t.Errorf("next seq %v, %v; want 3", s, err)
	}
}
