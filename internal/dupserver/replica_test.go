package dupserver

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/trawl/trawl/internal/cmt"
)

func TestReplicaMachine(t *testing.T) {
	const ds PeerID = 3
	st := NewMemStore()
	r := newReplica(ReplicaConfig{}, st)
	r.Connect(ds, t0)
	cs := csum("doc")
	steps := []struct {
		name string
		in   cmt.Message
		want []Action
	}{
		{"SET_CONFIG echoes vc", setConfig("example", 4), []Action{{To: ds, Msg: &cmt.PPDUPConfigAck{VClock: 4}}}},
		{"ADD echoes the pairs",
			&cmt.PPDUPAdd{Collection: "example", NodeID: "n1", URI: "http://a/", Checksum: cs, PPDUPID: "ds-1", DBName: "/d/example"},
			[]Action{{To: ds, Msg: &cmt.PPDUPAddOK{Collection: "example", NodeID: "n1", URI: "http://a/", Checksum: cs, PPDUPID: "ds-1", DBName: "/d/example"}}}},
		{"ADD overwrites",
			&cmt.PPDUPAdd{Collection: "example", NodeID: "n2", URI: "http://b/", Checksum: cs, PPDUPID: "ds-1", DBName: "/d/example"},
			[]Action{{To: ds, Msg: &cmt.PPDUPAddOK{Collection: "example", NodeID: "n2", URI: "http://b/", Checksum: cs, PPDUPID: "ds-1", DBName: "/d/example"}}}},
		{"KEEPALIVE is answered", &cmt.PPDUPKeepalive{}, []Action{{To: ds, Msg: &cmt.PPDUPKeepaliveAck{}}}},
		{"ADD_OK is not for a replica", &cmt.PPDUPAddOK{Collection: "x", NodeID: "n", URI: "u"}, nil},
	}
	for _, s := range steps {
		if diff := cmp.Diff(s.want, r.Receive(ds, s.in, t0)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", s.name, diff)
		}
	}
	if o, ok, _ := st.Get(Key{"example", cs}); !ok || o != (Owner{"http://b/", "n2"}) {
		t.Fatalf("stored owner %+v %v", o, ok)
	}
	rm := &cmt.PPDUPRemove{Collection: "example", NodeID: "n2", URI: "http://b/", Checksum: cs, PPDUPID: "ds-1", DBName: "/d/example"}
	want := []Action{{To: ds, Msg: &cmt.PPDUPRemoveOK{Collection: "example", NodeID: "n2", URI: "http://b/", Checksum: cs, PPDUPID: "ds-1", DBName: "/d/example"}}}
	for i := range 2 { // the second time the checksum is absent: still answered
		if diff := cmp.Diff(want, r.Receive(ds, rm, t0)); diff != "" {
			t.Errorf("REMOVE %d (-want +got):\n%s", i, diff)
		}
	}
	r.Receive(ds, &cmt.PPDUPAdd{Collection: "example", NodeID: "n", URI: "http://c/", Checksum: csum("c"), PPDUPID: "ds-1", DBName: "x"}, t0)
	if got := r.Receive(ds, &cmt.PPDUPConfRemove{Collection: "example", PPDUPID: "ds-1"}, t0); got != nil {
		t.Errorf("CONF_REMOVE answered %+v", got)
	}
	if n := countMappings(t, st, ""); n != 0 {
		t.Errorf("%d mappings left after CONF_REMOVE", n)
	}
	if recs, _ := st.Collections(); len(recs) != 0 {
		t.Errorf("configuration left after CONF_REMOVE: %+v", recs)
	}
	if got := r.Receive(ds, &cmt.PPDUPConfRemove2{Collection: "example"}, t0); got != nil {
		t.Errorf("CONF_REMOVE2 answered %+v", got)
	}
	if got := r.Receive(99, &cmt.PPDUPKeepalive{}, t0); got != nil {
		t.Errorf("message from an unknown connection answered: %+v", got)
	}
}

func TestReplicaKeepAlive(t *testing.T) {
	logs := &logBuffer{}
	r := newReplica(ReplicaConfig{}, NewMemStore(), logs.logger())
	r.Connect(1, t0)
	r.Tick(t0)
	ka := []Action{{To: 1, Msg: &cmt.PPDUPKeepalive{}}}
	if diff := cmp.Diff(ka, r.Tick(t0.Add(2*time.Minute))); diff != "" {
		t.Fatalf("tick (-want +got):\n%s", diff)
	}
	r.Tick(t0.Add(4 * time.Minute))
	if !logs.contains("duplicate server did not answer the previous keep-alive") {
		t.Error("missing ack not logged")
	}
	r.Receive(1, &cmt.PPDUPKeepaliveAck{}, t0)
	logs.reset()
	r.Tick(t0.Add(6 * time.Minute))
	if logs.contains("did not answer") {
		t.Error("an answered keep-alive was logged as missing")
	}
}

func TestReplicaStoreErrorReported(t *testing.T) {
	st := NewMemStore()
	st.FailWrites = fmt.Errorf("disk full")
	r := newReplica(ReplicaConfig{}, st)
	r.Connect(1, t0)
	got := r.Receive(1, &cmt.PPDUPAdd{Collection: "c", NodeID: "n", URI: "u", Checksum: csum("x"), PPDUPID: "p", DBName: "d"}, t0)
	if len(got) != 1 {
		t.Fatalf("got %+v", got)
	}
	if _, ok := got[0].Msg.(*cmt.PPDUPError); !ok {
		t.Fatalf("got %#v, want PPDUP_ERROR", got[0].Msg)
	}
}

