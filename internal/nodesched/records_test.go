package nodesched

import (
	"testing"
	"time"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/config"
	"github.com/trawl/trawl/internal/nodesched/crawlpipe"
	"github.com/trawl/trawl/internal/store"
)

// persist applies m's records as its driver does: the staged store writes
// are committed to st (no feeding chain), the uri_dir work runs at once.
func persist(t testing.TB, m *Machine, st *store.Store) {
	t.Helper()
	for _, r := range m.Records() {
		switch x := r.(type) {
		case storeWrites:
			if err := commitWrites(st, nil, x); err != nil {
				t.Fatal(err)
			}
		case uriDirWork:
			x.f()
		}
	}
}

// TestMachineWritesOnlyRecords: the machine's store writes (a route, the
// DNS answer, queued URIs) reach the store only when the records it hands
// over are committed; until then it goes on from them (the URI sent twice
// is queued once), and all of them are one storeWrites record.
func TestMachineWritesOnlyRecords(t *testing.T) {
	st, err := store.Open(t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Unix(1_700_000_000, 0)
	m, err := NewMachine(MachineConfig{NodeID: "n1", Store: st, Env: crawlpipe.Env{NodeID: "n1"}}, now)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse("t.xml", []byte(testXML), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.AddCollection(cfg.Collections[0], now); err != nil {
		t.Fatal(err)
	}
	persist(t, m, st)
	uri := &cmt.UMURI{Collection: "c1", Entry: cmt.Entry{URI: uriStructure("http://a.test/x"),
		Referrer: cmt.EmptyURIStructure(), Flags: cmt.URIFUnscreened}}
	for _, msg := range []cmt.Message{
		&cmt.UMAddRoute{Collection: "c1", Site: "a.test", RouteAttr: "a.test", NodeID: "n1", TTL: 60,
			Addrs: []cmt.AddrInfo{{Family: 2, SockType: 1, IP: "127.0.0.1"}}},
		uri, uri,
	} {
		if err := m.Handle(MNS, msg, now); err != nil {
			t.Fatal(err)
		}
	}
	if got := m.Stats("c1")["uris_seen_before"]; got != 1 {
		t.Errorf("uris_seen_before = %d, want 1", got)
	}
	if _, ok, _ := st.Route("c1", "a.test"); ok {
		t.Fatal("the route is in the store before the records were applied")
	}
	if _, ok, _ := st.DNS("a.test", now); ok {
		t.Fatal("the DNS answer is in the store before the records were applied")
	}
	recs := m.Records()
	if len(recs) != 1 {
		t.Fatalf("records = %v, want one storeWrites", recs)
	}
	w, ok := recs[0].(storeWrites)
	if !ok || w.b == nil {
		t.Fatalf("record %T, want storeWrites with a batch", recs[0])
	}
	if err := commitWrites(st, nil, w); err != nil {
		t.Fatal(err)
	}
	if n, ok, _ := st.Route("c1", "a.test"); !ok || n != 1 {
		t.Errorf("route after the commit: %d %v", n, ok)
	}
	if _, ok, _ := st.DNS("a.test", now); !ok {
		t.Errorf("no DNS answer after the commit")
	}
	if recs := m.Records(); len(recs) != 0 {
		t.Errorf("records after they were taken: %v", recs)
	}
}
