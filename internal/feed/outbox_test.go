package feed

import (
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/cockroachdb/pebble"
	"github.com/google/go-cmp/cmp"
)

func openOutbox(t *testing.T, dir string) *Outbox {
	t.Helper()
	ob, err := OpenOutbox(dir, OutboxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ob
}

func addOp(dest, uri string, pri Priority) Operation {
	return Operation{Kind: Add, Priority: pri, Destination: dest, Collection: "c", URI: uri, Text: "text of " + uri}
}

func claimURIs(t *testing.T, ob *Outbox, dest string, n int) ([]string, []uint64) {
	t.Helper()
	ops, err := ob.Claim(dest, n, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	var seqs []uint64
	for _, op := range ops {
		uris = append(uris, op.URI)
		seqs = append(seqs, op.Seq)
	}
	return uris, seqs
}

func TestOutboxOrderAndPriority(t *testing.T) {
	ob := openOutbox(t, t.TempDir())
	defer ob.Close()
	if _, err := ob.Put(addOp("d", "u1", Normal), addOp("d", "u2", Normal), addOp("d", "h1", High),
		addOp("other", "o1", Normal), addOp("d", "u3", Normal), addOp("d", "h2", High)); err != nil {
		t.Fatal(err)
	}
	got, _ := claimURIs(t, ob, "d", 100)
	if diff := cmp.Diff([]string{"h1", "h2", "u1", "u2", "u3"}, got); diff != "" {
		t.Errorf("claim order (-want +got):\n%s", diff)
	}
	if ob.Pending("d") != 5 || ob.Pending("other") != 1 {
		t.Errorf("pending = %d, %d", ob.Pending("d"), ob.Pending("other"))
	}
	// Claimed operations are not handed out twice.
	if again, _ := claimURIs(t, ob, "d", 100); len(again) != 0 {
		t.Errorf("claimed again: %v", again)
	}
}

func TestOutboxAckRelease(t *testing.T) {
	ob := openOutbox(t, t.TempDir())
	defer ob.Close()
	for i := range 10 {
		if _, err := ob.Put(addOp("d", fmt.Sprintf("u%d", i), Normal)); err != nil {
			t.Fatal(err)
		}
	}
	// The byte limit cuts a batch (but never below one operation).
	ops, err := ob.Claim("d", 100, 1)
	if err != nil || len(ops) != 1 {
		t.Fatalf("Claim with 1 byte = %d ops, %v", len(ops), err)
	}
	if err := ob.Release(ops[0].Seq); err != nil {
		t.Fatal(err)
	}
	uris, seqs := claimURIs(t, ob, "d", 4)
	if diff := cmp.Diff([]string{"u0", "u1", "u2", "u3"}, uris); diff != "" {
		t.Errorf("first claim (-want +got):\n%s", diff)
	}
	if err := ob.Ack(seqs[0], seqs[2]); err != nil {
		t.Fatal(err)
	}
	if err := ob.Release(seqs[1], seqs[3]); err != nil {
		t.Fatal(err)
	}
	uris, _ = claimURIs(t, ob, "d", 3)
	if diff := cmp.Diff([]string{"u1", "u3", "u4"}, uris); diff != "" {
		t.Errorf("after ack/release (-want +got):\n%s", diff)
	}
	if ob.Pending("d") != 8 || ob.Claimed() != 3 {
		t.Errorf("pending %d claimed %d", ob.Pending("d"), ob.Claimed())
	}
}

func TestOutboxCoalescing(t *testing.T) {
	ob := openOutbox(t, t.TempDir())
	defer ob.Close()
	// Unsent: the later op replaces the earlier one.
	if _, err := ob.Put(addOp("d", "a", Normal)); err != nil {
		t.Fatal(err)
	}
	rm := Operation{Kind: Remove, Destination: "d", Collection: "c", URI: "a"}
	if _, err := ob.Put(rm, addOp("d", "b", Normal), addOp("d", "b", High)); err != nil {
		t.Fatal(err)
	}
	if n := ob.Pending("d"); n != 2 {
		t.Errorf("pending = %d, want 2", n)
	}
	ops, err := ob.Claim("d", 10, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, op := range ops {
		got = append(got, op.Kind.String()+" "+op.URI)
	}
	if diff := cmp.Diff([]string{"add b", "remove a"}, got); diff != "" {
		t.Errorf("claimed (-want +got):\n%s", diff)
	}
	// In flight: a later op is queued as well; the earlier one, if
	// released, is dropped as superseded.
	if _, err := ob.Put(addOp("d", "b", Normal)); err != nil {
		t.Fatal(err)
	}
	if n := ob.Pending("d"); n != 3 {
		t.Errorf("pending = %d, want 3", n)
	}
	if err := ob.Release(ops[0].Seq, ops[1].Seq); err != nil {
		t.Fatal(err)
	}
	uris, _ := claimURIs(t, ob, "d", 10)
	if diff := cmp.Diff([]string{"a", "b"}, uris); diff != "" {
		t.Errorf("after release (-want +got):\n%s", diff)
	}
	if n := ob.Pending("d"); n != 2 {
		t.Errorf("pending = %d, want 2", n)
	}
}

// TestOutboxCoalescingUpdateFields: an update-fields op supersedes only an
// earlier update-fields op of its URI, never a content op, nor the
// reverse.
func TestOutboxCoalescingUpdateFields(t *testing.T) {
	ob := openOutbox(t, t.TempDir())
	defer ob.Close()
	rank := func(r float64) Operation {
		return Operation{Kind: UpdateFields, Destination: "d", Collection: "c", URI: "a", Rank: r}
	}
	if _, err := ob.Put(addOp("d", "a", Normal), rank(1), rank(2)); err != nil {
		t.Fatal(err)
	}
	if _, err := ob.Put(addOp("d", "a", Normal), rank(3)); err != nil {
		t.Fatal(err)
	}
	ops, err := ob.Claim("d", 10, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, op := range ops {
		got = append(got, fmt.Sprintf("%s %s %g", op.Kind, op.URI, op.Rank))
	}
	if diff := cmp.Diff([]string{"add a 0", "update-fields a 3"}, got); diff != "" {
		t.Errorf("claimed (-want +got):\n%s", diff)
	}
	if err := ob.Ack(ops[0].Seq, ops[1].Seq); err != nil {
		t.Fatal(err)
	}
	if n := ob.Pending("d"); n != 0 {
		t.Errorf("pending after ack = %d", n)
	}
}

// TestOutboxReopen closes the outbox mid-way (claimed, partly acknowledged)
// and reopens it: everything not acknowledged is pending again, sequence
// numbers keep growing, and coalescing still sees the URIs.
func TestOutboxReopen(t *testing.T) {
	dir := t.TempDir()
	ob := openOutbox(t, dir)
	seqs, err := ob.Put(addOp("d", "u1", Normal), addOp("d", "u2", Normal), addOp("d", "u3", High))
	if err != nil {
		t.Fatal(err)
	}
	_, claimed := claimURIs(t, ob, "d", 2) // u3, u1
	if err := ob.Ack(claimed[0]); err != nil {
		t.Fatal(err)
	}
	if err := ob.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := ob.Put(addOp("d", "x", Normal)); err != ErrOutboxClosed {
		t.Errorf("Put after Close = %v", err)
	}

	ob = openOutbox(t, dir)
	defer ob.Close()
	if n := ob.Pending("d"); n != 2 {
		t.Errorf("pending after reopen = %d, want 2", n)
	}
	if diff := cmp.Diff([]string{"d"}, ob.Destinations()); diff != "" {
		t.Errorf("destinations: %s", diff)
	}
	more, err := ob.Put(addOp("d", "u2", Normal)) // supersedes the unsent u2
	if err != nil {
		t.Fatal(err)
	}
	if more[0] <= seqs[2] {
		t.Errorf("seq after reopen = %d, not above %d", more[0], seqs[2])
	}
	uris, got := claimURIs(t, ob, "d", 10)
	if diff := cmp.Diff([]string{"u1", "u2"}, uris); diff != "" {
		t.Errorf("after reopen (-want +got):\n%s", diff)
	}
	if got[1] != more[0] {
		t.Errorf("u2 has seq %d, want the new %d", got[1], more[0])
	}
}

func TestOutboxSharedDB(t *testing.T) {
	db, err := pebble.Open(filepath.Join(t.TempDir(), "store"), &pebble.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Set([]byte("other/key"), []byte("v"), pebble.Sync); err != nil {
		t.Fatal(err)
	}
	a, err := NewOutbox(db, OutboxOptions{Prefix: "feed/a/"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewOutbox(db, OutboxOptions{Prefix: "feed/b/", NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Put(addOp("d", "ua", Normal)); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Put(addOp("d", "ub", Normal), addOp("d", "ub2", Normal)); err != nil {
		t.Fatal(err)
	}
	if ua, _ := claimURIs(t, a, "d", 10); !cmp.Equal(ua, []string{"ua"}) {
		t.Errorf("a claimed %v", ua)
	}
	a.Close()
	b.Close()
	// The database stays open and usable; a reopened outbox counts its own.
	if _, closer, err := db.Get([]byte("other/key")); err != nil {
		t.Fatal(err)
	} else {
		closer.Close()
	}
	b2, err := NewOutbox(db, OutboxOptions{Prefix: "feed/b/"})
	if err != nil {
		t.Fatal(err)
	}
	if n := b2.Pending("d"); n != 2 {
		t.Errorf("b pending = %d", n)
	}
}

func TestOutboxPutErrors(t *testing.T) {
	ob := openOutbox(t, t.TempDir())
	defer ob.Close()
	for _, op := range []Operation{
		{Kind: Add, URI: "u"},                        // no destination
		{Kind: Add, Destination: "a\x00b", URI: "u"}, // NUL
		{Kind: 9, Destination: "d", URI: "u"},        // bad kind
		{Kind: Add, Destination: "d"},                // no URI
	} {
		if _, err := ob.Put(op); err == nil {
			t.Errorf("Put(%+v) accepted", op)
		}
	}
}

// TestOutboxAckWith: AckWith writes the caller's records in the batch that
// acknowledges the operations (so both are durable or neither), commits a
// batch of records alone when there is nothing to acknowledge, and writes
// nothing once the outbox is closed.
func TestOutboxAckWith(t *testing.T) {
	dir := t.TempDir()
	db, err := pebble.Open(dir, &pebble.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ob, err := NewOutbox(db, OutboxOptions{Prefix: "feed/a/"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ob.Put(addOp("d", "u0", Normal), addOp("d", "u1", Normal)); err != nil {
		t.Fatal(err)
	}
	_, seqs := claimURIs(t, ob, "d", 2)
	set := func(v string) func(*pebble.Batch) error {
		return func(b *pebble.Batch) error { return b.Set([]byte("count"), []byte(v), nil) }
	}
	get := func() string {
		v, c, err := db.Get([]byte("count"))
		if err != nil {
			return err.Error()
		}
		defer c.Close()
		return string(v)
	}
	if err := ob.AckWith(set("1"), seqs[0]); err != nil {
		t.Fatal(err)
	}
	if got := get(); got != "1" || ob.Pending("d") != 1 {
		t.Fatalf("after AckWith: count %q, pending %d; want 1 and 1", got, ob.Pending("d"))
	}
	if err := ob.AckWith(set("2")); err != nil { // nothing to acknowledge
		t.Fatal(err)
	}
	if got := get(); got != "2" {
		t.Fatalf("records alone: count %q, want 2", got)
	}
	if err := ob.AckWith(func(*pebble.Batch) error { return fmt.Errorf("refused") }, seqs[1]); err == nil {
		t.Fatal("AckWith with a failing writer: no error")
	}
	if ob.Pending("d") != 1 {
		t.Fatalf("a failed AckWith acknowledged: pending %d, want 1", ob.Pending("d"))
	}
	ob.Close()
	if err := ob.AckWith(set("3"), seqs[1]); !errors.Is(err, ErrOutboxClosed) {
		t.Fatalf("closed outbox: %v, want ErrOutboxClosed", err)
	}
	if got := get(); got != "2" {
		t.Fatalf("closed outbox wrote: count %q", got)
	}
}
