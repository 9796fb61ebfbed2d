package multinode

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/testenv"
)

func TestMachineAcceptsINITWhileOldConnectionCloses(t *testing.T) {
	h := newHarness(t, Config{SkipAskRoute: true}, testSpec(t, "c", ""))
	h.join("n1", true)
	old := h.conn["n1"]
	// A second CMD_UM_INIT on the same connection makes the machine close
	// it; the driver has not reported the end of the connection yet.
	acts := h.recv("n1", &cmt.UMInit{NodeID: "n1"})
	if len(actionsOf[CloseConn](acts)) != 1 {
		t.Fatalf("actions = %+v, want one CloseConn", acts)
	}
	acts = h.join("n1", true)
	if cl := actionsOf[CloseConn](acts); len(cl) != 0 {
		t.Fatalf("new connection closed: %+v", cl)
	}
	nodes := h.m.Nodes()
	if len(nodes) != 1 || nodes[0].NodeID != "n1" || h.m.nodes["n1"] != h.conn["n1"] || h.conn["n1"] == old {
		t.Fatalf("nodes = %+v, registered on conn %d", nodes, h.m.nodes["n1"])
	}
	// The old connection's end, reported late, changes nothing.
	h.m.Disconnect(old, h.now)
	if h.m.nodes["n1"] != h.conn["n1"] {
		t.Fatal("late Disconnect of the old connection unregistered the node")
	}
}

func TestMachineBusyHoldsEntries(t *testing.T) {
	spec := testSpec(t, "c", "")
	h := newHarness(t, Config{SkipAskRoute: true}, spec)
	h.join("n1", true)
	id := h.conn["n1"]
	h.m.SetBusy(id, true, h.now)
	var acts []Action
	for i := range 5 {
		e := entry(t, fmt.Sprintf("http://127.0.0.1/p%d", i))
		acts = append(acts, h.recv("n1", &cmt.UMURI{Collection: "c", Entry: e})...)
	}
	acts = h.resolveAll(acts, nil)
	for _, m := range sent(acts, id) {
		if _, ok := m.(*cmt.UMURI); ok {
			t.Fatalf("entry forwarded to a busy node scheduler: %+v", m)
		}
	}
	acts = h.m.SetBusy(id, false, h.now)
	var got []string
	for _, m := range sent(acts, id) {
		if u, ok := m.(*cmt.UMURI); ok {
			got = append(got, u.Entry.URI.URI)
		}
	}
	want := []string{"http://127.0.0.1/p0", "http://127.0.0.1/p1", "http://127.0.0.1/p2", "http://127.0.0.1/p3", "http://127.0.0.1/p4"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("forwarded after busy = %v, want %v", got, want)
	}
}

