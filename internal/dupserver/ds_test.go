package dupserver

import (
	"bytes"
	"crypto/md5"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/trawl/trawl/internal/cmt"
)

const (
	ns1 PeerID = 1
	ns2 PeerID = 2
	rep PeerID = 10
)

var t0 = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

func csum(s string) cmt.Checksum { return cmt.Checksum(md5.Sum([]byte(s))) }

type dsHarness struct {
	t    *testing.T
	ds   testDS
	st   *MemStore
	logs *bytes.Buffer
	now  time.Time
}

func newDSHarness(t *testing.T, replica bool) *dsHarness {
	t.Helper()
	logs := &bytes.Buffer{}
	st := NewMemStore()
	ds, err := newDS(DSConfig{NodeID: "ds-1", DBDir: "/data/ds", Replica: replica}, st,
		slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	if err != nil {
		t.Fatal(err)
	}
	h := &dsHarness{t: t, ds: ds, st: st, logs: logs, now: t0}
	h.ds.Connect(ns1, h.now)
	h.ds.Connect(ns2, h.now)
	return h
}

func (h *dsHarness) recv(p PeerID, m cmt.Message) []Action { return h.ds.Receive(p, m, h.now) }

func (h *dsHarness) want(step string, got, want []Action) {
	h.t.Helper()
	if diff := cmp.Diff(want, got); diff != "" {
		h.t.Errorf("%s: actions (-want +got):\n%s", step, diff)
	}
}

func (h *dsHarness) owner(coll string, cs cmt.Checksum) (Owner, bool) {
	o, ok, _ := h.st.Get(Key{coll, cs})
	return o, ok
}

func setConfig(coll string, vc int64) *cmt.PPDUPSetConfig {
	return &cmt.PPDUPSetConfig{Collection: coll, VClock: vc, Config: cmt.CrawlConfig{Collections: []cmt.Collection{{
		Name: coll, Params: cmt.Params{Attribs: []cmt.Attrib{cmt.IntAttrib("compact", 0), cmt.StrAttrib("format", "gigabase")}}}}}}
}

func add(coll, node, uri string, cs cmt.Checksum) *cmt.PPDUPAdd {
	return &cmt.PPDUPAdd{Collection: coll, NodeID: node, URI: uri, Checksum: cs}
}

func remove(coll, node, uri string, cs cmt.Checksum) *cmt.PPDUPRemove {
	return &cmt.PPDUPRemove{Collection: coll, NodeID: node, URI: uri, Checksum: cs}
}

func addOK(to PeerID, m *cmt.PPDUPAdd, owner string) Action {
	return Action{To: to, Msg: &cmt.PPDUPAddOK{Collection: m.Collection, NodeID: m.NodeID, URI: m.URI, OwnerURI: owner, Checksum: m.Checksum}}
}

func removeOK(to PeerID, m *cmt.PPDUPRemove) Action {
	return Action{To: to, Msg: &cmt.PPDUPRemoveOK{Collection: m.Collection, NodeID: m.NodeID, URI: m.URI, Checksum: m.Checksum}}
}

func promote(to PeerID, coll string, cs cmt.Checksum) Action {
	return Action{To: to, Msg: &cmt.PPDUPPromoteReq{Collection: coll, Checksum: cs}}
}

func fwdAdd(m *cmt.PPDUPAdd) Action {
	f := *m
	f.PPDUPID, f.DBName = "ds-1", "/data/ds/"+m.Collection
	return Action{To: rep, Msg: &f}
}

func fwdRemove(m *cmt.PPDUPRemove) Action {
	f := *m
	f.PPDUPID, f.DBName = "ds-1", "/data/ds/"+m.Collection
	return Action{To: rep, Msg: &f}
}

func replicaSetConfig(coll string, vc int64) Action {
	m := setConfig(coll, vc)
	return Action{To: rep, Msg: m}
}

// echo builds the replica's answer to a forwarded ADD or REMOVE.
func echo(a Action) cmt.Message {
	switch m := a.Msg.(type) {
	case *cmt.PPDUPAdd:
		return &cmt.PPDUPAddOK{Collection: m.Collection, NodeID: m.NodeID, URI: m.URI, Checksum: m.Checksum, PPDUPID: m.PPDUPID, DBName: m.DBName}
	case *cmt.PPDUPRemove:
		return &cmt.PPDUPRemoveOK{Collection: m.Collection, NodeID: m.NodeID, URI: m.URI, Checksum: m.Checksum, PPDUPID: m.PPDUPID, DBName: m.DBName}
	}
	panic("echo of " + a.Msg.Code().String())
}

func TestDSSetConfigAck(t *testing.T) {
	h := newDSHarness(t, false)
	got := h.recv(ns1, setConfig("example", 7))
	h.want("SET_CONFIG", got, []Action{{To: ns1, Msg: &cmt.PPDUPConfigAck{VClock: 7}, Priority: cmt.PriorityHigh}})
	st := h.ds.Status()
	if diff := cmp.Diff([]string{"example"}, st.Collections); diff != "" {
		t.Errorf("collections: %s", diff)
	}
	recs, _ := h.st.Collections()
	if len(recs) != 1 || recs[0].Name != "example" {
		t.Fatalf("stored collections = %+v", recs)
	}
	if a, ok := recs[0].Config.Attrib("format"); !ok || a.Str != "gigabase" {
		t.Errorf("stored config lost its attribs: %+v", recs[0].Config)
	}
}

func TestDSAddOwnership(t *testing.T) {
	cs := csum("doc")
	first := add("example", "node-a", "http://a.example/1", cs)
	tests := []struct {
		name  string
		from  PeerID
		m     *cmt.PPDUPAdd
		owner string
	}{
		{"new checksum: the sender owns it", ns1, first, first.URI},
		{"other node, other URI: duplicate", ns2, add("example", "node-b", "http://b.example/x", cs), first.URI},
		{"owning node, other URI: duplicate", ns1, add("example", "node-a", "http://a.example/2", cs), first.URI},
		{"owning URI again: success", ns1, first, first.URI},
		{"same URI from another node: success", ns2, add("example", "node-b", first.URI, cs), first.URI},
		{"other collection is independent", ns2, add("other", "node-b", "http://b.example/x", cs), "http://b.example/x"},
	}
	h := newDSHarness(t, false)
	h.recv(ns1, setConfig("example", 1))
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h.t = t
			h.want("ADD", h.recv(tc.from, tc.m), []Action{addOK(tc.from, tc.m, tc.owner)})
		})
	}
	if o, _ := h.owner("example", cs); o != (Owner{first.URI, "node-a"}) {
		t.Errorf("owner = %+v", o)
	}
}

