package nodesched

import (
	"fmt"
	"maps"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/trawl/trawl/internal/nodesched/crawlpipe"
	"github.com/trawl/trawl/internal/store"
)

// stepCounters are counters the size of a crawl's: a collection's and a
// site's.
func stepCounters(n int) Counters {
	c := Counters{}
	for i := range n {
		c[fmt.Sprintf("counter_%02d", i)] = int64(i * 1000)
	}
	return c
}

// persistRound writes c's counters (collection and the dirty sites) in
// one batch and commits it.
func persistRound(t testing.TB, st *store.Store, c *collection) {
	t.Helper()
	b := st.NewBatch()
	m := &Machine{st: st}
	if err := m.persistStats(c, b, false); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
}

// TestStatsPersistRoundTrip: the counters written by persistStats read
// back as they were (collection, sites, report sequence), a site counted
// again is written again, a batch that never commits leaves the saved
// counters as they were, and a forgotten collection has none.
func TestStatsPersistRoundTrip(t *testing.T) {
	st, err := store.Open(t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	c := &collection{s: &crawlpipe.Settings{Name: "web"}, stats: stepCounters(60), sites: map[string]Counters{}}
	c.ps.seq = 7
	c.site("a.test")["fetched"] = 3
	c.site("b.test")["fetched"] = 4
	persistRound(t, st, c)
	c.stats["counter_01"]++
	c.stats["new_counter"] = 1
	c.site("a.test")["fetched"]++
	persistRound(t, st, c)

	sv, err := readSavedStats(st, "web")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(c.stats, sv.coll); diff != "" {
		t.Errorf("collection (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(c.sites, sv.sites); diff != "" {
		t.Errorf("sites (-want +got):\n%s", diff)
	}
	if sv.seq != 7 {
		t.Errorf("seq %d, want 7", sv.seq)
	}
	// A step whose batch never commits (a kill -9 before it) leaves no count.
	saved := maps.Clone(c.stats)
	c.stats["counter_02"]++
	b := st.NewBatch()
	if err := (&Machine{st: st}).persistStats(c, b, false); err != nil {
		t.Fatal(err)
	}
	b.Discard()
	if sv, _ = readSavedStats(st, "web"); !maps.Equal(saved, sv.coll) {
		t.Errorf("an uncommitted batch changed the saved counters")
	}
	b = st.NewBatch()
	if err := forgetStats(b, "web"); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	if sv, err = readSavedStats(st, "web"); err != nil || sv.coll != nil || len(sv.sites) > 0 {
		t.Errorf("after forgetStats: %+v, %v", sv, err)
	}
}

// FuzzDecodeCounters: the decoder of a saved counters record never
// panics, and reads back what was encoded.
func FuzzDecodeCounters(f *testing.F) {
	var p statsPersist
	st, err := store.Open(f.TempDir(), store.Options{})
	if err != nil {
		f.Fatal(err)
	}
	defer st.Close()
	b := st.NewBatch()
	defer b.Discard()
	for _, c := range []Counters{{}, {"fetched": 1}, stepCounters(10), {"neg": -5, "big": 1 << 62}} {
		v, err := p.appendCounters(nil, b, "web", c)
		if err != nil {
			f.Fatal(err)
		}
		got, err := decodeCounters(v, p.names)
		if err != nil || !maps.Equal(got, c) {
			f.Fatalf("round trip of %v: %v, %v", c, got, err)
		}
		f.Add(v)
	}
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = decodeCounters(data, p.names)
	})
}

// BenchmarkPersistStats is the cost a crawl step pays to persist its
// counters: a collection of 60 counters and one site of 40 counted, into
// the step's batch.
func BenchmarkPersistStats(b *testing.B) {
	st, err := store.Open(b.TempDir(), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	c := &collection{s: &crawlpipe.Settings{Name: "web"}, stats: stepCounters(60), sites: map[string]Counters{}}
	maps.Copy(c.site("a.test"), stepCounters(40))
	m := &Machine{st: st}
	bytes := 0
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		c.stats["counter_00"]++
		c.site("a.test")["counter_00"]++
		batch := st.NewBatch()
		if err := m.persistStats(c, batch, false); err != nil {
			b.Fatal(err)
		}
		bytes = batch.Len()
		batch.Discard()
	}
	b.ReportMetric(float64(bytes), "batch-bytes/op")
}

// BenchmarkPersistStatsBaseline is BenchmarkPersistStats without the
// counters: the batch alone.
func BenchmarkPersistStatsBaseline(b *testing.B) {
	st, err := store.Open(b.TempDir(), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	b.ReportAllocs()
	for b.Loop() {
		batch := st.NewBatch()
		batch.Discard()
	}
}
