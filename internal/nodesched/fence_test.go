package nodesched

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"
)

// TestFailoverDialerAfterRefusal: a peer that closes a link at once (a
// replica not ready to be promoted, a fenced duplicate server without its
// replica) makes the next dial start at the next address, even when the
// redial backoff waited more than a second after that link ended.
func TestFailoverDialerAfterRefusal(t *testing.T) {
	refusing, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer refusing.Close()
	var refused atomic.Int32
	go func() {
		for {
			c, err := refusing.Accept()
			if err != nil {
				return
			}
			refused.Add(1)
			c.Close()
		}
	}()
	holding, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer holding.Close()
	held := make(chan net.Conn, 4)
	go func() {
		for {
			c, err := holding.Accept()
			if err != nil {
				return
			}
			held <- c
		}
	}()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dial := FailoverDialer([]string{refusing.Addr().String(), holding.Addr().String()}, "dupserver", "", nil, nil)
	c1, err := dial(ctx)
	if err != nil {
		t.Fatal(err)
	}
	go c1.Run(ctx)
	<-c1.Done()
	if refused.Load() != 1 {
		t.Fatalf("first dial: %d connections at the first address, want 1", refused.Load())
	}
	time.Sleep(1200 * time.Millisecond) // a redial backoff longer than a second
	c2, err := dial(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	select {
	case c := <-held:
		c.Close()
	case <-time.After(5 * time.Second):
		t.Errorf("after a refused link the dialer went back to the first address (%d connections there), not to the next one", refused.Load())
	}
}
