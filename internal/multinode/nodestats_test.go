package multinode

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/marshal"
)

// statReport builds a node scheduler's CMD_UM_STAT: seq, the collection's
// counters and sites' counters.
func statReport(seq int64, coll map[string]int64, sites map[string]map[string]int64) *cmt.UMStat {
	d := marshal.Dict{{Key: marshal.Str("seq"), Value: marshal.Int(seq)}}
	for _, k := range sortedNames(coll) {
		d = append(d, marshal.Pair{Key: marshal.Str(k), Value: marshal.Int(coll[k])})
	}
	if len(sites) > 0 {
		var sd marshal.Dict
		for _, s := range sortedNames(sites) {
			var sub marshal.Dict
			for _, k := range sortedNames(sites[s]) {
				sub = append(sub, marshal.Pair{Key: marshal.Str(k), Value: marshal.Int(sites[s][k])})
			}
			sd = append(sd, marshal.Pair{Key: marshal.Str(s), Value: sub})
		}
		d = append(d, marshal.Pair{Key: marshal.Str("sites"), Value: sd})
	}
	return &cmt.UMStat{Collection: "c", Stats: d}
}

func sortedNames[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// flatStats turns Stats' dictionary into counters: "coll" and each site.
func flatStats(t *testing.T, d marshal.Dict) map[string]map[string]int64 {
	t.Helper()
	out := map[string]map[string]int64{"coll": {}}
	for _, p := range d {
		k := string(p.Key.(marshal.Bytes))
		switch v := p.Value.(type) {
		case marshal.Int:
			out["coll"][k] = int64(v)
		case marshal.Dict:
			for _, sp := range v {
				m := map[string]int64{}
				for _, q := range sp.Value.(marshal.Dict) {
					if n, ok := q.Value.(marshal.Int); ok {
						m[string(q.Key.(marshal.Bytes))] = int64(n)
					}
				}
				out[string(sp.Key.(marshal.Bytes))] = m
			}
		}
	}
	return out
}

// TestNodeStatsReports: each node scheduler's last report counts once
// (a report received twice changes nothing), a site's counters are its
// last ones from each node scheduler summed over the node schedulers,
// maxima keep the largest, and a stale report on the same connection is
// ignored.
func TestNodeStatsReports(t *testing.T) {
	h := newHarness(t, Config{}, testSpec(t, "c", ""))
	h.join("n1", true)
	h.join("n2", true)
	r1 := statReport(1, map[string]int64{"fetched": 10, "doc_bytes_max": 500},
		map[string]map[string]int64{"a.test": {"fetched": 6}, "b.test": {"fetched": 4}})
	h.recv("n1", r1)
	h.recv("n1", r1) // twice: still once
	h.recv("n2", statReport(1, map[string]int64{"fetched": 3, "doc_bytes_max": 900},
		map[string]map[string]int64{"b.test": {"fetched": 3}}))
	// n1 again: only a.test changed, b.test keeps its last counters.
	acts := h.recv("n1", statReport(2, map[string]int64{"fetched": 12, "doc_bytes_max": 700},
		map[string]map[string]int64{"a.test": {"fetched": 8}}))
	if ps := actionsOf[PersistStats](acts); len(ps) != 1 || ps[0].Seq != 2 || len(ps[0].Sites) != 1 {
		t.Errorf("persisted %+v, want one report of seq 2 with one site", ps)
	}
	h.recv("n1", statReport(1, map[string]int64{"fetched": 10}, nil)) // stale
	d, _ := h.m.Stats("c")
	want := map[string]map[string]int64{
		"coll":   {"fetched": 15, "doc_bytes_max": 900},
		"a.test": {"fetched": 8},
		"b.test": {"fetched": 7},
	}
	if diff := cmp.Diff(want, flatStats(t, d)); diff != "" {
		t.Errorf("statistics (-want +got):\n%s", diff)
	}
}

// TestNodeStatsPersist: what the reports persisted, read back from the
// routing database by a new machine, gives the same statistics (the
// gauges at 0 until the node schedulers report again), and a node
// scheduler that reports again after the restart replaces its part
// instead of adding to it.
func TestNodeStatsPersist(t *testing.T) {
	st, err := OpenRouteStore(t.TempDir(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	h := newHarness(t, Config{}, testSpec(t, "c", ""))
	h.join("n1", true)
	h.join("n2", true)
	for _, x := range []struct {
		node string
		r    *cmt.UMStat
	}{
		{"n1", statReport(1, map[string]int64{"fetched": 10, "queued": 4}, map[string]map[string]int64{"a.test": {"fetched": 10}})},
		{"n2", statReport(5, map[string]int64{"fetched": 3}, map[string]map[string]int64{"b.test": {"fetched": 3}})},
		{"n1", statReport(2, map[string]int64{"fetched": 11, "queued": 2}, map[string]map[string]int64{"c.test": {"fetched": 1}})},
	} {
		if err := st.Apply(h.recv(x.node, x.r)); err != nil {
			t.Fatal(err)
		}
	}
	before, _ := h.m.Stats("c")

	h2 := &harness{t: t, m: New(Config{}), now: t0, conn: map[string]ConnID{}}
	if err := st.LoadStats(h2.m.RestoreStats); err != nil {
		t.Fatal(err)
	}
	if _, err := h2.m.AddCollection(testSpec(t, "c", ""), h2.now); err != nil {
		t.Fatal(err)
	}
	after, _ := h2.m.Stats("c")
	want := flatStats(t, before)
	want["coll"]["queued"] = 0
	if diff := cmp.Diff(want, flatStats(t, after)); diff != "" {
		t.Errorf("after a restart (-want +got):\n%s", diff)
	}
	h2.join("n1", true)
	h2.recv("n1", statReport(3, map[string]int64{"fetched": 12, "queued": 1}, map[string]map[string]int64{"a.test": {"fetched": 11}}))
	again, _ := h2.m.Stats("c")
	want = map[string]map[string]int64{"coll": {"fetched": 15, "queued": 1},
		"a.test": {"fetched": 11}, "b.test": {"fetched": 3}, "c.test": {"fetched": 1}}
	if diff := cmp.Diff(want, flatStats(t, again)); diff != "" {
		t.Errorf("after a report following the restart (-want +got):\n%s", diff)
	}
}