func TestDSErrors(t *testing.T) {
	cs := csum("x")
	tests := []struct {
		name string
		m    cmt.Message
		coll string
		why  string
	}{
		{"empty collection", add("", "n", "http://x/", cs), "", "PPDUP_ADD http://x/: missing collection name"},
		{"NUL in collection", add("a\x00b", "n", "http://x/", cs), "a\x00b", "PPDUP_ADD http://x/: collection name contains a NUL byte"},
		{"no node id", add("c", "", "http://x/", cs), "c", "PPDUP_ADD http://x/: missing node identifier"},
		{"no URI", remove("c", "n", "", cs), "c", "PPDUP_REMOVE : missing URI"},
		{"zero checksum", add("c", "n", "http://x/", cmt.Checksum{}), "c", "PPDUP_ADD http://x/: checksum (PKT_CSUM) is all zero"},
		{"set config without collection", &cmt.PPDUPSetConfig{VClock: 1}, "", "PPDUP_SET_CONFIG: no collection"},
		{"conf remove without collection", &cmt.PPDUPConfRemove{}, "", "PPDUP_CONF_REMOVE: missing collection name"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newDSHarness(t, false)
			got := h.recv(ns1, tc.m)
			if len(got) != 1 {
				t.Fatalf("got %d actions, want one PPDUP_ERROR: %+v", len(got), got)
			}
			e, ok := got[0].Msg.(*cmt.PPDUPError)
			if !ok || got[0].To != ns1 || e.Collection != tc.coll || !strings.HasPrefix(e.Why, tc.why) {
				t.Fatalf("got %+v (%#v), want PPDUP_ERROR %q to ns1", got[0], got[0].Msg, tc.why)
			}
		})
	}
	t.Run("store failure", func(t *testing.T) {
		h := newDSHarness(t, false)
		h.recv(ns1, setConfig("c", 1))
		h.st.FailWrites = errors.New("disk full")
		got := h.recv(ns1, add("c", "n", "http://x/", cs))
		if e, ok := got[0].Msg.(*cmt.PPDUPError); !ok || !strings.Contains(e.Why, "disk full") {
			t.Fatalf("got %+v", got)
		}
	})
}

