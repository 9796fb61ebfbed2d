package dupserver

import (
	"context"
	"fmt"
	"net"
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/trawl/trawl/internal/cmt"
)

// fakeNS is a node scheduler: a cmt.Conn over a real connection.
type fakeNS struct {
	t    *testing.T
	conn *cmt.Conn
}

func dialNS(t *testing.T, ctx context.Context, addr string) *fakeNS {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	return runNS(t, ctx, cmt.NewConn(nc, cmt.ConnConfig{}))
}

func runNS(t *testing.T, ctx context.Context, c *cmt.Conn) *fakeNS {
	go c.Run(ctx)
	t.Cleanup(func() { c.Close() })
	return &fakeNS{t: t, conn: c}
}

func (n *fakeNS) send(m cmt.Message) {
	n.t.Helper()
	if err := n.conn.Send(context.Background(), m, cmt.DefaultPriority(m.Code())); err != nil {
		n.t.Fatal(err)
	}
}

// next returns the next message that is not a keep-alive.
func (n *fakeNS) next() cmt.Message {
	n.t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case f, ok := <-n.conn.Incoming():
			if !ok {
				n.t.Fatal("connection closed")
			}
			if _, ka := f.Message.(*cmt.PPDUPKeepalive); ka {
				continue
			}
			return f.Message
		case <-deadline:
			n.t.Fatal("no message within 10 s")
		}
	}
}

func (n *fakeNS) expect(want cmt.Message) {
	n.t.Helper()
	if diff := cmp.Diff(want, n.next()); diff != "" {
		n.t.Fatalf("message (-want +got):\n%s", diff)
	}
}

func listen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// start runs s until the test ends and checks that Run returned nil.
func start(t *testing.T, s *Server) (addr string, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- s.Run(ctx) }()
	a := s.Addr(ctx)
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-errc:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("Run did not return within 10 s")
		}
	}
	t.Cleanup(stop)
	if a == nil {
		return "", stop
	}
	return a.String(), stop
}

