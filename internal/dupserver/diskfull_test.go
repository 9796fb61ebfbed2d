package dupserver

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/diskspace"
	"github.com/trawl/trawl/internal/diskspace/disktest"
)

type lockedLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// diskFull reads the DS machine's disk state and held messages on its loop.
func diskFull(t *testing.T, s *Server) (full bool, held int) {
	t.Helper()
	err := s.drv.Do(t.Context(), func(time.Time) {
		ds := s.disk.(*DS)
		full, held = ds.diskFull, len(ds.diskHeld)
	})
	if err != nil {
		t.Fatal(err)
	}
	return full, held
}

// TestServerHoldsChecksumsOnFullDisk runs a duplicate server with its
// Pebble store on a 64 MiB tmpfs. Filled to 2 MiB free (under the 8 MiB
// low-water mark), it pauses (log line, DiskStatus): the checksum messages
// a node scheduler sends get no answer and wait, in order, while its
// keep-alives are still answered. Removing the filler resumes it: the
// held messages are answered in order, and the store, reopened, holds
// their changes.
func TestServerHoldsChecksumsOnFullDisk(t *testing.T) {
	fs := disktest.Mount(t, 64<<20)
	st, err := OpenPebble(fs+"/ds", PebbleOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var logs lockedLog
	log := slog.New(slog.NewTextHandler(&logs, nil))
	s := &Server{Listener: listen(t), Store: st, NodeID: "ds-1", Logger: log,
		Disk: diskspace.NewGuard(diskspace.Config{Dir: fs, Low: 8 << 20, High: 16 << 20, Interval: 20 * time.Millisecond, Logger: log, Role: "dupserver"})}
	addr, stop := start(t, s)
	ns := dialNS(t, t.Context(), addr)
	ns.send(setConfig("example", 1))
	ns.expect(&cmt.PPDUPConfigAck{VClock: 1})
	first := add("example", "node-a", "http://a.example/1", csum("one"))
	ns.send(first)
	ns.expect(addOK(0, first, first.URI).Msg)

	filler := disktest.Fill(t, fs, 2<<20)
	waitUntil(t, "the pause", func() bool { full, _ := diskFull(t, s); return full })
	if !s.DiskStatus().Paused || !strings.Contains(logs.String(), "dupserver: disk full: paused") {
		t.Fatalf("pause not reported: %+v\n%s", s.DiskStatus(), logs.String())
	}
	second := add("example", "node-a", "http://a.example/2", csum("two"))
	third := add("example", "node-a", "http://a.example/3", csum("three"))
	rm := remove("example", "node-a", first.URI, csum("one"))
	for _, m := range []cmt.Message{second, third, rm, &cmt.PPDUPKeepalive{}} {
		ns.send(m)
	}
	ns.expect(&cmt.PPDUPKeepaliveAck{}) // answered; the checksum messages wait
	waitUntil(t, "three held messages", func() bool { _, n := diskFull(t, s); return n == 3 })
	select {
	case f := <-ns.conn.Incoming():
		t.Fatalf("answer while the disk is full: %#v", f.Message)
	case <-time.After(10 * s.Disk.Interval()):
	}

	filler.Remove(t)
	ns.expect(addOK(0, second, second.URI).Msg)
	ns.expect(addOK(0, third, third.URI).Msg)
	ns.expect(&cmt.PPDUPPromoteReq{Collection: "example", Checksum: csum("one")})
	ns.expect(removeOK(0, rm).Msg)
	if !strings.Contains(logs.String(), "dupserver: disk space back: resumed") {
		t.Errorf("no resume line:\n%s", logs.String())
	}
	stop()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st2, err := OpenPebble(fs+"/ds", PebbleOptions{})
	if err != nil {
		t.Fatalf("reopening the store: %v", err)
	}
	defer st2.Close()
	for _, c := range []struct {
		sum  string
		uri  string
		want bool
	}{{"one", first.URI, false}, {"two", second.URI, true}, {"three", third.URI, true}} {
		o, ok, err := st2.Get(Key{"example", csum(c.sum)})
		if err != nil || ok != c.want || (ok && o.URI != c.uri) {
			t.Errorf("checksum %q after reopening: %+v %v %v, want present=%v", c.sum, o, ok, err, c.want)
		}
	}
}

// waitUntil polls cond until it holds, failing the test after a minute.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestDSDiskFullQueueBound drives the machine: while the disk is full it
// holds checksum messages up to MaxQueued (2) and closes the link of a
// node scheduler that sends more (it sends its unanswered operations again
// on the next link); a held message of a closed link is dropped at the
// resume, the others are answered in order and nothing was written before.
func TestDSDiskFullQueueBound(t *testing.T) {
	st := NewMemStore()
	ds, err := newDS(DSConfig{NodeID: "ds-1", DBDir: "/data/ds", MaxQueued: 2}, st)
	if err != nil {
		t.Fatal(err)
	}
	ds.Connect(ns1, t0)
	ds.Connect(ns2, t0)
	ds.SetDiskFull(true, t0)
	ds.Ready()
	ds.Advance()
	a1 := add("example", "node-1", "http://one.example/", csum("a1"))
	a2 := add("example", "node-2", "http://two.example/", csum("a2"))
	a3 := add("example", "node-1", "http://one.example/3", csum("a3"))
	if got := ds.Receive(ns1, a1, t0); len(got) != 0 {
		t.Errorf("held message answered: %v", got)
	}
	if got := ds.Receive(ns2, a2, t0); len(got) != 0 {
		t.Errorf("held message answered: %v", got)
	}
	if got := ds.Receive(ns2, &cmt.PPDUPKeepalive{}, t0); len(got) != 1 {
		t.Errorf("keep-alive while the disk is full: %v, want its ack", got)
	}
	got := ds.Receive(ns1, a3, t0)
	if len(got) != 1 || !got[0].Close || got[0].To != ns1 {
		t.Errorf("a message past the bound: %v, want ns1's link closed", got)
	}
	if st.Dirty() != 0 || len(dumpMem(t, st)) != 0 {
		t.Errorf("written while the disk is full: %v", dumpMem(t, st))
	}
	ds.Disconnect(ns1, t0)
	ds.SetDiskFull(false, t0)
	b := ds.Ready()
	ds.Advance()
	if len(b.Out) != 1 || b.Out[0].To != ns2 {
		t.Fatalf("after the resume: %d messages %v, want a2's answer to ns2 only", len(b.Out), b.Out)
	}
	if _, ok, _ := st.Get(Key{"example", csum("a2")}); !ok {
		t.Error("a2 not stored after the resume")
	}
	if _, ok, _ := st.Get(Key{"example", csum("a1")}); ok {
		t.Error("a1 of the closed link stored")
	}
}

func dumpMem(t *testing.T, st *MemStore) []string {
	t.Helper()
	var out []string
	err := st.Mappings("example", func(k Key, o Owner) error { out = append(out, k.String()+" "+o.URI); return nil })
	if err != nil {
		t.Fatal(err)
	}
	return out
}