func TestDSRemoveWithoutReplica(t *testing.T) {
	cs := csum("doc")
	h := newDSHarness(t, false)
	h.recv(ns1, setConfig("example", 1))
	h.recv(ns2, setConfig("example", 1))
	a := add("example", "node-a", "http://a/1", cs)
	h.recv(ns1, a)

	notOwner := remove("example", "node-b", "http://b/1", cs)
	h.want("REMOVE by a non-owner", h.recv(ns2, notOwner), []Action{removeOK(ns2, notOwner)})
	if _, ok := h.owner("example", cs); !ok {
		t.Fatal("a non-owner's REMOVE dropped the mapping")
	}
	r := remove("example", "node-a", "http://a/1", cs)
	h.want("REMOVE by the owner", h.recv(ns1, r), []Action{
		promote(ns1, "example", cs), promote(ns2, "example", cs), removeOK(ns1, r)})
	if _, ok := h.owner("example", cs); ok {
		t.Fatal("mapping still there")
	}
	h.want("REMOVE of an unknown checksum", h.recv(ns1, r), []Action{removeOK(ns1, r)})
	// Now the checksum is free: the next ADD owns it.
	b := add("example", "node-b", "http://b/1", cs)
	h.want("ADD after REMOVE", h.recv(ns2, b), []Action{addOK(ns2, b, b.URI)})
}

func TestDSReplicaTransitionAndQueueing(t *testing.T) {
	cs := csum("doc")
	h := newDSHarness(t, true)
	h.ds.ConnectReplica(rep, h.now)

	// 3.3.5.1: the node scheduler is answered at once, the replica later.
	h.want("SET_CONFIG", h.recv(ns1, setConfig("example", 5)),
		[]Action{{To: ns1, Msg: &cmt.PPDUPConfigAck{VClock: 5}, Priority: cmt.PriorityHigh}})
	if h.ds.Status().ReplicaNormal {
		t.Fatal("replica state normal right after SET_CONFIG, want transition")
	}

	// The first checksum message carries the configuration before it.
	a1 := add("example", "node-a", "http://a/1", cs)
	h.want("first ADD", h.recv(ns1, a1), []Action{replicaSetConfig("example", 1), fwdAdd(a1)})
	if o, ok := h.owner("example", cs); !ok || o.URI != a1.URI {
		t.Fatalf("mapping not created before forwarding: %+v", o)
	}

	// Same checksum from another node: held until the replica answers.
	a2 := add("example", "node-b", "http://b/1", cs)
	h.want("ADD, same checksum", h.recv(ns2, a2), nil)
	// A different checksum is forwarded at once, without a new SET_CONFIG.
	a3 := add("example", "node-b", "http://b/2", csum("other"))
	h.want("ADD, other checksum", h.recv(ns2, a3), []Action{fwdAdd(a3)})
	if st := h.ds.Status(); st.InFlight != 2 || st.Held != 1 {
		t.Fatalf("status %+v", st)
	}

	h.want("CONFIG_ACK", h.recv(rep, &cmt.PPDUPConfigAck{VClock: 1}), nil)
	if !h.ds.Status().ReplicaNormal {
		t.Fatal("replica state not normal after a valid CONFIG_ACK")
	}

	// The replica's ADD_OK completes the first ADD and releases the held one,
	// which finds the mapping and learns the owner.
	h.want("replica ADD_OK", h.recv(rep, echo(fwdAdd(a1))), []Action{addOK(ns1, a1, a1.URI), addOK(ns2, a2, a1.URI)})
	h.want("replica ADD_OK 2", h.recv(rep, echo(fwdAdd(a3))), []Action{addOK(ns2, a3, a3.URI)})
	if h.st.Dirty() != 0 {
		t.Errorf("dirty keys left: %d", h.st.Dirty())
	}

	// REMOVE with a replica: forwarded; a second REMOVE of the checksum waits.
	r1 := remove("example", "node-a", a1.URI, cs)
	h.want("REMOVE", h.recv(ns1, r1), []Action{fwdRemove(r1)})
	r2 := remove("example", "node-b", a1.URI, cs)
	h.want("REMOVE, same checksum", h.recv(ns2, r2), nil)
	h.want("replica REMOVE_OK", h.recv(rep, echo(fwdRemove(r1))), []Action{
		promote(ns1, "example", cs), promote(ns2, "example", cs), removeOK(ns1, r1),
		removeOK(ns2, r2), // released: the checksum is gone, nothing to forward
	})
	// An answer for nothing pending is ignored.
	h.want("stray ADD_OK", h.recv(rep, echo(fwdAdd(a1))), nil)
}

