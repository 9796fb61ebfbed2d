package multinode

import (
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/diskspace"
	"github.com/trawl/trawl/internal/diskspace/disktest"
	"github.com/trawl/trawl/internal/loop"
	"github.com/trawl/trawl/internal/testenv"
)

// diskState reads the machine's disk state and held events on its loop.
func diskState(t *testing.T, s *Server) (full bool, held int) {
	t.Helper()
	if err := s.drv.Do(t.Context(), func(time.Time) { full, held = s.m.disk.full, s.m.DiskHeld() }); err != nil {
		t.Fatal(err)
	}
	return full, held
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestServerHoldsRoutesOnFullDisk runs a multinode scheduler with its
// --data (routing database, log files) on a 64 MiB tmpfs. Filled to 2 MiB
// free (under the 8 MiB mark) it pauses (log line, DiskStatus): a node
// scheduler's links to new sites and a log line are held, nothing is
// routed and the free space stays put, while its keep-alive is still
// answered. Removing the filler resumes it: every held site is routed and
// its URI forwarded, and the routing database, reopened, holds them all.
func TestServerHoldsRoutesOnFullDisk(t *testing.T) {
	fs := disktest.Mount(t, 64<<20)
	data := filepath.Join(fs, "data")
	hosts := writeHosts(t, t.TempDir(), 20)
	var logs testenv.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &Server{Listener: ln, Data: data, HostsFile: hosts, Logger: log, Tick: 20 * time.Millisecond,
		Collections: []*CollectionSpec{testSpec(t, "web", startURIs("http://site1.farm.test/"))},
		Disk:        diskspace.NewGuard(diskspace.Config{Dir: fs, Low: 8 << 20, High: 16 << 20, Interval: 20 * time.Millisecond, Logger: log, Role: "multinode"})}
	stop := runServer(t, srv)
	n := dialFakeNode(t, srv.Addr().String(), "node-1", nil)
	n.wait("CONF_ADD", isConfAdd("web"))
	n.wait("start URI", isURI("http://site1.farm.test/"))
	n.send(&cmt.UMURI{Collection: "web", Entry: entry(t, "http://site2.farm.test/a")})
	n.wait("URI of site2", isURI("http://site2.farm.test/a"))

	filler := disktest.Fill(t, fs, 2<<20)
	waitFor(t, "the pause", func() bool { full, _ := diskState(t, srv); return full })
	if !srv.DiskStatus().Paused || !strings.Contains(logs.String(), "multinode: disk full: paused") {
		t.Fatalf("pause not reported: %+v\n%s", srv.DiskStatus(), logs.String())
	}
	before, _, err := diskspace.Read(fs)
	if err != nil {
		t.Fatal(err)
	}
	for i := 3; i <= 10; i++ {
		n.send(&cmt.UMURI{Collection: "web", Entry: entry(t, fmt.Sprintf("http://site%d.farm.test/p", i))})
	}
	n.send(&cmt.UMLog{Collection: "web", File: cmt.LogFile("site"), Text: "held line"})
	n.send(&cmt.UMKeepalive{})
	n.wait("keep-alive answer", func(m cmt.Message) bool { _, ok := m.(*cmt.UMKeepaliveAck); return ok })
	waitFor(t, "nine held messages", func() bool { _, h := diskState(t, srv); return h == 9 })
	if got := n.all(func(m cmt.Message) bool { return isRoute("site3.farm.test")(m) || uriSite(m) == "site3.farm.test" }); len(got) != 0 {
		t.Fatalf("routed while the disk is full: %v", got)
	}
	if after, _, _ := diskspace.Read(fs); after+256<<10 < before {
		t.Errorf("free space fell from %d to %d while paused", before, after)
	}

	filler.Remove(t)
	for i := 3; i <= 10; i++ {
		n.wait("URI after the resume", isURI(fmt.Sprintf("http://site%d.farm.test/p", i)))
	}
	if !strings.Contains(logs.String(), "multinode: disk space back: resumed") {
		t.Errorf("no resume line:\n%s", logs.String())
	}
	n.close()
	stop()
	rs, err := OpenRouteStore(filepath.Join(data, routesDirName), nil, nil)
	if err != nil {
		t.Fatalf("reopening the routing database: %v", err)
	}
	defer rs.Close()
	sites := map[string]bool{}
	if err := rs.Load(func(r StoredRoute) { sites[r.Site] = true }); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 10; i++ {
		if s := fmt.Sprintf("site%d.farm.test", i); !sites[s] {
			t.Errorf("%s not in the routing database after the resume: %v", s, sites)
		}
	}
}

// TestMNSDiskFullQueueBound steps the machine: while the disk is full it
// holds a node scheduler's URIs up to the bound (2) and closes the link of
// the one that sends more; keep-alives are answered; at the resume the
// held URIs are routed in order.
func TestMNSDiskFullQueueBound(t *testing.T) {
	h := newHarness(t, Config{}, testSpec(t, "web", startURIs()))
	h.join("node-1", true)
	h.join("node-2", true)
	m := h.m
	m.Advance()
	m.disk.max = 2
	m.SetDiskFull(true, h.now)
	step := func(node string, msg cmt.Message) []loop.Envelope[cmt.Message] {
		m.Step(loop.Event[cmt.Message]{Kind: loop.Received, Peer: h.conn[node], Msg: msg, Now: h.now})
		b := m.Ready()
		m.Advance()
		return b.Out
	}
	if out := step("node-1", &cmt.UMURI{Collection: "web", Entry: entry(t, "http://a.example/")}); len(out) != 0 {
		t.Errorf("held URI acted on: %v", out)
	}
	if out := step("node-2", &cmt.UMURI{Collection: "web", Entry: entry(t, "http://b.example/")}); len(out) != 0 {
		t.Errorf("held URI acted on: %v", out)
	}
	if out := step("node-2", &cmt.UMKeepalive{}); len(out) != 1 {
		t.Errorf("keep-alive while the disk is full: %v, want its answer", out)
	}
	out := step("node-1", &cmt.UMURI{Collection: "web", Entry: entry(t, "http://c.example/")})
	if len(out) != 1 || !out[0].Close || out[0].To != h.conn["node-1"] {
		t.Errorf("a message past the bound: %v, want node-1's link closed", out)
	}
	if m.DiskHeld() != 2 {
		t.Errorf("%d held, want 2", m.DiskHeld())
	}
	m.SetDiskFull(false, h.now)
	if m.DiskHeld() != 0 {
		t.Errorf("%d held after the resume", m.DiskHeld())
	}
	b := m.Ready()
	m.Advance()
	if len(b.Work) == 0 {
		t.Errorf("no lookup after the resume: %+v", b)
	}
}
