package nodesched

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/trawl/trawl/internal/config"
	"github.com/trawl/trawl/internal/nodesched/crawlpipe"
	"github.com/trawl/trawl/internal/store"
)

// TestAnchorPairs records anchor texts as the crawl steps do and reads them
// as feeding does, across restarts of the machine over one store: two
// texts for one target in one step both stay, a text seen again is kept
// once, a fed target gets its newest maxAnchors texts (oldest first) and
// its older pairs are deleted, and a list of the layout before pairs is
// read with the pairs and rewritten as pairs when its target is fed.
func TestAnchorPairs(t *testing.T) {
	st, machine := feedTestStore(t)
	now := time.Unix(1_700_000_000, 0)
	step := func(m *Machine, c *collection, links ...crawlpipe.Link) {
		t.Helper()
		now = now.Add(time.Second)
		m.now = now
		m.stepAnchors = m.stepAnchors[:0] // as record does
		b := st.NewBatch()
		if err := m.recordAnchors(c, b, links); err != nil {
			t.Fatal(err)
		}
		if err := b.Commit(); err != nil {
			t.Fatal(err)
		}
		c.anchorsSeen.add(m.stepAnchors)
	}
	feed := func(m *Machine, c *collection, uri string) []string {
		t.Helper()
		b := st.NewBatch()
		as, err := m.feedAnchors(c, b, uri)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Commit(); err != nil {
			t.Fatal(err)
		}
		return as
	}
	pairs := func(uri string) int {
		n := 0
		if err := st.IterRaw(store.SpaceMeta, pairPrefix("c1", uri), func(_, _ []byte) error { n++; return nil }); err != nil {
			t.Fatal(err)
		}
		return n
	}
	const x, y = "http://a.test/x", "http://a.test/y"
	link := func(uri, text string) crawlpipe.Link { return crawlpipe.Link{URI: uri, Site: "a.test", Anchor: text} }

	m, c := machine()
	step(m, c, link(x, " first "), link(x, "second"), link(x, "first"), link(y, ""))
	step(m, c, link(x, "first"))
	if diff := cmp.Diff([]string{"first", "second"}, m.anchors("c1", x)); diff != "" {
		t.Errorf("one step's two texts (-want +got):\n%s", diff)
	}
	if as := m.anchors("c1", y); as != nil {
		t.Errorf("anchors of a link without text: %q", as)
	}
	m, c = machine() // restarted: nothing remembered
	var want []string
	for i := range maxAnchors + 8 {
		a := fmt.Sprintf("text %02d", i)
		step(m, c, link(x, a))
		want = append(want, a)
	}
	step(m, c, link(x, "first")) // seen again after a restart: moves up
	want = append(want, "first")
	want = want[len(want)-maxAnchors:]
	if diff := cmp.Diff(want, feed(m, c, x)); diff != "" {
		t.Errorf("fed anchors (-want +got):\n%s", diff)
	}
	if n := pairs(x); n != maxAnchors {
		t.Errorf("%d pairs left after feeding, want %d", n, maxAnchors)
	}

	// A list written before pairs existed, and a pair recorded after.
	const z = "http://a.test/z"
	b := st.NewBatch()
	if err := b.SetRaw(store.SpaceMeta, anchorKey("c1", z), encodeAnchors([]string{"old one", "old two"})); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	m, c = machine()
	step(m, c, link(z, "new"), link(z, "old one"))
	if diff := cmp.Diff([]string{"old two", "new", "old one"}, feed(m, c, z)); diff != "" {
		t.Errorf("old list and pairs (-want +got):\n%s", diff)
	}
	if _, ok, err := st.GetRaw(store.SpaceMeta, anchorKey("c1", z)); err != nil || ok {
		t.Errorf("old list still there after feeding (err %v)", err)
	}
	m, _ = machine()
	if diff := cmp.Diff([]string{"old two", "new", "old one"}, m.anchors("c1", z)); diff != "" {
		t.Errorf("rewritten as pairs (-want +got):\n%s", diff)
	}
	if !slices.Equal(m.anchors("c1", x), want) {
		t.Errorf("anchors of %s after restart: %q", x, m.anchors("c1", x))
	}
}

// feedTestStore opens a store and returns it with a function that starts
// a machine over it with collection c1 (pausedXML), as after a restart.
func feedTestStore(t *testing.T) (*store.Store, func() (*Machine, *collection)) {
	t.Helper()
	st, err := store.Open(t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	cfg, err := config.Parse("t.xml", []byte(pausedXML("no")), nil)
	if err != nil {
		t.Fatal(err)
	}
	return st, func() (*Machine, *collection) {
		t.Helper()
		now := time.Unix(1_700_000_000, 0)
		m, err := NewMachine(MachineConfig{NodeID: "n1", Store: st, Env: crawlpipe.Env{NodeID: "n1"}}, now)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.AddCollection(cfg.Collections[0], now); err != nil {
			t.Fatal(err)
		}
		return m, m.colls["c1"]
	}
}