func TestServerTCP(t *testing.T) {
	st, err := OpenPebble(t.TempDir(), PebbleOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	addr, stop := start(t, &Server{Listener: listen(t), Store: st, NodeID: "ds-1"})
	defer stop()
	ctx := t.Context()
	a, b := dialNS(t, ctx, addr), dialNS(t, ctx, addr)

	a.send(setConfig("example", 1))
	a.expect(&cmt.PPDUPConfigAck{VClock: 1})
	b.send(setConfig("example", 1))
	b.expect(&cmt.PPDUPConfigAck{VClock: 1})

	cs := csum("<html>same</html>")
	addA := add("example", "node-a", "http://a.example/", cs)
	a.send(addA)
	a.expect(addOK(0, addA, addA.URI).Msg)
	addB := add("example", "node-b", "http://b.example/copy", cs)
	b.send(addB)
	b.expect(addOK(0, addB, addA.URI).Msg) // the first owner

	rm := remove("example", "node-a", addA.URI, cs)
	a.send(rm)
	a.expect(&cmt.PPDUPPromoteReq{Collection: "example", Checksum: cs})
	a.expect(removeOK(0, rm).Msg)
	b.expect(&cmt.PPDUPPromoteReq{Collection: "example", Checksum: cs})

	a.send(&cmt.PPDUPKeepalive{})
	a.expect(&cmt.PPDUPKeepaliveAck{})
	a.send(add("example", "node-a", "", cs)) // an empty id or zero checksum would not even encode
	if e, ok := a.next().(*cmt.PPDUPError); !ok || e.Collection != "example" {
		t.Fatalf("want PPDUP_ERROR, got %#v", e)
	}
}

// pollEqual waits until the two stores hold the same mappings.
func pollEqual(t *testing.T, a, b Store, min int) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		da, db := dump(t, a), dump(t, b)
		if len(da) >= min && reflect.DeepEqual(da, db) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("stores differ after 15 s: %d vs %d mappings:\n%s", len(da), len(db), cmp.Diff(da, db))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestServerWithReplicaTCP(t *testing.T) {
	dsSt, err := OpenPebble(t.TempDir(), PebbleOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer dsSt.Close()
	rSt, err := OpenPebble(t.TempDir(), PebbleOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer rSt.Close()

	// The replica's address is known before it runs: the duplicate server
	// starts first and must answer while the replica is unreachable.
	rln := listen(t)
	raddr := rln.Addr().String()
	rln.Close()
	dsAddr, stopDS := start(t, &Server{Listener: listen(t), Store: dsSt, NodeID: "ds-1", Replica: raddr})
	ctx := t.Context()
	ns := dialNS(t, ctx, dsAddr)
	ns.send(setConfig("example", 1))
	ns.expect(&cmt.PPDUPConfigAck{VClock: 1})
	early := add("example", "n1", "http://early/", csum("early"))
	ns.send(early)
	ns.expect(addOK(0, early, early.URI).Msg) // answered without the replica

	rln2, err := net.Listen("tcp", raddr)
	if err != nil {
		t.Fatalf("reuse of the replica port: %v", err)
	}
	_, stopR := start(t, &Server{Listener: rln2, Store: rSt, ReplicaMode: true})

	const n = 200
	for i := range n {
		m := add("example", "n1", fmt.Sprintf("http://a/%d", i), csum(fmt.Sprint(i)))
		ns.send(m)
	}
	for range n {
		if _, ok := ns.next().(*cmt.PPDUPAddOK); !ok {
			t.Fatal("want ADD_OK")
		}
	}
	for i := 0; i < n; i += 10 {
		ns.send(remove("example", "n1", fmt.Sprintf("http://a/%d", i), csum(fmt.Sprint(i))))
	}
	for removed := 0; removed < n/10; {
		if _, ok := ns.next().(*cmt.PPDUPRemoveOK); ok {
			removed++
		}
	}
	pollEqual(t, dsSt, rSt, n-n/10+1)

	// Replica down: the duplicate server keeps answering; the changes reach
	// the replica when it is back.
	stopR()
	late := add("example", "n1", "http://late/", csum("late"))
	ns.send(late)
	ns.expect(addOK(0, late, late.URI).Msg)
	rln3, err := net.Listen("tcp", raddr)
	if err != nil {
		t.Fatalf("reuse of the replica port: %v", err)
	}
	_, stopR2 := start(t, &Server{Listener: rln3, Store: rSt, ReplicaMode: true})
	pollEqual(t, dsSt, rSt, n-n/10+2)
	stopR2()
	stopDS()
}

// A replica that accepts the connection but never answers must not hold up
// the node schedulers for longer than the replica timeout.
func TestServerReplicaHung(t *testing.T) {
	rln := listen(t)
	defer rln.Close()
	go func() {
		for {
			c, err := rln.Accept()
			if err != nil {
				return
			}
			defer c.Close() // read nothing, answer nothing
		}
	}()
	logs := &logBuffer{}
	addr, stop := start(t, &Server{Listener: listen(t), NodeID: "ds-1", Replica: rln.Addr().String(),
		ReplicaTimeout: 300 * time.Millisecond, TickInterval: 50 * time.Millisecond, Logger: logs.logger()})
	defer stop()
	ns := dialNS(t, t.Context(), addr)
	// Wait until the replica link is up, so the ADD is forwarded.
	deadline := time.Now().Add(10 * time.Second)
	for !logs.contains("replica connected") {
		if time.Now().After(deadline) {
			t.Fatal("replica never connected")
		}
		time.Sleep(10 * time.Millisecond)
	}
	m := add("c", "n", "http://x/", csum("x"))
	began := time.Now()
	ns.send(m)
	ns.expect(addOK(0, m, m.URI).Msg)
	if d := time.Since(began); d > 5*time.Second {
		t.Fatalf("answer took %s", d)
	}
	if !logs.contains("replica lost") {
		t.Errorf("replica loss not logged:\n%s", logs)
	}
}

// The in-process path of `trawl run`: node schedulers attach through
// in-memory pipes (Serve) and the replica is reached through a MemNetwork.
func TestServerInMemory(t *testing.T) {
	var mem cmt.MemNetwork
	rln, err := mem.Listen("replica")
	if err != nil {
		t.Fatal(err)
	}
	dsSt, rSt := NewMemStore(), NewMemStore()
	_, stopR := start(t, &Server{Listener: rln, Store: rSt, ReplicaMode: true})
	defer stopR()
	ds := &Server{Store: dsSt, NodeID: "ds-1", Replica: "replica", Dialer: &mem}
	_, stopDS := start(t, ds)
	defer stopDS()

	nsEnd, dsEnd := cmt.Pipe(cmt.ConnConfig{}, cmt.ConnConfig{})
	go ds.Serve(t.Context(), dsEnd)
	ns := runNS(t, t.Context(), nsEnd)
	for i := range 20 {
		m := add("c", "n", fmt.Sprintf("http://%d/", i), csum(fmt.Sprint(i)))
		ns.send(m)
		ns.expect(addOK(0, m, m.URI).Msg)
	}
	pollEqual(t, dsSt, rSt, 20)
}

func listenB(b *testing.B) net.Listener {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	return ln
}

func dialB(b *testing.B, ctx context.Context, addr string) *cmt.Conn {
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	c := cmt.NewConn(nc, cmt.ConnConfig{})
	go c.Run(ctx)
	b.Cleanup(func() { c.Close() })
	return c
}
