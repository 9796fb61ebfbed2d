package nameserver

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/distrib/wire"
)

func startServer(t *testing.T, dir, addr string, ping time.Duration) (*Server, func()) {
	t.Helper()
	s, err := NewServer(ServerConfig{Listen: addr, Dir: dir, PingInterval: ping})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	return s, func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestServerOverTCP: bind, resolve, unbind and list over real TCP; garbage
// on the listener closes that connection only; the bindings survive a
// restart; a binding whose object does not answer pings is dropped.
func TestServerOverTCP(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	// An object that answers __ping: a name server itself.
	obj, stopObj := startServer(t, t.TempDir(), "127.0.0.1:0", -1)
	s, stop := startServer(t, dir, "127.0.0.1:0", 100*time.Millisecond)
	addr := s.Addr()
	c := NewClient(addr, &wire.Client{Timeout: 2 * time.Second})
	host, port := splitAddr(t, obj.Addr())
	live := wire.AOR{Name: wire.NameDispatcher, ObjectID: "cd1", Host: host, Port: port, Type: Object, Version: "5.1"}
	if err := c.Bind(ctx, live); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Resolve(ctx, "nope", "t", "1"); !wire.IsException(err, wire.ExcResolve) {
		t.Fatalf("resolve of an unbound name: %v", err)
	}
	// Garbage on the listener.
	g, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	g.Write([]byte("GET / HTTP/1.0\r\n\r\n"))
	buf := make([]byte, 10)
	g.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := g.Read(buf); err == nil {
		t.Errorf("garbage answered with %q", buf[:n])
	}
	g.Close()
	got, err := c.Resolve(ctx, live.Name, live.Type, live.Version)
	if err != nil || got != live {
		t.Fatalf("resolve: %v %v", got, err)
	}
	stop()
	c.C.Close()

	// Restart on the same address: the binding is still there.
	s, stop = startServer(t, dir, addr, 100*time.Millisecond)
	defer stop()
	got, err = c.Resolve(ctx, live.Name, live.Type, live.Version)
	if err != nil || got != live {
		t.Fatalf("resolve after restart: %v %v", got, err)
	}
	// A dead object is dropped after three failed pings; the live one stays.
	dead := wire.AOR{Name: "esp/subsystems/processing/dispatcher/9", ObjectID: "cd9", Host: "127.0.0.1", Port: freePort(t), Type: wire.IfaceDispatcherNode, Version: "5.1"}
	if err := c.Bind(ctx, dead); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the dead binding to go", func() bool {
		l, err := c.List(ctx, "esp/")
		return err == nil && len(l) == 1 && l[0] == live
	})
	stopObj()
	waitFor(t, "the stopped object's binding to go", func() bool {
		l, err := c.List(ctx, "esp/")
		return err == nil && len(l) == 0
	})
}

func splitAddr(t *testing.T, addr string) (string, int) {
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := net.ResolveTCPAddr("tcp", net.JoinHostPort(h, p))
	return h, a.Port
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
