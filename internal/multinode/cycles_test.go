package multinode

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/marshal"
)

// TestRefreshCyclesNotSummedOverNodes: one refetch starts a refresh cycle
// on every node scheduler, and each reports refresh_cycles 1; the
// collection has started one cycle, not one per node (the statistics
// engine starts a cycle each time the count grows). Other counters add up
// over the nodes. Reports carry a node's totals (nodestats.go).
func TestRefreshCyclesNotSummedOverNodes(t *testing.T) {
	h := newHarness(t, Config{}, testSpec(t, "c", ""))
	h.join("n1", true)
	h.join("n2", true)
	stat := func(node string, pairs ...int64) {
		d := marshal.Dict{{Key: marshal.Str("fetched"), Value: marshal.Int(pairs[0])}}
		if pairs[1] != 0 {
			d = append(d, marshal.Pair{Key: marshal.Str("refresh_cycles"), Value: marshal.Int(pairs[1])})
		}
		h.recv(node, &cmt.UMStat{Collection: "c", Stats: d})
	}
	get := func() map[string]int64 {
		d, _ := h.m.Stats("c")
		out := map[string]int64{}
		for _, p := range d {
			if v, ok := p.Value.(marshal.Int); ok {
				out[string(p.Key.(marshal.Bytes))] = int64(v)
			}
		}
		return out
	}
	stat("n1", 10, 0)
	stat("n2", 5, 0)
	stat("n1", 11, 1) // the refetch reaches n1
	if got := get(); got["refresh_cycles"] != 1 || got["fetched"] != 16 {
		t.Errorf("after n1's new cycle: %v", got)
	}
	stat("n2", 7, 1) // and n2
	if diff := cmp.Diff(map[string]int64{"fetched": 18, "refresh_cycles": 1}, get()); diff != "" {
		t.Errorf("after both nodes' new cycle (-want +got):\n%s", diff)
	}
	stat("n2", 7, 2) // n2's own refresh period comes first
	stat("n1", 11, 2)
	if got := get()["refresh_cycles"]; got != 2 {
		t.Errorf("refresh_cycles %d after a second cycle, want 2", got)
	}
}
