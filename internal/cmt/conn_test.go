package cmt

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/trawl/trawl/internal/marshal"
	"github.com/trawl/trawl/internal/testenv"
)

// tcpPair returns the two ends of a real TCP connection on 127.0.0.1.
func tcpPair(t *testing.T) (net.Conn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	type res struct {
		c   net.Conn
		err error
	}
	ch := make(chan res, 1)
	go func() {
		c, err := ln.Accept()
		ch <- res{c, err}
	}()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	r := <-ch
	if r.err != nil {
		t.Fatal(r.err)
	}
	t.Cleanup(func() { client.Close(); r.c.Close() })
	return client, r.c
}

// running is a Conn whose Run goes on in the background.
type running struct {
	t      *testing.T
	cancel context.CancelFunc
	done   chan struct{}
	err    error
}

// runConn runs c in the background until the test ends.
func runConn(t *testing.T, c *Conn) *running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{t: t, cancel: cancel, done: make(chan struct{})}
	go func() {
		r.err = c.Run(ctx)
		close(r.done)
	}()
	t.Cleanup(func() { r.stop() })
	return r
}

// wait returns Run's result, failing if it does not come.
func (r *running) wait() error {
	r.t.Helper()
	select {
	case <-r.done:
		return r.err
	case <-time.After(10 * time.Second):
		r.t.Fatal("Run did not return")
		return nil
	}
}

// stop cancels Run's context and returns its result.
func (r *running) stop() error {
	r.cancel()
	return r.wait()
}

// recv returns the next frame from c, failing after a deadline.
func recv(t *testing.T, c *Conn) Frame {
	t.Helper()
	select {
	case f, ok := <-c.Incoming():
		if !ok {
			t.Fatal("Incoming closed")
		}
		return f
	case <-time.After(10 * time.Second):
		t.Fatal("no message")
		return Frame{}
	}
}

func TestConnPriorityOrder(t *testing.T) {
	a, b := tcpPair(t)
	sender := NewConn(a, ConnConfig{Name: "sender"})
	receiver := NewConn(b, ConnConfig{Name: "receiver"})
	ctx := context.Background()
	// Queue before the writer runs: normal 0..9 interleaved with high
	// 100..104.
	for i := range 10 {
		if err := sender.Send(ctx, &UMLog{Collection: "c", File: LogSite, Text: fmt.Sprint(i)}, PriorityNormal); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			if err := sender.Send(ctx, &UMLog{Collection: "c", File: LogSite, Text: fmt.Sprint(100 + i/2)}, PriorityHigh); err != nil {
				t.Fatal(err)
			}
		}
	}
	runConn(t, receiver)
	runConn(t, sender)
	var got []string
	for range 15 {
		f := recv(t, receiver)
		got = append(got, fmt.Sprintf("%d:%s", f.Priority, f.Message.(*UMLog).Text))
	}
	want := strings.Fields("1:100 1:101 1:102 1:103 1:104 0:0 0:1 0:2 0:3 0:4 0:5 0:6 0:7 0:8 0:9")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
}

func TestConnSkipsUnknownAndMalformed(t *testing.T) {
	raw, b := tcpPair(t)
	logs := &testenv.Buffer{}
	receiver := NewConn(b, ConnConfig{Name: "peer1", Logger: slog.New(slog.NewTextHandler(logs, nil))})
	runConn(t, receiver)

	unknown, err := marshal.Encode(marshal.Tuple{marshal.Dict{{Key: marshal.Str("cm"), Value: marshal.Int(42)}}, marshal.Int(0)})
	if err != nil {
		t.Fatal(err)
	}
	var stream []byte
	stream = append(stream, header(uint32(len(unknown)))...)
	stream = append(stream, unknown...)
	stream = append(stream, header(3)...)
	stream = append(stream, "xyz"...)
	stream, _ = AppendFrame(stream, &UMKeepalive{}, PriorityHigh)
	if _, err := raw.Write(stream); err != nil {
		t.Fatal(err)
	}
	f := recv(t, receiver)
	if diff := cmp.Diff(Frame{PriorityHigh, &UMKeepalive{}}, f); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if s := receiver.Stats(); s.Skipped != 2 || s.Received != 1 {
		t.Errorf("stats %+v", s)
	}
	out := logs.String()
	if !strings.Contains(out, "unknown command") || !strings.Contains(out, "code=42") || !strings.Contains(out, "peer=peer1") {
		t.Errorf("log lacks the unknown command:\n%s", out)
	}
	if !strings.Contains(out, "malformed message") {
		t.Errorf("log lacks the malformed message:\n%s", out)
	}
}

func TestConnOversizedFrameCloses(t *testing.T) {
	raw, b := tcpPair(t)
	receiver := NewConn(b, ConnConfig{MaxFrame: 1024})
	run := runConn(t, receiver)
	frame, _ := AppendFrame(nil, &UMKeepalive{}, PriorityNormal)
	frame = append(frame, header(1025)...)
	if _, err := raw.Write(frame); err != nil {
		t.Fatal(err)
	}
	recv(t, receiver)
	err := run.wait()
	if !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("Run: %v, want ErrFrameTooLarge", err)
	}
	if _, ok := <-receiver.Incoming(); ok {
		t.Error("Incoming not closed")
	}
	// The connection is closed: the peer sees EOF.
	raw.SetReadDeadline(time.Now().Add(10 * time.Second))
	if n, err := raw.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("peer read: %d, %v, want EOF", n, err)
	}
	if err := receiver.Send(context.Background(), &UMKeepalive{}, 0); !errors.Is(err, ErrClosed) {
		t.Errorf("Send after close: %v", err)
	}
}