func TestDSStaleConfigAck(t *testing.T) {
	h := newDSHarness(t, true)
	h.ds.ConnectReplica(rep, h.now)
	h.recv(ns1, setConfig("a", 1))
	h.recv(ns1, setConfig("b", 2))
	x := add("a", "n", "http://x/", csum("x"))
	h.want("ADD", h.recv(ns1, x), []Action{replicaSetConfig("a", 1), replicaSetConfig("b", 2), fwdAdd(x)})
	h.recv(rep, &cmt.PPDUPConfigAck{VClock: 1})
	if h.ds.Status().ReplicaNormal {
		t.Fatal("a stale CONFIG_ACK (vc 1 of 2) made the replica normal")
	}
	if !strings.Contains(h.logs.String(), "stale PPDUP_CONFIG_ACK") {
		t.Error("stale ACK not logged")
	}
	h.recv(rep, &cmt.PPDUPConfigAck{VClock: 2})
	if !h.ds.Status().ReplicaNormal {
		t.Fatal("the latest CONFIG_ACK did not make the replica normal")
	}
	// A new configuration starts a new transition.
	h.recv(ns1, setConfig("a", 3))
	if h.ds.Status().ReplicaNormal {
		t.Fatal("still normal after a new SET_CONFIG")
	}
}

