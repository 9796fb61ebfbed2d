package multinode

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cockroachdb/pebble/vfs"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/trawl/trawl/internal/cmt"
)

// TestServerStateSurvivesRestart suspends a collection's crawl and the
// feeding of one destination on a multinode scheduler with a data
// directory, stops it and starts it again: the restarted one reports the
// collection suspended and sends both suspensions after CMD_ADM_CONF_ADD
// to a node scheduler that registers; after a resume and another restart
// the collection is active and nothing is sent.
func TestServerStateSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	hosts := writeHosts(t, dir, 3)
	spec := testSpec(t, "web", startURIs("http://site1.farm.test/"))
	ctx := context.Background()
	state := func(s *Server) cmt.CollectionState {
		t.Helper()
		infos, err := s.CollectionInfos(ctx)
		if err != nil || len(infos) != 1 {
			t.Fatalf("collections: %v %v", infos, err)
		}
		return infos[0].State
	}

	srv, stop := newTestServer(t, data, hosts, spec)
	if err := srv.SuspendCollection(ctx, "web", cmt.StateSuspendedUser); err != nil {
		t.Fatal(err)
	}
	if err := srv.SuspendFeeding(ctx, "web", true, []string{"archive"}); err != nil {
		t.Fatal(err)
	}
	stop()

	srv, stop = newTestServer(t, data, hosts, testSpec(t, "web", startURIs("http://site1.farm.test/")))
	if got := state(srv); got != cmt.StateSuspendedUser {
		t.Errorf("after a restart: state %d, want %d (suspended)", got, cmt.StateSuspendedUser)
	}
	n := dialFakeNode(t, srv.Addr().String(), "node-1", nil)
	n.wait("CONF_ADD", isConfAdd("web"))
	sus := n.wait("CONF_SUSPEND", func(m cmt.Message) bool { _, ok := m.(*cmt.AdmConfSuspend); return ok }).(*cmt.AdmConfSuspend)
	if sus.Collection != "web" || sus.State != cmt.StateSuspendedUser {
		t.Errorf("suspension sent: %+v", sus)
	}
	fs := n.wait("FEEDING_SUSPEND", func(m cmt.Message) bool { _, ok := m.(*cmt.AdmConfFeedingSuspend); return ok }).(*cmt.AdmConfFeedingSuspend)
	if !fs.Suspend || !slices.Equal(fs.Destinations, []string{"archive"}) {
		t.Errorf("feeding suspension sent: %+v", fs)
	}
	if err := srv.ResumeCollection(ctx, "web"); err != nil {
		t.Fatal(err)
	}
	if err := srv.SuspendFeeding(ctx, "web", false, nil); err != nil {
		t.Fatal(err)
	}
	n.close()
	stop()

	srv, stop = newTestServer(t, data, hosts, testSpec(t, "web", startURIs("http://site1.farm.test/")))
	defer stop()
	if got := state(srv); got != cmt.StateActive {
		t.Errorf("after a resume and a restart: state %d, want active", got)
	}
}

func TestRouteStoreStates(t *testing.T) {
	s, err := OpenRouteStore("routes", vfs.NewMem(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	load := func() []PersistState {
		var out []PersistState
		if err := s.LoadStates(func(st PersistState) { out = append(out, st) }); err != nil {
			t.Fatal(err)
		}
		return out
	}
	a := PersistState{Collection: "a", State: cmt.StateSuspendedDisk}
	b := PersistState{Collection: "b", State: cmt.StateActive, FeedDests: []string{"x", "y"}}
	c := PersistState{Collection: "c", State: cmt.StateActive, FeedAll: true}
	if err := s.Apply([]Action{a, b, c, PersistRoute{Collection: "a", Attr: "h", NodeID: "n1", Site: "h:80"}}); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]PersistState{a, b, c}, load(), cmpopts.EquateEmpty()); d != "" {
		t.Errorf("states (-want +got):\n%s", d)
	}
	routes := 0
	if err := s.Load(func(StoredRoute) { routes++ }); err != nil || routes != 2 {
		t.Errorf("routes %d %v: the state records must not read as routes", routes, err)
	}
	// Active with nothing suspended deletes the record; dropping the
	// collection's routes deletes it too.
	if err := s.Apply([]Action{PersistState{Collection: "a", State: cmt.StateActive}, DropRoutes{Collection: "b"}}); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]PersistState{c}, load(), cmpopts.EquateEmpty()); d != "" {
		t.Errorf("states after resume and drop (-want +got):\n%s", d)
	}
}

func FuzzDecodeState(f *testing.F) {
	f.Add(encodeState(PersistState{State: cmt.StateSuspendedUser, FeedDests: []string{"a", "b"}}))
	f.Add([]byte{1, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		st, ok := decodeState("c", b)
		if !ok {
			return
		}
		if st2, ok := decodeState("c", encodeState(st)); !ok || !cmp.Equal(st, st2, cmpopts.EquateEmpty()) {
			t.Fatalf("re-encode: %+v %+v", st, st2)
		}
	})
}
