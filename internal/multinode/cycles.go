package multinode

import "github.com/trawl/trawl/internal/marshal"

// refreshCyclesKey is the CMD_UM_STAT counter of refresh cycles started.
// It is not summed over the node schedulers: one refetch (or the common
// refresh period) starts a cycle on every node scheduler, and the
// statistics engine starts a new cycle of the collection each time the
// count grows. The collection's count is the largest node scheduler's.
const refreshCyclesKey = "refresh_cycles"

// takeCycles adds the refresh cycles in node's statistics delta d to the
// node's count and returns d without them.
func (col *collection) takeCycles(node string, d marshal.Dict) marshal.Dict {
	out := make(marshal.Dict, 0, len(d))
	for _, p := range d {
		if k, ok := p.Key.(marshal.Bytes); ok && string(k) == refreshCyclesKey {
			if v, ok := p.Value.(marshal.Int); ok {
				if col.cycles == nil {
					col.cycles = map[string]int64{}
				}
				col.cycles[node] += int64(v)
			}
			continue
		}
		out = append(out, p)
	}
	return out
}

// withCycles appends the collection's refresh cycle count, the largest
// node scheduler's, to d.
func (col *collection) withCycles(d marshal.Dict) marshal.Dict {
	var n int64
	for _, c := range col.cycles {
		n = max(n, c)
	}
	if n == 0 {
		return d
	}
	return append(d, marshal.Pair{Key: marshal.Str(refreshCyclesKey), Value: marshal.Int(n)})
}