func TestDSConfRemove(t *testing.T) {
	cs := csum("doc")
	h := newDSHarness(t, true)
	h.ds.ConnectReplica(rep, h.now)
	h.recv(ns1, setConfig("example", 1))
	a := add("example", "n", "http://a/", cs)
	h.recv(ns1, a) // forwarded, pending
	h.recv(ns2, add("example", "n2", "http://b/", cs))

	got := h.recv(ns1, &cmt.PPDUPConfRemove{Collection: "example"})
	h.want("CONF_REMOVE", got, []Action{
		{To: rep, Msg: &cmt.PPDUPConfRemove{Collection: "example", PPDUPID: "ds-1"}},
		{To: rep, Msg: &cmt.PPDUPKeepalive{}},
	})
	if _, ok := h.owner("example", cs); ok {
		t.Fatal("checksum store of the collection not deleted")
	}
	if st := h.ds.Status(); st.InFlight != 0 || st.Held != 0 || len(st.Removing) != 1 || st.Tombstones != 1 {
		t.Fatalf("status %+v", st)
	}
	// Everything for the collection is discarded while its removal is in progress.
	h.want("ADD while removing", h.recv(ns2, add("example", "n2", "http://c/", csum("c"))), nil)
	h.want("REMOVE while removing", h.recv(ns2, remove("example", "n2", "http://c/", csum("c"))), nil)
	h.want("SET_CONFIG while removing", h.recv(ns2, setConfig("example", 9)), nil)
	h.want("late replica ADD_OK", h.recv(rep, echo(fwdAdd(a))), nil)
	if _, ok := h.owner("example", csum("c")); ok {
		t.Fatal("ADD applied during removal")
	}
	// The barrier's answer confirms the removal at the replica.
	h.recv(rep, &cmt.PPDUPKeepaliveAck{})
	if ts, _ := h.st.Tombstones(); len(ts) != 0 || h.ds.Status().Tombstones != 0 {
		t.Fatalf("tombstone not cleared: %v", ts)
	}
	h.want("CONF_REMOVE2", h.recv(ns1, &cmt.PPDUPConfRemove2{Collection: "example"}), nil)
	if st := h.ds.Status(); len(st.Collections)+len(st.Removing) != 0 {
		t.Fatalf("collection still known: %+v", st)
	}
	// After REMOVE2 the name is free again.
	b := add("example", "n2", "http://d/", csum("d"))
	h.want("ADD after REMOVE2", h.recv(ns2, b), []Action{fwdAdd(b)})
}

func TestDSKeepAlive(t *testing.T) {
	h := newDSHarness(t, true)
	h.ds.ConnectReplica(rep, h.now)
	h.want("KEEPALIVE from NS", h.recv(ns1, &cmt.PPDUPKeepalive{}),
		[]Action{{To: ns1, Msg: &cmt.PPDUPKeepaliveAck{}, Priority: cmt.PriorityHigh}})
	h.want("KEEPALIVE from replica", h.recv(rep, &cmt.PPDUPKeepalive{}),
		[]Action{{To: rep, Msg: &cmt.PPDUPKeepaliveAck{}}})

	h.want("first tick", h.ds.Tick(t0), nil)
	h.want("tick before 120 s", h.ds.Tick(t0.Add(119*time.Second)), nil)
	ka := []Action{
		{To: ns1, Msg: &cmt.PPDUPKeepalive{}, Priority: cmt.PriorityHigh},
		{To: ns2, Msg: &cmt.PPDUPKeepalive{}, Priority: cmt.PriorityHigh},
		{To: rep, Msg: &cmt.PPDUPKeepalive{}},
	}
	h.want("tick at 120 s", h.ds.Tick(t0.Add(120*time.Second)), ka)
	if strings.Contains(h.logs.String(), "did not answer") {
		t.Fatal("missing ack logged before any keep-alive was due")
	}
	h.recv(ns1, &cmt.PPDUPKeepaliveAck{})
	h.recv(rep, &cmt.PPDUPKeepaliveAck{})
	h.want("tick at 240 s", h.ds.Tick(t0.Add(240*time.Second)), ka)
	logs := h.logs.String()
	if !strings.Contains(logs, `node scheduler did not answer the previous keep-alive" peer=2`) {
		t.Errorf("ns2's missing ack not logged:\n%s", logs)
	}
	if strings.Contains(logs, "peer=1 unanswered") || strings.Contains(logs, "replica did not answer") {
		t.Errorf("a peer that answered was logged:\n%s", logs)
	}
}