func countMappings(t *testing.T, st Store, coll string) int {
	t.Helper()
	n := 0
	if err := st.Mappings(coll, func(Key, Owner) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}

func dump(t *testing.T, st Store) map[Key]Owner {
	t.Helper()
	m := map[Key]Owner{}
	if err := st.Mappings("", func(k Key, o Owner) error { m[k] = o; return nil }); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestDSReplicaSimulation wires a DS and a Replica machine through an
// in-order link that the test can cut, runs random adds, removes and
// collection removals from two node schedulers with replica outages and
// timeouts, and checks that every node scheduler message is answered and
// that the replica's store ends identical to the duplicate server's.
func TestDSReplicaSimulation(t *testing.T) {
	for seed := range uint64(40) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 7))
			dsSt, rSt := NewMemStore(), NewMemStore()
			ds, _ := newDS(DSConfig{NodeID: "ds", Replica: true, Window: 8, ReplicaTimeout: time.Second}, dsSt)
			r := newReplica(ReplicaConfig{}, rSt)
			now := t0
			ds.Connect(ns1, now)
			ds.Connect(ns2, now)
			var toR, toDS []cmt.Message // in-flight link contents
			link := PeerID(100)
			up := false
			outstanding := map[string]int{} // checksum requests not answered yet, per collection
			route := func(acts []Action) {
				for _, a := range acts {
					switch {
					case a.Close && a.To == link:
						up, toR, toDS = false, nil, nil
						ds.Disconnect(link, now)
						r.Disconnect(link, now)
					case a.To == link:
						toR = append(toR, a.Msg)
					case a.To == ns1 || a.To == ns2:
						switch m := a.Msg.(type) {
						case *cmt.PPDUPAddOK:
							outstanding[m.Collection]--
						case *cmt.PPDUPRemoveOK:
							outstanding[m.Collection]--
						}
					}
				}
			}
			connect := func() {
				link++
				up = true
				r.Connect(link, now)
				route(ds.ConnectReplica(link, now))
			}
			connect()
			colls := []string{"a", "b"}
			for step := 0; step < 400; step++ {
				switch x := rng.IntN(100); {
				case x < 40:
					peer := []PeerID{ns1, ns2}[rng.IntN(2)]
					c := colls[rng.IntN(2)]
					outstanding[c]++
					route(ds.Receive(peer, add(c, fmt.Sprint(peer), fmt.Sprintf("http://%d/%d", peer, rng.IntN(6)), csum(fmt.Sprint(rng.IntN(5)))), now))
				case x < 55:
					peer := []PeerID{ns1, ns2}[rng.IntN(2)]
					c := colls[rng.IntN(2)]
					outstanding[c]++
					route(ds.Receive(peer, remove(c, fmt.Sprint(peer), fmt.Sprintf("http://%d/%d", peer, rng.IntN(6)), csum(fmt.Sprint(rng.IntN(5)))), now))
				case x < 57:
					c := colls[rng.IntN(2)]
					route(ds.Receive(ns1, &cmt.PPDUPConfRemove{Collection: c}, now))
					route(ds.Receive(ns1, &cmt.PPDUPConfRemove2{Collection: c}, now))
					outstanding[c] = 0 // messages dropped with the collection are not answered
				case x < 80 && up && len(toR) > 0: // deliver to the replica
					m := toR[0]
					toR = toR[1:]
					for _, a := range r.Receive(link, m, now) {
						toDS = append(toDS, a.Msg)
					}
				case x < 95 && up && len(toDS) > 0: // deliver to the DS
					m := toDS[0]
					toDS = toDS[1:]
					route(ds.Receive(link, m, now))
				case x < 97 && up: // cut the link
					up, toR, toDS = false, nil, nil
					route(ds.Disconnect(link, now))
					r.Disconnect(link, now)
				case x < 98 && !up:
					connect()
				default:
					now = now.Add(300 * time.Millisecond)
					route(ds.Tick(now))
				}
			}
			// Quiesce: reconnect and deliver everything.
			if !up {
				connect()
			}
			for i := 0; len(toR)+len(toDS) > 0 || ds.Status().Backlog; i++ {
				if i > 100000 {
					t.Fatalf("no quiescence: %+v", ds.Status())
				}
				for len(toR) > 0 {
					m := toR[0]
					toR = toR[1:]
					for _, a := range r.Receive(link, m, now) {
						toDS = append(toDS, a.Msg)
					}
				}
				for len(toDS) > 0 {
					m := toDS[0]
					toDS = toDS[1:]
					route(ds.Receive(link, m, now))
				}
				if len(toR) == 0 && ds.Status().Backlog {
					route(ds.Tick(now))
				}
			}
			if st := ds.Status(); st.InFlight != 0 || st.Held != 0 {
				t.Fatalf("pending work left: %+v", st)
			}
			for c, n := range outstanding {
				if n != 0 {
					t.Errorf("collection %s: %d checksum requests unanswered (negative: answered twice)", c, n)
				}
			}
			if diff := cmp.Diff(dump(t, dsSt), dump(t, rSt)); diff != "" {
				t.Fatalf("replica differs from the duplicate server (-ds +replica):\n%s", diff)
			}
			if dsSt.Dirty() != 0 {
				t.Errorf("%d dirty keys left", dsSt.Dirty())
			}
		})
	}
}
