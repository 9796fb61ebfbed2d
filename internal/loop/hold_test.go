package loop

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// burster answers "burst N" with N numbered messages and records the
// Blocked and Unblocked events it is told.
type burster struct {
	Base[string]
	mu     sync.Mutex
	events []string
}

func (b *burster) Step(ev Event[string]) {
	switch ev.Kind {
	case Received:
		var n int
		fmt.Sscanf(ev.Msg, "burst %d", &n)
		for i := 1; i <= n; i++ {
			b.Pending.Send(ev.Peer, fmt.Sprintf("m%d", i), 0)
		}
	case Blocked, Unblocked:
		b.mu.Lock()
		b.events = append(b.events, ev.Kind.String())
		b.mu.Unlock()
	}
}

func (b *burster) seen() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Join(b.events, " ")
}

func TestDriverHoldsFullPeer(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := NewNetwork[string](1) // 3 messages in flight fill a link
	l, _ := n.Host("s").Listen("s")
	m := &burster{}
	d := New(Config[string]{Machine: m, Listeners: map[string]Listener[string]{"c": l},
		Hold: &HoldConfig{Retry: time.Millisecond}})
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	c, err := n.Host("c").Dial(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	c.TrySend("burst 20", 0)
	deadline := time.Now().Add(5 * time.Second)
	for m.seen() != "blocked" && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if m.seen() != "blocked" {
		t.Fatalf("events %q, want blocked", m.seen())
	}
	// The peer reads now: everything arrives, in order, and the machine
	// is told the peer has room again.
	cl := runClient(t, ctx, c)
	for i := 1; i <= 20; i++ {
		cl.want(t, fmt.Sprintf("m%d", i))
	}
	for m.seen() != "blocked unblocked" && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if m.seen() != "blocked unblocked" {
		t.Fatalf("events %q", m.seen())
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestDriverClosesPeerFullTooLong(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := NewNetwork[string](1)
	l, _ := n.Host("s").Listen("s")
	m := &burster{}
	var logs strings.Builder
	var mu sync.Mutex
	d := New(Config[string]{Machine: m, Listeners: map[string]Listener[string]{"c": l},
		Hold:   &HoldConfig{Retry: time.Millisecond, Timeout: 20 * time.Millisecond},
		Logger: slogTo(&mu, &logs)})
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	c, err := n.Host("c").Dial(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	c.TrySend("burst 10", 0)
	// Never read: the driver gives the peer up.
	deadline := time.Now().Add(5 * time.Second)
	for {
		if err := c.TrySend("x", 0); err == ErrClosed {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a peer that never reads was kept")
		}
		time.Sleep(time.Millisecond)
	}
	mu.Lock()
	out := logs.String()
	mu.Unlock()
	if !strings.Contains(out, `reason="send queue full too long"`) {
		t.Fatalf("log: %s", out)
	}
	cancel()
	<-done
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *strings.Builder
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func slogTo(mu *sync.Mutex, w *strings.Builder) *slog.Logger {
	return slog.New(slog.NewTextHandler(lockedWriter{mu, w}, nil))
}

func TestDoReturnsAfterTheBatchIsApplied(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st := &recStorage{}
	m := newEcho()
	d := New(Config[string]{Machine: m, Storage: st})
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	for i := range 20 {
		rec := fmt.Sprintf("r%d", i)
		if err := d.Do(ctx, func(time.Time) { m.Pending.Persist = append(m.Pending.Persist, rec) }); err != nil {
			t.Fatal(err)
		}
		if !st.has(rec) {
			t.Fatalf("Do returned before %s was persisted", rec)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// A Do whose context ends leaves no function behind: either the loop
// never runs it or it has returned before Do does, so the variables it
// writes can be read after Do whatever it returned (run under -race).
func TestDoGivenUpNeverRunsLater(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m := newEcho()
	d := New(Config[string]{Machine: m})
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	if err := d.Do(ctx, func(time.Time) {}); err != nil {
		t.Fatal(err)
	}
	// The loop is busy in a first call while a second is queued behind
	// it; the second's caller gives up: it must never run.
	release := make(chan struct{})
	busy := make(chan struct{})
	first := make(chan error, 1)
	go func() { first <- d.Do(ctx, func(time.Time) { close(busy); <-release }) }()
	<-busy
	qctx, qcancel := context.WithTimeout(ctx, 50*time.Millisecond)
	ran := false
	err := d.Do(qctx, func(time.Time) { ran = true })
	qcancel()
	if err == nil || ran {
		t.Fatalf("a call given up while queued: err %v, ran %v", err, ran)
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	// A call the loop is running when its caller gives up: Do waits for
	// it to return, so what it wrote is there (and read without a race).
	rctx, rcancel := context.WithCancel(ctx)
	n := 0
	err = d.Do(rctx, func(time.Time) {
		rcancel()
		time.Sleep(20 * time.Millisecond)
		n = 1
	})
	if n != 1 {
		t.Fatalf("Do returned (%v) before the running call did", err)
	}
	// After all that the loop still serves calls; the abandoned call
	// never ran in between.
	if err := d.Do(ctx, func(time.Time) {}); err != nil || ran {
		t.Fatalf("err %v, abandoned call ran %v", err, ran)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// dropper sends "burst N" as N droppable messages.
type dropper struct{ Base[string] }

func (d *dropper) Step(ev Event[string]) {
	if ev.Kind != Received {
		return
	}
	var n int
	fmt.Sscanf(ev.Msg, "burst %d", &n)
	for i := 1; i <= n; i++ {
		d.Pending.Out = append(d.Pending.Out, Envelope[string]{To: ev.Peer, Msg: fmt.Sprintf("m%d", i), Droppable: true})
	}
}

func TestDriverDropsDroppable(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := NewNetwork[string](1) // 3 messages in flight fill a link
	l, _ := n.Host("s").Listen("s")
	d := New(Config[string]{Machine: &dropper{}, Listeners: map[string]Listener[string]{"c": l}})
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	c, err := n.Host("c").Dial(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	c.TrySend("burst 10", 0)
	deadline := time.Now().Add(5 * time.Second)
	for d.Stats().Dropped == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	// Some went out, the rest were dropped, and the peer was kept.
	cl := runClient(t, ctx, c)
	cl.want(t, "m1")
	if s := d.Stats(); s.Dropped == 0 || s.Sent+s.Dropped != 10 || s.SendFailures != 0 {
		t.Fatalf("stats %+v", s)
	}
	if err := c.TrySend("x", 0); err != nil {
		t.Fatalf("the connection was closed: %v", err)
	}
	cancel()
	<-done
}