func TestDSReplicaTimeoutAndResync(t *testing.T) {
	cs := csum("doc")
	h := newDSHarness(t, true)
	h.ds.ConnectReplica(rep, h.now)
	h.recv(ns1, setConfig("example", 1))
	a1 := add("example", "node-a", "http://a/1", cs)
	h.recv(ns1, a1)
	a2 := add("example", "node-b", "http://b/1", cs)
	h.recv(ns2, a2) // held
	h.ds.Tick(h.now)

	// The replica does not answer: after the timeout the node schedulers are
	// answered from the local store and the replica link is closed.
	h.want("tick before the timeout", h.ds.Tick(t0.Add(9*time.Second)), nil)
	h.want("tick at the timeout", h.ds.Tick(t0.Add(10*time.Second)), []Action{
		{To: rep, Close: true}, addOK(ns1, a1, a1.URI), addOK(ns2, a2, a1.URI)})
	h.ds.Disconnect(rep, h.now) // the driver reports the close; nothing more happens
	if st := h.ds.Status(); st.ReplicaConnected || st.InFlight != 0 || st.Held != 0 {
		t.Fatalf("status %+v", st)
	}

	// While the replica is down, answers come at once and changes are dirty.
	a3 := add("example", "node-a", "http://a/3", csum("three"))
	h.want("ADD without replica", h.recv(ns1, a3), []Action{addOK(ns1, a3, a3.URI)})
	r := remove("example", "node-a", a1.URI, cs)
	h.want("REMOVE without replica", h.recv(ns1, r), []Action{promote(ns1, "example", cs), promote(ns2, "example", cs), removeOK(ns1, r)})
	if h.st.Dirty() != 2 {
		t.Fatalf("dirty keys = %d, want 2", h.st.Dirty())
	}
	// A late answer on the old connection is ignored.
	h.want("late answer", h.ds.Receive(rep, echo(fwdAdd(a1)), h.now), nil)

	// A new connection gets the configuration and every dirty key.
	const rep2 PeerID = 11
	got := h.ds.ConnectReplica(rep2, h.now)
	var kinds []string
	for _, a := range got {
		if a.To != rep2 {
			t.Fatalf("resync action to %d: %+v", a.To, a)
		}
		kinds = append(kinds, a.Msg.Code().String())
	}
	want := []string{"PPDUP_SET_CONFIG", "PPDUP_ADD", "PPDUP_REMOVE"}
	if three := csum("three"); bytes.Compare(three[:], cs[:]) > 0 {
		want = []string{"PPDUP_SET_CONFIG", "PPDUP_REMOVE", "PPDUP_ADD"}
	}
	if diff := cmp.Diff(want, kinds); diff != "" {
		t.Fatalf("resync messages (-want +got):\n%s", diff)
	}
	for _, a := range got[1:] {
		if out := h.ds.Receive(rep2, echo(Action{Msg: a.Msg}), h.now); len(out) != 0 {
			t.Fatalf("a resync answer produced %+v", out)
		}
	}
	if h.st.Dirty() != 0 || h.ds.Status().Backlog {
		t.Fatalf("dirty = %d, status %+v", h.st.Dirty(), h.ds.Status())
	}
}

func TestDSReplicaErrorAndDisconnectReleaseHeld(t *testing.T) {
	cs := csum("doc")
	for _, how := range []string{"disconnect", "error"} {
		t.Run(how, func(t *testing.T) {
			h := newDSHarness(t, true)
			h.ds.ConnectReplica(rep, h.now)
			a1 := add("example", "node-a", "http://a/1", cs)
			h.recv(ns1, a1)
			a2 := add("example", "node-b", "http://b/1", cs)
			h.recv(ns2, a2)
			var got, want []Action
			if how == "disconnect" {
				got = h.ds.Disconnect(rep, h.now)
				want = []Action{addOK(ns1, a1, a1.URI), addOK(ns2, a2, a1.URI)}
			} else {
				got = h.recv(rep, &cmt.PPDUPError{Collection: "example", Why: "disk full"})
				want = []Action{{To: rep, Close: true}, addOK(ns1, a1, a1.URI), addOK(ns2, a2, a1.URI)}
			}
			h.want(how, got, want)
		})
	}
}

