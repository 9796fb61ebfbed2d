package multinode

import (
	"log/slog"
	"sort"
	"strings"

	"github.com/trawl/trawl/internal/marshal"
)

// The statistics of a collection on the multinode scheduler are what its
// node schedulers reported, kept per node scheduler and summed on demand.
// A node scheduler's CMD_UM_STAT carries its cumulative counters (written
// to its store before it sends them), a sequence number "seq" that grows
// with every report, and the cumulative counters of the sites that changed
// since its previous report under "sites". The multinode scheduler keeps
// the last report of each node scheduler (a site's last counters), so a
// report that arrives twice or late changes nothing, and persists it
// (PersistStats) before the next report can replace it, so a restart of
// either side neither loses nor double counts. A report with a lower seq
// than the kept one is ignored, except as the first report of a new
// registration (a node scheduler that lost its store starts again).
//
// Summing over the node schedulers: integers and floats add, nested
// dictionaries add key by key, maxima (members named ...Max, counters
// named k_max: the largest sample a node scheduler saw) keep the largest,
// the averages (DocSizeAvg, DLTimeAvg) add up to nothing meaningful and
// are not read (internal/stats recomputes them from the totals), strings and other values take the
// last node scheduler's (in node id order). The gauges (queued,
// active_sites) count for nothing once their node scheduler is
// disconnected.

// nodeStats is one node scheduler's last report for a collection.
type nodeStats struct {
	seq int64
	// conn is the connection of the last report (live is false for a
	// report restored from the store).
	conn  ConnID
	live  bool
	coll  marshal.Dict
	sites map[string]marshal.Dict
}

// PersistStats records a node scheduler's last report for a collection:
// Seq and Coll always, Sites those the report carried.
type PersistStats struct {
	Collection, Node string
	Seq              int64
	Coll             marshal.Dict
	Sites            map[string]marshal.Dict
}

func (PersistStats) isAction() {}

// statGauges are the keys of CMD_UM_STAT that are current values, not
// totals: they count for nothing while their node scheduler is away.
var statGauges = map[string]bool{"queued": true, "active_sites": true, "ActiveSites": true}

// statIn takes a node scheduler's CMD_UM_STAT.
func (m *MNS) statIn(c *conn, col *collection, d marshal.Dict) {
	var seq int64
	var sites marshal.Dict
	lastURI := ""
	body := make(marshal.Dict, 0, len(d))
	for _, p := range d {
		k, _ := p.Key.(marshal.Bytes)
		switch string(k) {
		case "seq":
			if v, ok := p.Value.(marshal.Int); ok {
				seq = int64(v)
			}
		case "sites":
			sites, _ = p.Value.(marshal.Dict)
		case "last_uri":
			if v, ok := p.Value.(marshal.Bytes); ok {
				lastURI = string(v)
			}
		default:
			body = append(body, p)
		}
	}
	if col.reports == nil {
		col.reports = map[string]*nodeStats{}
	}
	r := col.reports[c.nodeID]
	if r == nil {
		r = &nodeStats{sites: map[string]marshal.Dict{}}
		col.reports[c.nodeID] = r
	} else if seq < r.seq && r.live && r.conn == c.id {
		m.logf(slog.LevelDebug, "multinode: stale statistics ignored", "node", c.nodeID, "collection", col.spec.Name, "seq", seq, "kept", r.seq)
		return
	}
	r.seq, r.conn, r.live, r.coll = seq, c.id, true, copyDict(body)
	changed := map[string]marshal.Dict{}
	for _, sp := range sites {
		site, ok1 := sp.Key.(marshal.Bytes)
		sv, ok2 := sp.Value.(marshal.Dict)
		if !ok1 || !ok2 {
			continue
		}
		sub := make(marshal.Dict, 0, len(sv))
		for _, p := range sv {
			if k, _ := p.Key.(marshal.Bytes); string(k) == "last_uri" {
				if u, ok := p.Value.(marshal.Bytes); ok && len(u) > 0 {
					if col.siteLast == nil {
						col.siteLast = map[string]string{}
					}
					col.siteLast[string(site)] = string(u)
				}
				continue
			}
			sub = append(sub, marshal.Pair{Key: p.Key, Value: copyValue(p.Value)})
		}
		r.sites[string(site)] = sub
		changed[string(site)] = sub
	}
	if lastURI != "" {
		col.lastURI = lastURI
	}
	m.out = append(m.out, PersistStats{Collection: col.spec.Name, Node: c.nodeID, Seq: seq, Coll: r.coll, Sites: changed})
}

