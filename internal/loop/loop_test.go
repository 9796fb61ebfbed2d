package loop

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// echo is a toy machine: "put K" is persisted then answered "ok K"; "job X"
// starts a job whose result is sent back as "done X"; every event is logged
// in seen.
type echo struct {
	Base[string]
	seen   []string
	peers  map[Peer]bool
	nextID uint64
	jobTo  map[uint64]Peer
	ticks  int
}

func newEcho() *echo { return &echo{peers: map[Peer]bool{}, jobTo: map[uint64]Peer{}} }

func (e *echo) Step(ev Event[string]) {
	e.seen = append(e.seen, fmt.Sprintf("%s %s", ev.Kind, ev.Msg))
	switch ev.Kind {
	case Connected:
		e.peers[ev.Peer] = true
	case Closed:
		delete(e.peers, ev.Peer)
	case Tick:
		e.ticks++
	case Received:
		verb, arg, _ := strings.Cut(ev.Msg, " ")
		switch verb {
		case "put":
			e.Pending.Persist = append(e.Pending.Persist, arg)
			e.Pending.Send(ev.Peer, "ok "+arg, 0)
		case "job":
			e.nextID++
			e.jobTo[e.nextID] = ev.Peer
			e.Pending.Work = append(e.Pending.Work, Job{ID: e.nextID, Spec: arg})
		case "bye":
			e.Pending.CloseConn(ev.Peer, "asked to")
		}
	case Result:
		e.Pending.Send(e.jobTo[ev.Job], fmt.Sprintf("done %v", ev.Result), 0)
	}
}

// client collects what arrives on a connection.
type client struct {
	mu  sync.Mutex
	got []string
	ch  chan string
}

func runClient(t *testing.T, ctx context.Context, c Conn[string]) *client {
	cl := &client{ch: make(chan string, 100)}
	go c.Run(ctx, func(m string) bool {
		cl.ch <- m
		return true
	})
	return cl
}

// memServer is an in-memory network with a listener on "server:1".
func memServer(t *testing.T) (*Network[string], Listener[string]) {
	t.Helper()
	n := NewNetwork[string](16)
	l, err := n.Host("server").Listen("server:1")
	if err != nil {
		t.Fatal(err)
	}
	return n, l
}

func (cl *client) want(t *testing.T, want string) {
	t.Helper()
	select {
	case m := <-cl.ch:
		if m != want {
			t.Fatalf("got %q, want %q", m, want)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("no message, want %q", want)
	}
}

func (cl *client) none(t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case m := <-cl.ch:
		t.Fatalf("got %q, want nothing", m)
	case <-time.After(d):
	}
}

type recStorage struct {
	mu   sync.Mutex
	recs []any
}

func (s *recStorage) Apply(_ context.Context, r []any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recs = append(s.recs, r...)
	return nil
}

func (s *recStorage) has(v any) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.recs {
		if r == v {
			return true
		}
	}
	return false
}

func startEcho(t *testing.T, ctx context.Context, ls map[string]Listener[string], st Storage) (*Driver[string], *echo) {
	m := newEcho()
	d := New(Config[string]{Name: "echo", Machine: m, Listeners: ls, Storage: st,
		Worker: WorkerFunc(func(ctx context.Context, spec any) (any, error) { return strings.ToUpper(spec.(string)), nil })})
	errc := make(chan error, 1)
	go func() { errc <- d.Run(ctx) }()
	t.Cleanup(func() {
		if err := <-errc; err != nil {
			t.Errorf("driver: %v", err)
		}
	})
	return d, m
}