func TestDSTombstoneResentOnReconnect(t *testing.T) {
	h := newDSHarness(t, true)
	h.recv(ns1, setConfig("gone", 1))
	h.recv(ns1, setConfig("kept", 2))
	h.recv(ns1, add("gone", "n", "http://g/", csum("g")))
	h.recv(ns1, &cmt.PPDUPConfRemove{Collection: "gone"})
	h.recv(ns1, &cmt.PPDUPConfRemove2{Collection: "gone"})
	k := add("kept", "n", "http://k/", csum("k"))
	h.recv(ns1, k)
	got := h.ds.ConnectReplica(rep, h.now)
	h.want("resync", got, []Action{
		{To: rep, Msg: &cmt.PPDUPConfRemove{Collection: "gone", PPDUPID: "ds-1"}},
		replicaSetConfig("kept", 1),
		{To: rep, Msg: &cmt.PPDUPKeepalive{}},
		fwdAdd(k),
	})
	h.recv(rep, &cmt.PPDUPKeepaliveAck{})
	if ts, _ := h.st.Tombstones(); len(ts) != 0 {
		t.Fatalf("tombstones %v", ts)
	}
}

func TestDSRestoresStateFromStore(t *testing.T) {
	st := NewMemStore()
	ds, _ := newDS(DSConfig{NodeID: "ds-1", Replica: true}, st)
	ds.Connect(ns1, t0)
	ds.Receive(ns1, setConfig("example", 1), t0)
	ds.Receive(ns1, add("example", "n", "http://a/", csum("a")), t0)
	ds.Receive(ns1, &cmt.PPDUPConfRemove{Collection: "old"}, t0)

	// A new machine over the same store (a restarted process) knows the
	// collections, the removal and the unreplicated key.
	ds2, err := newDS(DSConfig{NodeID: "ds-1", Replica: true}, st)
	if err != nil {
		t.Fatal(err)
	}
	s := ds2.Status()
	if diff := cmp.Diff([]string{"example"}, s.Collections); diff != "" || len(s.Removing) != 1 || s.Tombstones != 1 {
		t.Fatalf("status %+v", s)
	}
	got := ds2.ConnectReplica(rep, t0)
	if len(got) != 4 { // CONF_REMOVE old, SET_CONFIG example, KEEPALIVE, ADD
		t.Fatalf("resync after restart: %+v", got)
	}
}

func TestDSBoundedHeldQueue(t *testing.T) {
	st := NewMemStore()
	ds, _ := newDS(DSConfig{NodeID: "ds-1", Replica: true, MaxQueued: 2}, st)
	ds.Connect(ns1, t0)
	ds.ConnectReplica(rep, t0)
	cs := csum("x")
	ds.Receive(ns1, add("c", "n", "http://1/", cs), t0)
	ds.Receive(ns1, add("c", "n", "http://2/", cs), t0)
	ds.Receive(ns1, add("c", "n", "http://3/", cs), t0)
	got := ds.Receive(ns1, add("c", "n", "http://4/", cs), t0)
	if len(got) != 1 {
		t.Fatalf("got %+v", got)
	}
	if e, ok := got[0].Msg.(*cmt.PPDUPError); !ok || !strings.Contains(e.Why, "busy") {
		t.Fatalf("got %#v, want busy PPDUP_ERROR", got[0].Msg)
	}
}

func TestDSWindowFullAnswersLocally(t *testing.T) {
	st := NewMemStore()
	ds, _ := newDS(DSConfig{NodeID: "ds-1", Replica: true, Window: 1}, st)
	ds.Connect(ns1, t0)
	ds.ConnectReplica(rep, t0)
	a := add("c", "n", "http://1/", csum("1"))
	first := ds.Receive(ns1, a, t0)
	if len(first) != 1 || first[0].To != rep {
		t.Fatalf("first ADD: %+v", first)
	}
	b := add("c", "n", "http://2/", csum("2"))
	got := ds.Receive(ns1, b, t0)
	if diff := cmp.Diff([]Action{addOK(ns1, b, b.URI)}, got); diff != "" {
		t.Fatalf("ADD with a full window (-want +got):\n%s", diff)
	}
	// The first answer frees the window and the pump sends the backlog.
	got = ds.Receive(rep, echo(first[0]), t0)
	if len(got) != 2 || got[0].To != ns1 || got[1].To != rep || got[1].Msg.(*cmt.PPDUPAdd).URI != b.URI {
		t.Fatalf("after the answer: %+v", got)
	}
}
