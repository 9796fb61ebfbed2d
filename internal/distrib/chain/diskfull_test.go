package chain

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/diskspace"
	"github.com/trawl/trawl/internal/diskspace/disktest"
	"github.com/trawl/trawl/internal/feed"
	"github.com/trawl/trawl/internal/index"
)

// TestIndexerHoldsOperationsOnFullDisk runs the in-process chain with its
// index on a 64 MiB tmpfs. Five documents are indexed; then the file
// system is filled to 2 MiB free (under the indexer's 8 MiB low-water
// mark) and five more are sent: the indexer pauses, applies nothing and
// calls no callback, so the sender keeps them. Removing the filler
// resumes it: the five are indexed and called back, and the index,
// reopened, holds all ten.
func TestIndexerHoldsOperationsOnFullDisk(t *testing.T) {
	fs := disktest.Mount(t, 64<<20)
	guard := diskspace.NewGuard(diskspace.Config{Dir: fs, Low: 8 << 20, High: 16 << 20, Interval: 20 * time.Millisecond, Role: "indexer"})
	local, _, err := Open(Config{Data: fs, Disk: guard})
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			local.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := local.Dialer()(ctx, feed.Target{Name: "default:web", Collection: "web", Primary: true})
	if err != nil {
		t.Fatal(err)
	}
	answered := make(chan error, 10)
	submit := func(from int) {
		var batch []feed.Operation
		for j := from; j < from+5; j++ {
			batch = append(batch, feed.Operation{Kind: feed.Add, Seq: uint64(j + 1), Collection: "web",
				URI: fmt.Sprintf("http://site.example/%d", j), MIME: "text/html", Text: "full disk words"})
		}
		if err := s.Submit(ctx, batch, func(seq uint64, err error) { answered <- err }); err != nil {
			t.Fatal(err)
		}
	}
	callbacks := func(n int) {
		t.Helper()
		for range n {
			select {
			case err := <-answered:
				if err != nil {
					t.Fatalf("callback: %v", err)
				}
			case <-ctx.Done():
				t.Fatal("callbacks missing")
			}
		}
	}
	submit(0)
	callbacks(5)

	filler := disktest.Fill(t, fs, 2<<20)
	submit(5)
	deadline := time.Now().Add(time.Minute)
	for !guard.Status().Paused {
		if time.Now().After(deadline) {
			t.Fatalf("the indexer did not pause: %+v", guard.Status())
		}
		time.Sleep(5 * time.Millisecond)
	}
	select {
	case err := <-answered:
		t.Fatalf("a callback while the disk is full: %v", err)
	case <-time.After(10 * guard.Interval()):
	}
	if n, err := local.Index.Count(); err != nil || n != 5 {
		t.Errorf("%d documents (%v) while paused, want 5", n, err)
	}

	filler.Remove(t)
	callbacks(5)
	if n, err := local.Index.Count(); err != nil || n != 10 {
		t.Errorf("%d documents (%v) after resuming, want 10", n, err)
	}
	if st := guard.Status(); st.Paused || st.Pauses != 1 {
		t.Errorf("guard %+v, want resumed after one pause", st)
	}
	s.Close()
	local.Close()
	closed = true
	ix, err := index.Open(fs+"/index", index.Options{})
	if err != nil {
		t.Fatalf("reopening the index: %v", err)
	}
	defer ix.Close()
	if n, err := ix.Count(); err != nil || n != 10 {
		t.Errorf("reopened index: %d documents (%v), want 10", n, err)
	}
}
