package loop

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/cmt"
)

func TestRedialBackoff(t *testing.T) {
	t0 := time.Unix(0, 0)
	r := &Redial[string]{Tag: "up", Addr: "peer:1", Name: "test: upstream"}
	var b Batch[string]
	r.Start(&b)
	if len(b.Dial) != 1 || b.Dial[0] != (DialReq{Tag: "up", Addr: "peer:1"}) {
		t.Fatalf("start: %+v", b.Dial)
	}
	// Failed dials wait 100 ms, 200 ms, 400 ms ... up to Max.
	now := t0
	for i, want := range []time.Duration{100, 200, 400} {
		b = Batch[string]{}
		r.Step(Event[string]{Kind: DialFailed, Tag: "up", Now: now, Err: errors.New("refused")}, &b)
		if got := b.Wake.Sub(now); got != want*time.Millisecond {
			t.Fatalf("failure %d: wake in %v, want %v", i+1, got, want*time.Millisecond)
		}
		b = Batch[string]{}
		r.Step(Event[string]{Kind: Tick, Now: now.Add(want*time.Millisecond - 1)}, &b)
		if len(b.Dial) != 0 {
			t.Fatalf("failure %d: redialled before the backoff ended", i+1)
		}
		now = now.Add(want * time.Millisecond)
		r.Step(Event[string]{Kind: Tick, Now: now}, &b)
		if len(b.Dial) != 1 {
			t.Fatalf("failure %d: no redial after the backoff", i+1)
		}
	}
	// Up: a second dial is never asked for while it is.
	b = Batch[string]{}
	r.Step(Event[string]{Kind: Connected, Tag: "up", Peer: 7, Now: now}, &b)
	r.Step(Event[string]{Kind: Tick, Now: now.Add(time.Hour)}, &b)
	if r.Peer() != 7 || len(b.Dial) != 0 {
		t.Fatalf("peer %d, dials %+v", r.Peer(), b.Dial)
	}
	// A connection that lived long is redialled at once, with the backoff
	// reset; one that died young waits.
	now = now.Add(time.Hour)
	r.Step(Event[string]{Kind: Closed, Peer: 7, Now: now}, &b)
	if r.Peer() != 0 || len(b.Dial) != 1 {
		t.Fatalf("after a long connection: peer %d, dials %+v", r.Peer(), b.Dial)
	}
	b = Batch[string]{}
	r.Step(Event[string]{Kind: Connected, Tag: "up", Peer: 8, Now: now}, &b)
	r.Step(Event[string]{Kind: Closed, Peer: 8, Now: now.Add(10 * time.Millisecond)}, &b)
	if len(b.Dial) != 0 || b.Wake.Sub(now.Add(10*time.Millisecond)) != 100*time.Millisecond {
		t.Fatalf("after a short connection: dials %+v, wake %v", b.Dial, b.Wake)
	}
	// Other tags and peers are not its business.
	b = Batch[string]{}
	r.Step(Event[string]{Kind: DialFailed, Tag: "other", Now: now}, &b)
	r.Step(Event[string]{Kind: Closed, Peer: 3, Now: now}, &b)
	if !b.Empty() {
		t.Fatalf("foreign events made %+v", b)
	}
}

// dialer is a machine that wants a connection from the start.
type dialer struct {
	Base[string]
	link Redial[string]
	got  chan string
}

func (d *dialer) Step(ev Event[string]) {
	d.link.Step(ev, &d.Pending)
	if ev.Kind == Connected {
		d.Pending.Send(ev.Peer, "hello", 0)
	}
	if ev.Kind == Received {
		d.got <- ev.Msg
	}
}

func TestDriverAppliesInitialBatch(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := NewNetwork[string](16)
	m := &dialer{link: Redial[string]{Tag: "up", Addr: "server:1", Min: 10 * time.Millisecond}, got: make(chan string, 4)}
	m.link.Start(&m.Pending)
	d := New(Config[string]{Machine: m, Dialer: n.Host("client")})
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	// Nobody listens yet: the dial fails and is retried on its backoff.
	time.Sleep(30 * time.Millisecond)
	l, err := n.Host("server").Listen("server:1")
	if err != nil {
		t.Fatal(err)
	}
	c, err := l.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cl := runClient(t, ctx, c)
	cl.want(t, "hello")
	c.TrySend("hi", 0)
	select {
	case m := <-m.got:
		if m != "hi" {
			t.Fatalf("got %q", m)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("nothing came back")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestBatchAppend(t *testing.T) {
	t1, t2 := time.Unix(2, 0), time.Unix(1, 0)
	a := Batch[string]{Persist: []any{1}, Wake: t1}
	a.Send(1, "x", 0)
	b := Batch[string]{Dial: []DialReq{{Tag: "t"}}, Work: []Job{{ID: 1}}, Wake: t2}
	b.Log(0, "l")
	b.Send(2, "y", 0)
	a.Append(b)
	if len(a.Persist) != 1 || len(a.Out) != 2 || a.Out[1].Msg != "y" || len(a.Dial) != 1 || len(a.Work) != 1 ||
		len(a.Logs) != 1 || !a.Wake.Equal(t2) {
		t.Fatalf("%+v", a)
	}
}

func TestCMTListenerAndDialer(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := CMTListener(ln, cmt.ConnConfig{})
	defer l.Close()
	got := make(chan cmt.Message, 1)
	go func() {
		c, err := l.Accept(ctx)
		if err != nil {
			return
		}
		c.Run(ctx, func(m cmt.Message) bool { got <- m; return true })
	}()
	c, err := CMTDialer{Timeout: time.Second}.Dial(ctx, l.Addr())
	if err != nil {
		t.Fatal(err)
	}
	go c.Run(ctx, func(cmt.Message) bool { return true })
	if err := c.TrySend(&cmt.PPDUPKeepalive{}, int(cmt.PriorityNormal)); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-got:
		if _, ok := m.(*cmt.PPDUPKeepalive); !ok {
			t.Fatalf("got %#v", m)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("nothing arrived")
	}
	if _, err := (CMTDialer{Timeout: time.Second}).Dial(ctx, "127.0.0.1:1"); err == nil {
		t.Fatal("dial to a closed port succeeded")
	}
}