// RestoreStats gives the machine a node scheduler's report persisted by an
// earlier run (PersistStats); it takes effect when the collection is
// added. Sites of several records of the same node scheduler add up.
func (m *MNS) RestoreStats(st PersistStats) {
	if m.restoredStats == nil {
		m.restoredStats = map[string]map[string]*nodeStats{}
	}
	byNode := m.restoredStats[st.Collection]
	if byNode == nil {
		byNode = map[string]*nodeStats{}
		m.restoredStats[st.Collection] = byNode
	}
	r := byNode[st.Node]
	if r == nil {
		r = &nodeStats{sites: map[string]marshal.Dict{}}
		byNode[st.Node] = r
	}
	if st.Coll != nil {
		r.seq, r.coll = st.Seq, zeroGauges(st.Coll) // nobody is connected yet
	}
	for s, d := range st.Sites {
		r.sites[s] = d
	}
}

// restoreStatsInto hands col the reports restored for it.
func (m *MNS) restoreStatsInto(col *collection) {
	if r := m.restoredStats[col.spec.Name]; r != nil {
		col.reports = r
		delete(m.restoredStats, col.spec.Name)
	}
}

// zeroGauges returns d with its gauges set to 0.
func zeroGauges(d marshal.Dict) marshal.Dict {
	out := copyDict(d)
	for i, p := range out {
		if k, ok := p.Key.(marshal.Bytes); ok && statGauges[string(k)] {
			out[i].Value = marshal.Int(0)
		}
	}
	return out
}

// statsGone zeroes the gauges of a node scheduler that went away.
func (col *collection) statsGone(node string) {
	if r := col.reports[node]; r != nil {
		r.coll = zeroGauges(r.coll)
	}
}

// sumStats returns the statistics of col summed over its node schedulers,
// with the most recent last_uri and the sites under "sites".
func (col *collection) sumStats() marshal.Dict {
	nodes := make([]string, 0, len(col.reports))
	for n := range col.reports {
		nodes = append(nodes, n)
	}
	sort.Strings(nodes)
	var d marshal.Dict
	var idx map[string]int
	sites := map[string]marshal.Dict{}
	sidx := map[string]map[string]int{}
	for _, n := range nodes {
		r := col.reports[n]
		d, idx = sumDict(d, idx, r.coll)
		for s, sd := range r.sites {
			sites[s], sidx[s] = sumDict(sites[s], sidx[s], sd)
		}
	}
	if d == nil {
		d = marshal.Dict{}
	}
	if col.lastURI != "" {
		d = append(d, marshal.Pair{Key: marshal.Str("last_uri"), Value: marshal.Str(col.lastURI)})
	}
	if len(sites) > 0 {
		names := make([]string, 0, len(sites))
		for s := range sites {
			names = append(names, s)
		}
		sort.Strings(names)
		sd := make(marshal.Dict, 0, len(names))
		for _, s := range names {
			v := sites[s]
			if u := col.siteLast[s]; u != "" {
				v = append(v, marshal.Pair{Key: marshal.Str("last_uri"), Value: marshal.Str(u)})
			}
			sd = append(sd, marshal.Pair{Key: marshal.Str(s), Value: v})
		}
		d = append(d, marshal.Pair{Key: marshal.Str("sites"), Value: sd})
	}
	return d
}

// sumDict adds src into d (see the comment at the top of the file).
func sumDict(d marshal.Dict, index map[string]int, src marshal.Dict) (marshal.Dict, map[string]int) {
	if index == nil {
		index = make(map[string]int, len(d)+len(src))
		for i, p := range d {
			index[keyOf(p.Key)] = i
		}
	}
	for _, p := range src {
		k := keyOf(p.Key)
		i, ok := index[k]
		if !ok {
			index[k] = len(d)
			d = append(d, marshal.Pair{Key: p.Key, Value: copyValue(p.Value)})
			continue
		}
		if name, _ := p.Key.(marshal.Bytes); strings.HasSuffix(string(name), "_max") || strings.HasSuffix(string(name), "Max") ||
			string(name) == refreshCyclesKey { // cycles.go: the largest node's count
			if v, ok := larger(d[i].Value, p.Value); ok {
				d[i].Value = v
				continue
			}
		}
		d[i].Value = addValue(d[i].Value, p.Value)
	}
	return d, index
}

// larger returns the larger of two numbers (ok false if one is not).
func larger(a, b marshal.Value) (marshal.Value, bool) {
	f := func(v marshal.Value) (float64, bool) {
		switch x := v.(type) {
		case marshal.Int:
			return float64(x), true
		case marshal.Float:
			return float64(x), true
		}
		return 0, false
	}
	x, ok1 := f(a)
	y, ok2 := f(b)
	if !ok1 || !ok2 {
		return nil, false
	}
	if y > x {
		return b, true
	}
	return a, true
}