func TestConnCancel(t *testing.T) {
	a, b := tcpPair(t)
	c := NewConn(a, ConnConfig{})
	peer := NewConn(b, ConnConfig{})
	run := runConn(t, c)
	peerRun := runConn(t, peer)
	if err := c.Send(context.Background(), &UMKeepalive{}, 0); err != nil {
		t.Fatal(err)
	}
	recv(t, peer)
	if err := run.stop(); err != nil {
		t.Fatalf("Run after cancel: %v", err)
	}
	if _, ok := <-c.Incoming(); ok {
		t.Error("Incoming not closed")
	}
	if err := c.TrySend(&UMKeepalive{}, 0); !errors.Is(err, ErrClosed) {
		t.Errorf("TrySend after cancel: %v", err)
	}
	// The peer sees the connection end.
	if err := peerRun.wait(); !errors.Is(err, io.EOF) {
		t.Errorf("peer Run: %v, want EOF", err)
	}
}

func TestConnCloseBeforeRun(t *testing.T) {
	a, _ := tcpPair(t)
	c := NewConn(a, ConnConfig{})
	c.Close()
	if err := c.Run(context.Background()); err != nil {
		t.Errorf("Run: %v", err)
	}
	if err := c.Run(context.Background()); err == nil {
		t.Error("second Run accepted")
	}
}

func TestConnQueueBounds(t *testing.T) {
	a, _ := tcpPair(t)
	c := NewConn(a, ConnConfig{SendQueue: 2, MaxFrame: 100})
	for range 2 {
		if err := c.TrySend(&UMKeepalive{}, PriorityNormal); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.TrySend(&UMKeepalive{}, PriorityNormal); !errors.Is(err, ErrQueueFull) {
		t.Errorf("TrySend on a full queue: %v", err)
	}
	// The high-priority queue is separate.
	if err := c.TrySend(&UMKeepalive{}, PriorityHigh); err != nil {
		t.Errorf("TrySend high: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.Send(ctx, &UMKeepalive{}, PriorityNormal); !errors.Is(err, context.Canceled) {
		t.Errorf("Send on a full queue: %v", err)
	}
	if err := c.TrySend(&UMLog{Text: strings.Repeat("x", 100)}, PriorityHigh); !errors.Is(err, ErrFrameTooLarge) {
		t.Errorf("TrySend too large: %v", err)
	}
	if err := c.TrySend(&UMKeepalive{}, 7); err == nil {
		t.Error("priority 7 accepted")
	}
}

// Both ends send and receive at once from several goroutines: run with
// -race.
func TestConnConcurrent(t *testing.T) {
	for _, transport := range []string{"tcp", "pipe"} {
		t.Run(transport, func(t *testing.T) {
			var a, b *Conn
			if transport == "tcp" {
				ca, cb := tcpPair(t)
				a, b = NewConn(ca, ConnConfig{SendQueue: 16}), NewConn(cb, ConnConfig{SendQueue: 16, RecvQueue: 4})
			} else {
				a, b = Pipe(ConnConfig{SendQueue: 16}, ConnConfig{SendQueue: 16, RecvQueue: 4})
			}
			runConn(t, a)
			runConn(t, b)
			const senders, each = 4, 500
			ctx := context.Background()
			var wg sync.WaitGroup
			for _, c := range []*Conn{a, b} {
				for s := range senders {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for i := range each {
							e := sampleEntry()
							e.Cycle = int64(s*each + i)
							p := Priority(i % 2)
							if err := c.Send(ctx, &UMURI{Collection: fmt.Sprint(s), Entry: e}, p); err != nil {
								t.Error(err)
								return
							}
						}
					}()
				}
			}
			// Per sender and priority, messages arrive in order.
			check := func(c *Conn) {
				defer wg.Done()
				next := map[string]int64{}
				for range senders * each {
					f := recv(t, c)
					m := f.Message.(*UMURI)
					key := fmt.Sprintf("%s/%d", m.Collection, f.Priority)
					if m.Entry.Cycle < next[key] {
						t.Errorf("%s: %d after %d", key, m.Entry.Cycle, next[key])
					}
					next[key] = m.Entry.Cycle
				}
			}
			wg.Add(2)
			go check(a)
			go check(b)
			wg.Wait()
			if s := a.Stats(); s.Sent != senders*each || s.Received != senders*each {
				t.Errorf("stats a %+v", s)
			}
		})
	}
}

func TestMemNetwork(t *testing.T) {
	var n MemNetwork
	ln, err := n.Listen("mns")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.Listen("mns"); err == nil {
		t.Error("address taken twice")
	}
	if ln.Addr().String() != "mns" || ln.Addr().Network() != "mem" {
		t.Errorf("addr %v", ln.Addr())
	}
	var d Dialer = &n
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			t.Error(err)
		}
		accepted <- c
	}()
	cc, err := d.DialContext(context.Background(), "mem", "mns")
	if err != nil {
		t.Fatal(err)
	}
	client := NewConn(cc, ConnConfig{})
	server := NewConn(<-accepted, ConnConfig{})
	runConn(t, client)
	runConn(t, server)
	init := &UMInit{NodeID: "n1", AdminHost: "localhost", AdminPort: 13000}
	if err := client.Send(context.Background(), init, PriorityHigh); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Frame{PriorityHigh, init}, recv(t, server)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	ln.Close()
	if _, err := ln.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Accept after Close: %v", err)
	}
	if _, err := d.DialContext(context.Background(), "mem", "mns"); !errors.Is(err, ErrNoListener) {
		t.Errorf("dial closed listener: %v", err)
	}
	if _, err := n.Listen("mns"); err != nil {
		t.Errorf("listen again: %v", err)
	}
}
