package feed

import (
	"fmt"
	"testing"
)

// TestOutboxCoalescingFilter: the filter of URI keys never hides a queued
// operation from the one that supersedes it: one left by an earlier
// process, one put in the same process, one put after the filter filled up
// and was loaded again (a tiny filter here, loaded again every few Puts),
// and an update-fields operation beside a content operation.
func TestOutboxCoalescingFilter(t *testing.T) {
	dir := t.TempDir()
	ob := openOutbox(t, dir)
	if _, err := ob.Put(addOp("d", "old1", Normal), addOp("d", "old2", Normal)); err != nil {
		t.Fatal(err)
	}
	if err := ob.Close(); err != nil {
		t.Fatal(err)
	}

	ob = openOutbox(t, dir) // a new process: the filter is loaded from the store
	defer ob.Close()
	if !ob.ukeys.HasBytes(0, ob.uKey("d", "c", "old1")) {
		t.Fatal("a key of an earlier process is not in the loaded filter")
	}
	ob.ukeysMin = 4
	if err := ob.loadUKeys(); err != nil {
		t.Fatal(err)
	}
	const n = 60
	for i := range n {
		if _, err := ob.Put(addOp("d", fmt.Sprint("u", i), Normal)); err != nil {
			t.Fatal(err)
		}
		if got := ob.Pending("d"); got != 2+i+1 {
			t.Fatalf("after %d Puts: %d pending, want %d", i+1, got, 2+i+1)
		}
	}
	loads := 0
	for i := range n {
		before := ob.ukeys
		if _, err := ob.Put(addOp("d", fmt.Sprint("u", i), High)); err != nil {
			t.Fatal(err)
		}
		if ob.ukeys != before {
			loads++
		}
	}
	if _, err := ob.Put(addOp("d", "old1", Normal), Operation{Kind: UpdateFields, Destination: "d", Collection: "c", URI: "old2", Rank: 1}); err != nil {
		t.Fatal(err)
	}
	if loads == 0 {
		t.Error("the filter was never loaded again")
	}
	// 2 earlier + n, each superseded in place, + the update-fields operation.
	if got := ob.Pending("d"); got != 2+n+1 {
		t.Errorf("%d pending, want %d: a superseded operation was kept", got, 2+n+1)
	}
	uris, seqs := claimURIs(t, ob, "d", 1000)
	seen := map[string]int{}
	for _, u := range uris {
		seen[u]++
	}
	for u, c := range seen {
		if c > 1 && u != "old2" {
			t.Errorf("%s claimed %d times", u, c)
		}
	}
	if err := ob.Ack(seqs...); err != nil {
		t.Fatal(err)
	}
	// Acknowledged: the keys are gone, and a new Put is queued once.
	if _, err := ob.Put(addOp("d", "u1", Normal)); err != nil {
		t.Fatal(err)
	}
	if got := ob.Pending("d"); got != 1 {
		t.Errorf("%d pending after acknowledging all and one Put, want 1", got)
	}
}

// BenchmarkOutboxPutNew: Puts of operations on URIs the outbox does not
// hold (a first crawl), through the filter.
func BenchmarkOutboxPutNew(b *testing.B) {
	ob, err := OpenOutbox(b.TempDir(), OutboxOptions{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	defer ob.Close()
	b.ResetTimer()
	for i := range b.N {
		if _, err := ob.Put(addOp("d", fmt.Sprint("http://site.test/page/", i), Normal)); err != nil {
			b.Fatal(err)
		}
	}
}
