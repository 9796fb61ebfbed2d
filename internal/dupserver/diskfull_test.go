package dupserver

import (
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/diskspace"
	"github.com/trawl/trawl/internal/diskspace/disktest"
	"github.com/trawl/trawl/internal/loop"
	"github.com/trawl/trawl/internal/testenv"
)

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
	var logs testenv.Buffer
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

// TestReplicaRefusesOnFullDisk runs a duplicate server (store on a
// temporary directory) and its replica (Pebble store on a 64 MiB tmpfs).
// Filled to 2 MiB free (under the replica's 8 MiB mark), the replica
// pauses (log line, DiskStatus) and closes the duplicate server's link;
// the duplicate server gives it up and answers the node scheduler's
// checksums from its own store, while the replica's store gets none of
// them and the free space stays put. Removing the filler resumes it: the
// duplicate server reconnects and resynchronises it, and the replica's
// store, reopened, equals the duplicate server's.
func TestReplicaRefusesOnFullDisk(t *testing.T) {
	fs := disktest.Mount(t, 64<<20)
	rSt, err := OpenPebble(fs+"/r", PebbleOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dsSt, err := OpenPebble(t.TempDir(), PebbleOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer dsSt.Close()
	var rLogs, dsLogs testenv.Buffer
	rLog := slog.New(slog.NewTextHandler(&rLogs, nil))
	r := &Server{Listener: listen(t), Store: rSt, ReplicaMode: true, Logger: rLog,
		Disk: diskspace.NewGuard(diskspace.Config{Dir: fs, Low: 8 << 20, High: 16 << 20, Interval: 20 * time.Millisecond, Logger: rLog, Role: "dupserver replica"})}
	raddr, stopR := start(t, r)
	dsAddr, stopDS := start(t, &Server{Listener: listen(t), Store: dsSt, NodeID: "ds-1", Replica: raddr,
		Logger: slog.New(slog.NewTextHandler(&dsLogs, nil))})
	ns := dialNS(t, t.Context(), dsAddr)
	ns.send(setConfig("example", 1))
	ns.expect(&cmt.PPDUPConfigAck{VClock: 1})
	addN := func(from, to int) {
		t.Helper()
		for i := from; i < to; i++ {
			ns.send(add("example", "n1", fmt.Sprintf("http://a/%d", i), csum(fmt.Sprint(i))))
		}
		for i := from; i < to; i++ {
			if _, ok := ns.next().(*cmt.PPDUPAddOK); !ok {
				t.Fatal("want ADD_OK")
			}
		}
	}
	addN(0, 20)
	pollEqual(t, dsSt, rSt, 20)

	filler := disktest.Fill(t, fs, 2<<20)
	waitUntil(t, "the replica's pause", func() bool {
		return strings.Contains(dsLogs.String(), "dupserver: replica lost") && strings.Contains(rLogs.String(), "duplicate server refused while the disk is full")
	})
	if !r.DiskStatus().Paused || !strings.Contains(rLogs.String(), "dupserver replica: disk full: paused") {
		t.Fatalf("pause not reported: %+v\n%s", r.DiskStatus(), rLogs.String())
	}
	before, _, err := diskspace.Read(fs)
	if err != nil {
		t.Fatal(err)
	}
	addN(20, 70) // answered by the duplicate server alone
	rm := remove("example", "n1", "http://a/0", csum("0"))
	ns.send(rm)
	ns.expect(&cmt.PPDUPPromoteReq{Collection: "example", Checksum: csum("0")})
	ns.expect(removeOK(0, rm).Msg)
	if got := dump(t, rSt); len(got) != 20 {
		t.Errorf("the replica's store changed while its disk was full: %d mappings, want 20", len(got))
	}
	if after, _, _ := diskspace.Read(fs); after+256<<10 < before {
		t.Errorf("free space fell from %d to %d while paused", before, after)
	}

	filler.Remove(t)
	deadline := time.Now().Add(time.Minute)
	for !reflect.DeepEqual(dump(t, dsSt), dump(t, rSt)) {
		if time.Now().After(deadline) {
			t.Fatalf("the replica did not catch up after the resume:\n%s", cmp.Diff(dump(t, dsSt), dump(t, rSt)))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(rLogs.String(), "dupserver replica: disk space back: resumed") {
		t.Errorf("no resume line:\n%s", rLogs.String())
	}
	stopDS()
	stopR()
	want := dump(t, dsSt)
	if len(want) != 69 {
		t.Errorf("duplicate server holds %d mappings, want 69", len(want))
	}
	if err := rSt.Close(); err != nil {
		t.Fatal(err)
	}
	rSt2, err := OpenPebble(fs+"/r", PebbleOptions{})
	if err != nil {
		t.Fatalf("reopening the replica's store: %v", err)
	}
	defer rSt2.Close()
	if got := dump(t, rSt2); !reflect.DeepEqual(got, want) {
		t.Errorf("replica's store after reopening differs:\n%s", cmp.Diff(want, got))
	}
}

// TestFailoverNotPromotedOnFullDisk steps a replica with a failover
// listener: while its disk is full it closes its duplicate server's link,
// refuses it again, and refuses a node scheduler's failover connection
// however long the duplicate server has been away; after the resume
// PromoteAfter counts from the resume before a node scheduler promotes it.
func TestFailoverNotPromotedOnFullDisk(t *testing.T) {
	f := NewFailover(FailoverConfig{PromoteAfter: time.Second, Start: t0, DS: DSConfig{NodeID: "r-1"}}, NewMemStore())
	f.Advance()
	closed := func(p PeerID) bool {
		b := f.Ready()
		f.Advance()
		for _, e := range b.Out {
			if e.Close && e.To == p {
				return true
			}
		}
		return false
	}
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	conn := func(p PeerID, tag string, s int) {
		f.Step(loop.Event[cmt.Message]{Kind: loop.Connected, Peer: p, Tag: tag, Now: at(s)})
	}
	conn(1, TagListen, 0)
	if closed(1) {
		t.Fatal("duplicate server refused before the disk is full")
	}
	f.SetDiskFull(true, at(1))
	if !closed(1) {
		t.Fatal("the duplicate server's link stays open on a full disk")
	}
	f.Step(loop.Event[cmt.Message]{Kind: loop.Closed, Peer: 1, Now: at(1)})
	f.Advance()
	conn(2, TagListen, 2)
	if !closed(2) {
		t.Error("duplicate server admitted while the disk is full")
	}
	conn(3, TagFailover, 10)
	if !closed(3) || f.Promoted() {
		t.Error("promoted while the disk is full")
	}
	f.SetDiskFull(false, at(20))
	f.Advance()
	conn(4, TagFailover, 20)
	if !closed(4) || f.Promoted() {
		t.Error("promoted before PromoteAfter counted from the resume")
	}
	conn(5, TagFailover, 22)
	if closed(5) || !f.Promoted() {
		t.Error("not promoted after the resume and PromoteAfter")
	}
}