func TestDriverInMemory(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n, l := memServer(t)
	st := &recStorage{}
	d, m := startEcho(t, ctx, map[string]Listener[string]{"clients": l}, st)
	c, err := n.Host("client").Dial(ctx, "server:1")
	if err != nil {
		t.Fatal(err)
	}
	cl := runClient(t, ctx, c)

	// Persist before send: when the answer arrives, the record is stored.
	c.TrySend("put a", 0)
	cl.want(t, "ok a")
	if !st.has("a") {
		t.Fatal("answer sent before its record was persisted")
	}
	// A job's result comes back as a Result event.
	c.TrySend("job x", 0)
	cl.want(t, "done X")

	// A partition drops messages silently and refuses dials.
	n.Partition("client", "server")
	c.TrySend("put lost", 0)
	cl.none(t, 50*time.Millisecond)
	if _, err := n.Host("client").Dial(ctx, "server:1"); !errors.Is(err, ErrPartitioned) {
		t.Fatalf("dial across a partition: %v", err)
	}
	n.Heal("client", "server")
	c.TrySend("put b", 0)
	cl.want(t, "ok b")
	if st.has("lost") {
		t.Fatal("a message sent across the partition arrived")
	}

	// Every DropEvery-th message is dropped.
	n.SetFault("client", "server", Fault{DropEvery: 2})
	c.TrySend("put c", 0) // 1st: delivered
	c.TrySend("put d", 0) // 2nd: dropped
	cl.want(t, "ok c")    // the answer is the link's 3rd message: delivered
	cl.none(t, 50*time.Millisecond)
	n.SetFault("client", "server", Fault{Delay: 30 * time.Millisecond})
	start := time.Now()
	c.TrySend("put e", 0)
	cl.want(t, "ok e")
	if el := time.Since(start); el < 60*time.Millisecond {
		t.Fatalf("a delayed round trip took %v, want >= 60ms", el)
	}
	n.SetFault("client", "server", Fault{})

	// Do runs on the loop and sees the machine.
	var peers int
	if err := d.Do(ctx, func(time.Time) { peers = len(m.peers) }); err != nil || peers != 1 {
		t.Fatalf("Do: %v, peers %d", err, peers)
	}
	// Cut closes the connection on both sides.
	if k := n.Cut("client", "server"); k != 1 {
		t.Fatalf("cut %d connections, want 1", k)
	}
	deadline := time.Now().Add(5 * time.Second)
	for peers != 0 && time.Now().Before(deadline) {
		d.Do(ctx, func(time.Time) { peers = len(m.peers) })
	}
	if peers != 0 {
		t.Fatal("the machine never heard of the cut")
	}
	if err := c.TrySend("put f", 0); !errors.Is(err, ErrClosed) {
		t.Fatalf("send on a cut connection: %v", err)
	}
	if s := d.Stats(); s.Records != 4 || s.Jobs != 1 || s.Conns != 1 {
		t.Fatalf("stats %+v", s)
	}
}

// lines is a newline codec for the tests.
type lines struct{}

func (lines) Encode(w *bufio.Writer, m string) error {
	_, err := w.WriteString(m + "\n")
	return err
}

func (lines) Decode(r *bufio.Reader) (string, error) {
	s, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(s, "\n"), nil
}

func TestDriverTCP(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	nl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	st := &recStorage{}
	_, m := startEcho(t, ctx, map[string]Listener[string]{"tcp": NetListener[string](nl, lines{}, StreamConfig{})}, st)
	c, err := NetDialer[string]{Codec: lines{}}.Dial(ctx, nl.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	cl := runClient(t, ctx, c)
	for i := range 100 {
		c.TrySend(fmt.Sprintf("put %d", i), 0)
	}
	for i := range 100 {
		cl.want(t, fmt.Sprintf("ok %d", i))
	}
	c.TrySend("bye", 0)
	// The server closes the connection; the client's Run ends.
	select {
	case m := <-cl.ch:
		t.Fatalf("got %q after bye", m)
	case <-time.After(100 * time.Millisecond):
	}
	_ = m
}

// fakeClock advances only when told.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []fakeTimer
}

type fakeTimer struct {
	at time.Time
	c  chan time.Time
}

func (f *fakeClock) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *fakeClock) Timer(d time.Duration) (<-chan time.Time, func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := make(chan time.Time, 1)
	f.timers = append(f.timers, fakeTimer{at: f.now.Add(d), c: c})
	return c, func() {}
}

func (f *fakeClock) advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(d)
	keep := f.timers[:0]
	for _, t := range f.timers {
		if !t.at.After(f.now) {
			t.c <- f.now
		} else {
			keep = append(keep, t)
		}
	}
	f.timers = keep
}

func TestDriverTicksOnInjectedClock(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clk := &fakeClock{now: time.Unix(1000, 0)}
	m := newEcho()
	d := New(Config[string]{Machine: m, Clock: clk, TickInterval: time.Minute})
	done := make(chan error)
	go func() { done <- d.Run(ctx) }()
	ticks := func() (n int) {
		d.Do(ctx, func(time.Time) { n = m.ticks })
		return n
	}
	if n := ticks(); n != 0 {
		t.Fatalf("%d ticks before the clock moved", n)
	}
	for want := 1; want <= 3; want++ {
		clk.advance(time.Minute)
		deadline := time.Now().Add(5 * time.Second)
		for ticks() < want && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		if n := ticks(); n != want {
			t.Fatalf("%d ticks after %d minutes", n, want)
		}
	}
	if err := d.Inject(ctx, "hello"); err != nil {
		t.Fatal(err)
	}
	var last string
	d.Do(ctx, func(time.Time) { last = m.seen[len(m.seen)-1] })
	if last != "input hello" {
		t.Fatalf("last event %q", last)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestDriverStopsOnStorageError(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := NewNetwork[string](16)
	l, _ := n.Host("s").Listen("s")
	m := newEcho()
	d := New(Config[string]{Machine: m, Listeners: map[string]Listener[string]{"c": l},
		Storage: StorageFunc(func(context.Context, []any) error { return errors.New("disk full") })})
	done := make(chan error)
	go func() { done <- d.Run(ctx) }()
	c, err := n.Host("c").Dial(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	cl := runClient(t, ctx, c)
	c.TrySend("put a", 0)
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "disk full") {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("driver kept running after its storage failed")
	}
	cl.none(t, 50*time.Millisecond) // nothing was sent for the unpersisted record
}
