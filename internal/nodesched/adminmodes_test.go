package nodesched

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/config"
	"github.com/trawl/trawl/internal/nodesched/crawlpipe"
	"github.com/trawl/trawl/internal/store"
)

// TestAdminModesPersist sets a collection's feeding suspension and
// refresh-only mode, closes the crawl store, opens it in a new machine
// and checks that the collection comes back with both; a removed
// collection comes back without them.
func TestAdminModesPersist(t *testing.T) {
	dir := t.TempDir()
	now := time.Unix(1_700_000_000, 0)
	cfg, err := config.Parse("t.xml", []byte(testXML), nil)
	if err != nil {
		t.Fatal(err)
	}
	open := func() (*Machine, *store.Store) {
		t.Helper()
		st, err := store.Open(dir, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		m, err := NewMachine(MachineConfig{NodeID: "n1", Store: st, Env: crawlpipe.Env{NodeID: "n1"}}, now)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.AddCollection(cfg.Collections[0], now); err != nil {
			t.Fatal(err)
		}
		return m, st
	}
	type modes struct {
		Feeding     FeedingState
		RefreshOnly bool
		Crawl       cmt.CollectionState
	}
	for _, tc := range []struct {
		name string
		do   func(m *Machine) error
		want modes
	}{
		{"nothing set", func(m *Machine) error { return nil }, modes{Crawl: cmt.StateActive}},
		{"all suspended, refresh-only", func(m *Machine) error {
			m.SetRefreshOnly("c1", true)
			return m.Handle(MNS, &cmt.AdmConfFeedingSuspend{Collection: "c1", Suspend: true}, now)
		}, modes{FeedingState{All: true}, true, cmt.StateActive}},
		{"crawling suspended", func(m *Machine) error {
			return m.Handle(MNS, &cmt.AdmConfSuspend{Collection: "c1", State: cmt.StateSuspendedUser}, now)
		}, modes{FeedingState{All: true}, true, cmt.StateSuspendedUser}},
		{"crawling resumed", func(m *Machine) error {
			return m.Handle(MNS, &cmt.AdmConfResume{Collection: "c1"}, now)
		}, modes{FeedingState{All: true}, true, cmt.StateActive}},
		{"two destinations suspended", func(m *Machine) error {
			m.SetRefreshOnly("c1", false)
			if err := m.Handle(MNS, &cmt.AdmConfFeedingSuspend{Collection: "c1", Suspend: false}, now); err != nil {
				return err
			}
			return m.Handle(MNS, &cmt.AdmConfFeedingSuspend{Collection: "c1", Suspend: true, Destinations: []string{"b", "a"}}, now)
		}, modes{FeedingState{Destinations: map[string]bool{"a": true, "b": true}}, false, cmt.StateActive}},
		{"removed", func(m *Machine) error {
			m.SetRefreshOnly("c1", true)
			if err := m.Handle(MNS, &cmt.AdmConfSuspend{Collection: "c1", State: cmt.StateSuspendedUser}, now); err != nil {
				return err
			}
			return m.Handle(MNS, &cmt.AdmConfRemove{Collection: "c1"}, now)
		}, modes{Crawl: cmt.StateActive}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, st := open()
			if err := tc.do(m); err != nil {
				t.Fatal(err)
			}
			persist(t, m, st)
			st.Close()
			m, st = open()
			defer st.Close()
			got := modes{m.Feeding("c1"), m.RefreshOnly("c1"), m.colls["c1"].state}
			if diff := cmp.Diff(tc.want, got, cmp.Comparer(func(a, b map[string]bool) bool {
				return len(a) == len(b) && cmp.Equal(a, b) || len(a) == 0 && len(b) == 0
			})); diff != "" {
				t.Errorf("after reopening (-want +got):\n%s", diff)
			}
		})
	}
}
