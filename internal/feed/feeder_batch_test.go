package feed

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"
)

// manualClock's timers fire only when the test fires them.
type manualClock struct {
	mu     sync.Mutex
	timers []manualTimer
}

type manualTimer struct {
	d time.Duration
	c chan time.Time
}

func (m *manualClock) After(d time.Duration) <-chan time.Time {
	c := make(chan time.Time, 1)
	m.mu.Lock()
	m.timers = append(m.timers, manualTimer{d, c})
	m.mu.Unlock()
	return c
}

// fire fires every pending timer of duration d.
func (m *manualClock) fire(d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.timers = slices.DeleteFunc(m.timers, func(t manualTimer) bool {
		if t.d == d {
			t.c <- time.Time{}
		}
		return t.d == d
	})
}

// TestFeederBatchTiming drives the batch rules with timers that fire only
// when told: with nothing in flight, operations put one by one wait until
// Quiet passes and then go as one batch; with a batch in flight, Quiet
// does not apply and a partial batch waits for BatchDelay; a full batch
// goes at once.
func TestFeederBatchTiming(t *testing.T) {
	ob, err := OpenOutbox(t.TempDir(), OutboxOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ob.Close()
	rec := newRecorder()
	clk := &manualClock{}
	const quiet, delay = time.Minute, time.Hour
	f, err := NewFeeder(ob, []Target{{Name: "d", Collection: "c"}}, rec.dial,
		FeederOptions{BatchOps: 100, BatchDelay: delay, Quiet: quiet, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	runFeeder(t, f)
	n := 0
	feed := func(k int, together bool) {
		t.Helper()
		var ops []Operation
		for range k {
			ops = append(ops, Operation{Kind: Add, URI: fmt.Sprint("u", n)})
			n++
			if !together {
				if err := f.Feed(context.Background(), ops...); err != nil {
					t.Fatal(err)
				}
				ops = nil
			}
		}
		if err := f.Feed(context.Background(), ops...); err != nil {
			t.Fatal(err)
		}
	}
	sizes := func() []int {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		return slices.Clone(rec.sizes["d"])
	}
	nothingSent := func(want []int) {
		t.Helper()
		time.Sleep(50 * time.Millisecond)
		if got := sizes(); !slices.Equal(got, want) {
			t.Fatalf("batches %v, want %v", got, want)
		}
	}
	sentAfter := func(d time.Duration, want []int) {
		t.Helper()
		waitFor(t, fmt.Sprintf("batches %v", want), func() bool {
			clk.fire(d)
			return len(sizes()) >= len(want)
		})
		if got := sizes(); !slices.Equal(got, want) {
			t.Fatalf("batches %v, want %v", got, want)
		}
	}

	feed(10, false)
	nothingSent(nil)
	sentAfter(quiet, []int{10})

	rec.mu.Lock()
	rec.hold = true
	rec.mu.Unlock()
	feed(1, false)
	sentAfter(quiet, []int{10, 1}) // held: in flight
	feed(5, false)
	clk.fire(quiet)
	nothingSent([]int{10, 1})
	sentAfter(delay, []int{10, 1, 5})

	feed(100, true)
	waitFor(t, "a full batch", func() bool { return len(sizes()) == 4 })
	if got := sizes(); got[3] != 100 {
		t.Errorf("batches %v, want a full one of 100 last", got)
	}
	for rec.releaseOne() {
	}
}
