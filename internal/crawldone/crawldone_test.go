package crawldone

import (
	"context"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/loop"
)

func TestCheck(t *testing.T) {
	ctx := context.Background()
	t0 := time.Unix(1000, 0)
	var s [2]loop.Stats
	idle, started := true, true
	c := &Checker{Settle: time.Second, Idle: func(context.Context) bool { return idle },
		Loops: []func() (loop.Stats, bool){
			func() (loop.Stats, bool) { return s[0], started },
			func() (loop.Stats, bool) { return s[1], started },
		}}
	// Not started: not complete, however long.
	started = false
	if c.Check(ctx, t0) || c.Check(ctx, t0.Add(time.Hour)) {
		t.Fatal("complete before the loops started")
	}
	started = true
	// A message sent by the first loop, not yet handled by the second.
	s[0].Sent, s[1].Received = 5, 4
	if c.Check(ctx, t0) {
		t.Fatal("complete with a message in flight")
	}
	// Handled: complete at once, not by the fallback.
	s[1].Received = 5
	if !c.Check(ctx, t0.Add(10*time.Millisecond)) || c.Fallback() {
		t.Fatalf("not complete exactly (fallback %v)", c.Fallback())
	}
	// A job running: not complete.
	s[0].Submitted = 1
	if c.Check(ctx, t0) {
		t.Fatal("complete with a job running")
	}
	s[0].Done = 1
	// Work queued: not complete.
	idle = false
	if c.Check(ctx, t0) {
		t.Fatal("complete with work queued")
	}
	// A counter moving while Idle is read: not complete.
	idle = true
	c.Idle = func(context.Context) bool { s[0].Sent++; s[1].Received++; return true }
	if c.Check(ctx, t0) {
		t.Fatal("complete while messages moved")
	}
}

func TestCheckFallback(t *testing.T) {
	ctx := context.Background()
	t0 := time.Unix(1000, 0)
	lost := loop.Stats{Sent: 3, Received: 2} // a message lost with its connection
	c := &Checker{Settle: time.Second, Idle: func(context.Context) bool { return true },
		Loops: []func() (loop.Stats, bool){func() (loop.Stats, bool) { return lost, true }}}
	if c.Check(ctx, t0) || c.Check(ctx, t0.Add(999*time.Millisecond)) {
		t.Fatal("complete before the settle time")
	}
	if !c.Check(ctx, t0.Add(time.Second)) || !c.Fallback() {
		t.Fatalf("not complete by the fallback after the settle time (fallback %v)", c.Fallback())
	}
	c = &Checker{Idle: c.Idle, Loops: c.Loops} // no fallback
	if c.Check(ctx, t0) || c.Check(ctx, t0.Add(time.Hour)) {
		t.Fatal("complete without a fallback")
	}
}