func TestServerReconnectAfterServerSideClose(t *testing.T) {
	s, _ := newTestServer(t, "", "", testSpec(t, "c", ""))
	n1 := dialFakeNode(t, s.Addr().String(), "re-node", nil)
	n1.wait("CONF_ADD", isConfAdd("c"))
	// A second CMD_UM_INIT on the same connection: the server closes it.
	n1.send(&cmt.UMInit{NodeID: "re-node"})
	select {
	case <-n1.done:
	case <-time.After(waitTimeout):
		t.Fatal("server did not close the connection")
	}
	// Reconnect at once with the same identifier: accepted.
	n2 := dialFakeNode(t, s.Addr().String(), "re-node", nil)
	n2.wait("CONF_ADD on the new connection", isConfAdd("c"))
	deadline := time.Now().Add(waitTimeout)
	for {
		nodes, err := s.Nodes(context.Background())
		if err == nil && len(nodes) == 1 && nodes[0].NodeID == "re-node" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("nodes = %+v, %v", nodes, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestServerSlowNodeNoDisconnect reproduces the benchmark's failure at
// small scale: a node scheduler sends URIs of many new sites fast while
// it does not read, over a connection whose send queue holds 8 frames.
// The server must not close the connection, and every URI must be
// forwarded once the node reads.
func TestServerSlowNodeNoDisconnect(t *testing.T) {
	const sites, perSite = 200, 10
	dir := t.TempDir()
	hosts := writeHosts(t, dir, sites)
	var logs testenv.Buffer
	s := &Server{
		HostsFile:   hosts,
		Logger:      slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Collections: []*CollectionSpec{testSpec(t, "c", "")},
		Tick:        20 * time.Millisecond,
		Config:      Config{SkipAskRoute: true},
		ConnConfig:  cmt.ConnConfig{SendQueue: 8},
	}
	runServer(t, s)
	a, b := cmt.Pipe(cmt.ConnConfig{Name: "mns side", SendQueue: 8}, cmt.ConnConfig{Name: "slow node", RecvQueue: 1})
	if err := s.Attach(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go b.Run(ctx)
	send := func(m cmt.Message) {
		if err := b.Send(ctx, m, cmt.DefaultPriority(m.Code())); err != nil {
			t.Errorf("send %s: %v", m.Code(), err)
		}
	}
	send(&cmt.UMInit{NodeID: "slow", AdminHost: "slow.test", AdminPort: 10000})
	want := map[string]bool{}
	for i := range perSite {
		for j := 1; j <= sites; j++ {
			u := fmt.Sprintf("http://site%d.farm.test/p%d", j, i)
			want[u] = true
			send(&cmt.UMURI{Collection: "c", Entry: entry(t, u)})
		}
	}
	// The node reads nothing until the server's send queue for it is full.
	full := time.Now().Add(2 * waitTimeout)
	for !strings.Contains(logs.String(), "holding its messages") {
		if time.Now().After(full) {
			t.Fatalf("send queue never full: the test did not reproduce the condition; log:\n%s", logs.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	got := map[string]bool{}
	deadline := time.After(2 * waitTimeout)
	for len(got) < len(want) {
		select {
		case f, ok := <-b.Incoming():
			if !ok {
				t.Fatalf("connection closed after %d of %d URIs; log:\n%s", len(got), len(want), logs.String())
			}
			if u, isURI := f.Message.(*cmt.UMURI); isURI {
				got[u.Entry.URI.URI] = true
			}
		case <-deadline:
			t.Fatalf("got %d of %d URIs", len(got), len(want))
		}
	}
	for u := range want {
		if !got[u] {
			t.Errorf("URI %s not forwarded", u)
		}
	}
	out := logs.String()
	if strings.Contains(out, "closing its connection") || strings.Contains(out, "already registered") {
		t.Errorf("connection dropped; log:\n%s", out)
	}
}

// TestServerDropsNodeFullTooLong checks the last resort: a node scheduler
// that reads nothing for longer than FullTimeout is closed, with the
// reason logged, and the server keeps serving.
func TestServerDropsNodeFullTooLong(t *testing.T) {
	var logs testenv.Buffer
	s := &Server{
		Logger:      slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Collections: []*CollectionSpec{testSpec(t, "c", "")},
		Tick:        20 * time.Millisecond,
		Config:      Config{SkipAskRoute: true},
		FullTimeout: 200 * time.Millisecond,
	}
	runServer(t, s)
	a, b := cmt.Pipe(cmt.ConnConfig{Name: "mns side", SendQueue: 2}, cmt.ConnConfig{Name: "stuck node", RecvQueue: 1})
	if err := s.Attach(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go b.Run(ctx)
	if err := b.Send(ctx, &cmt.UMInit{NodeID: "stuck"}, cmt.PriorityHigh); err != nil {
		t.Fatal(err)
	}
	for range 20 {
		if err := b.Send(ctx, &cmt.UMKeepalive{}, cmt.PriorityHigh); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(waitTimeout)
	for !strings.Contains(logs.String(), `reason="send queue full too long"`) {
		if time.Now().After(deadline) {
			t.Fatalf("stuck node not dropped; log:\n%s", logs.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	for {
		nodes, err := s.Nodes(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(nodes) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("nodes = %+v after the drop", nodes)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
