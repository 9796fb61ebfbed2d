package distrib

import (
	"fmt"
	"hash/fnv"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/trawl/trawl/internal/distrib/wire"
	"github.com/trawl/trawl/internal/feed"
	"github.com/trawl/trawl/internal/loop"
)

// More jobs: the master's placement of sessions and the distributors'
// forwarding of operations to the indexers.
type (
	// Loads calls get_load on every registered dispatcher node; the
	// result is a map[int64]int64 of node id to load, -1 for a node that
	// did not answer.
	Loads struct{ Nodes map[int64]string }
	// Forward calls dispatcher_node::Method with Args at Addr; the result
	// is the session's wire.AOR.
	Forward struct {
		Node   int64
		Addr   string
		Method string
		Args   []wire.Value
	}
	// ListIndexers lists the indexers bound in the registry; the result
	// is a []wire.AOR.
	ListIndexers struct{}
	// IndexOps calls coreprocessing::session::process on the indexer of
	// one partition with encoded operations; the result is the indexer's
	// []OpResult, one per operation.
	IndexOps struct {
		Addr    string
		Session int64
		Ops     [][]byte
		Seqs    []uint64
	}
)

func (j Loads) String() string {
	ids := make([]int64, 0, len(j.Nodes))
	for id := range j.Nodes {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(a, b int) bool { return ids[a] < ids[b] })
	return fmt.Sprintf("get_load on nodes %v", ids)
}
func (j Forward) String() string {
	if len(j.Args) > 0 && j.Args[0].Tag == wire.Int {
		return fmt.Sprintf("dispatcher_node %d %s.%s session %d", j.Node, j.Addr, j.Method, j.Args[0].I)
	}
	return fmt.Sprintf("dispatcher_node %d %s.%s", j.Node, j.Addr, j.Method)
}
func (ListIndexers) String() string { return "list indexers" }
func (j IndexOps) String() string {
	return fmt.Sprintf("process %d ops of session %d at %s", len(j.Ops), j.Session, j.Addr)
}

// OpResult is the outcome of one operation: Err empty when applied,
// Rejected when it will never be.
type OpResult struct {
	Seq      uint64
	Err      string
	Rejected bool
}

// ResultValue encodes results as the reply of process: a list of
// [seq, error, rejected].
func ResultValue(rs []OpResult) wire.Value {
	out := make([]wire.Value, len(rs))
	for i, r := range rs {
		out[i] = wire.Lst(wire.I64(int64(r.Seq)), wire.Str(r.Err), wire.Bln(r.Rejected))
	}
	return wire.Lst(out...)
}

// ParseResults decodes ResultValue.
func ParseResults(v wire.Value) ([]OpResult, error) {
	if v.Tag != wire.List {
		return nil, fmt.Errorf("distrib: results are not a list")
	}
	out := make([]OpResult, 0, len(v.L))
	for _, e := range v.L {
		if e.Tag != wire.List || len(e.L) != 3 || e.L[0].Tag != wire.Int || e.L[1].Tag != wire.String || e.L[2].Tag != wire.Bool {
			return nil, fmt.Errorf("distrib: bad result %s", e)
		}
		out = append(out, OpResult{Seq: uint64(e.L[0].I), Err: e.L[1].S, Rejected: e.L[2].I != 0})
	}
	return out, nil
}

// Partition returns the partition of uri among n: FNV-1a 64 of the URI,
// modulo n.
func Partition(uri string, n int) int {
	h := fnv.New64a()
	h.Write([]byte(uri))
	return int(h.Sum64() % uint64(n))
}

// IfaceIndexSession is the indexer's session object, which takes the
// operations.
const IfaceIndexSession = "coreprocessing::session"

// IndexerName is the name an indexer of partition i binds.
func IndexerName(i int) string { return wire.NameIndexPrefix + strconv.Itoa(i) }

// IndexerObjectID is the object_id of partition i of n.
func IndexerObjectID(i, n int) string { return fmt.Sprintf("partition %d of %d", i, n) }

// parsePartition reads an indexer's AOR.
func parsePartition(a wire.AOR) (i, n int, ok bool) {
	_, err := fmt.Sscanf(a.ObjectID, "partition %d of %d", &i, &n)
	return i, n, err == nil && n > 0 && i >= 0 && i < n && a.Name == IndexerName(i)
}

// masterCall is a session_factory call the master is placing.
type masterCall struct {
	peer loop.Peer
	f    *wire.Frame
	node int64 // the node forwarded to
}

// sessionFactory serves the master's session_factory create, recreate and
// close (the [MS-FSCF] part, ours): create(collection, guarantees,
// priority), recreate(id, collection, guarantees, priority) -> the session
// AOR; close(id).
func (m *Machine) sessionFactory(peer loop.Peer, f *wire.Frame) {
	bad := func(what string) { m.Pending.Send(peer, wire.Raise(f, wire.ExcBadRequest, what), 0) }
	switch f.Method {
	case "create", "recreate":
		args := f.Args
		if f.Method == "recreate" {
			if len(args) != 4 || args[0].Tag != wire.Int || args[0].I < 0 {
				bad("recreate takes a session id, a collection, guarantees and a priority")
				return
			}
			args = args[1:]
		}
		if len(args) != 3 || args[0].Tag != wire.String {
			bad(f.Method + " takes a collection, guarantees and a priority")
			return
		}
		if len(m.nodes) == 0 {
			m.Pending.Send(peer, wire.Raise(f, wire.ExcUnavailable, "no content distributor is registered"), 0)
			return
		}
		nodes := map[int64]string{}
		for id, a := range m.nodes {
			nodes[id] = a.Addr()
		}
		m.nextJob++
		m.placing[m.nextJob] = masterCall{peer: peer, f: f}
		m.Pending.Work = append(m.Pending.Work, loop.Job{ID: m.nextJob, Spec: Loads{Nodes: nodes}})
	case "close":
		if len(f.Args) != 1 || f.Args[0].Tag != wire.Int {
			bad("close takes a session id")
			return
		}
		id := f.Args[0].I
		node, ok := m.placed[id]
		a, live := m.nodes[node]
		delete(m.placed, id)
		if !ok || !live {
			m.Pending.Send(peer, wire.ReplyTo(f), 0)
			return
		}
		m.nextJob++
		m.placing[m.nextJob] = masterCall{peer: peer, f: f, node: node}
		m.Pending.Work = append(m.Pending.Work, loop.Job{ID: m.nextJob, Spec: Forward{Node: node, Addr: a.Addr(), Method: "destroy_session", Args: []wire.Value{wire.I64(id)}}})
	default:
		bad(fmt.Sprintf("processing::session_factory has no method %q", f.Method))
	}
}

// placed handles the results of the master's Loads and Forward jobs.
func (m *Machine) placedDone(mc masterCall, ev loop.Event[*wire.Frame]) {
	f := mc.f
	switch spec := ev.Result.(type) {
	case map[int64]int64:
		best, bestLoad := int64(-1), int64(0)
		ids := make([]int64, 0, len(spec))
		for id := range spec {
			ids = append(ids, id)
		}
		sort.Slice(ids, func(a, b int) bool { return ids[a] < ids[b] })
		for _, id := range ids {
			load := spec[id]
			if load < 0 {
				m.logf(slog.LevelWarn, "a dispatcher node does not answer, dropping it", "registrant", id)
				delete(m.nodes, id)
				continue
			}
			// Sessions being placed count too, so that requests that
			// came together do not all pick the same node.
			load += int64(m.toNode[id])
			if best < 0 || load < bestLoad {
				best, bestLoad = id, load
			}
		}
		if best < 0 {
			m.Pending.Send(mc.peer, wire.Raise(f, wire.ExcUnavailable, "no content distributor answers"), 0)
			return
		}
		var id int64
		args := f.Args
		method := f.Method
		if method == "recreate" {
			id, args = f.Args[0].I, f.Args[1:]
		} else {
			m.nextSession++
			id = m.sessionBase() + m.nextSession
		}
		mc.node = best
		m.toNode[best]++
		m.nextJob++
		m.placing[m.nextJob] = mc
		fwd := []wire.Value{wire.I64(id), args[0], args[1], args[2], wire.Bln(true)}
		m.Pending.Work = append(m.Pending.Work, loop.Job{ID: m.nextJob, Spec: Forward{Node: best, Addr: m.nodes[best].Addr(), Method: method, Args: fwd}})
	default:
		if f.Method == "close" {
			m.Pending.Send(mc.peer, wire.ReplyTo(f), 0)
			return
		}
		if m.toNode[mc.node]--; m.toNode[mc.node] <= 0 {
			delete(m.toNode, mc.node)
		}
		if ev.Err != nil {
			if newer, ok := staleRefusal(ev.Err); ok {
				m.learn(newer)
				if m.role == Master && newer >= m.epoch {
					m.logf(slog.LevelWarn, "a dispatcher node has seen a newer master, stepping down", "epoch", m.epoch, "newer", newer)
					m.stepDown()
				}
			}
			if e, ok := ev.Err.(*wire.Error); ok {
				m.Pending.Send(mc.peer, wire.Raise(f, e.Name, e.What), 0)
				return
			}
			m.Pending.Send(mc.peer, wire.Raise(f, wire.ExcUnavailable, ev.Err.Error()), 0)
			return
		}
		a, ok := ev.Result.(wire.AOR)
		if !ok {
			m.Pending.Send(mc.peer, wire.Raise(f, wire.ExcUnavailable, "no session"), 0)
			return
		}
		id, _ := strconv.ParseInt(a.ObjectID, 10, 64)
		m.placed[id] = mc.node
		m.logf(slog.LevelInfo, "session placed", "session", id, "method", f.Method, "on", mc.node, "addr", a.Addr())
		m.Pending.Send(mc.peer, wire.ReplyTo(f, a.Value()), 0)
	}
}

// sessionBase makes session ids unique across masters and carries the
// master's epoch: node id in bits 48-62, the epoch's low 16 bits in 32-47,
// the incarnation's low 8 bits in 24-31, a counter at the bottom.
func (m *Machine) sessionBase() int64 {
	return (m.cfg.NodeID&0x7fff)<<48 | (m.epoch&0xffff)<<32 | (m.cfg.Incarnation&0xff)<<24
}

// SessionEpoch is the epoch of the master that allocated session id (0
// for an id no master of ours made).
func SessionEpoch(id int64) int64 { return id >> 32 & 0xffff }

// Epoch is the epoch in a master's session_factory or master_dispatcher
// AOR: the object_id "cd<node_id>.<incarnation>.e<epoch>"; 0 when it has
// none.
func Epoch(a wire.AOR) int64 {
	i := strings.LastIndex(a.ObjectID, ".e")
	if i < 0 {
		return 0
	}
	e, err := strconv.ParseInt(a.ObjectID[i+2:], 10, 64)
	if err != nil || e < 0 {
		return 0
	}
	return e
}

// staleEpoch starts the what of the core::unsupported_guarantee_set a
// dispatcher node raises for a create from a master whose epoch is older
// than one it has seen; the newer epoch follows.
const staleEpoch = "stale master epoch, newer epoch "

// staleRefusal returns the newer epoch a refusal names.
func staleRefusal(err error) (int64, bool) {
	e, ok := err.(*wire.Error)
	if !ok || e.Name != wire.ExcUnsupportedGuarantees || !strings.HasPrefix(e.What, staleEpoch) {
		return 0, false
	}
	f := strings.Fields(e.What[len(staleEpoch):])
	if len(f) == 0 {
		return 0, false
	}
	n, err2 := strconv.ParseInt(f[0], 10, 64)
	return n, err2 == nil
}

// opsCall is a process call waiting for its partitions.
type opsCall struct {
	peer    loop.Peer
	f       *wire.Frame
	results []OpResult
	waiting int
}

// process serves processing::session::process(id, [op...]): each encoded
// feed operation goes to the indexer of its URI's partition; the reply
// holds one result per operation.
func (m *Machine) process(peer loop.Peer, f *wire.Frame, now time.Time) {
	if f.Method != "process" {
		if f.Method == wire.MethodPing {
			m.Pending.Send(peer, wire.ReplyTo(f), 0)
			return
		}
		m.Pending.Send(peer, wire.Raise(f, wire.ExcBadRequest, fmt.Sprintf("processing::session has no method %q", f.Method)), 0)
		return
	}
	if len(f.Args) != 2 || f.Args[0].Tag != wire.Int || f.Args[1].Tag != wire.List {
		m.Pending.Send(peer, wire.Raise(f, wire.ExcBadRequest, "process takes a session id and a list of operations"), 0)
		return
	}
	id := f.Args[0].I
	s, ok := m.sessions[id]
	if !ok {
		m.Pending.Send(peer, wire.Raise(f, wire.ExcUnknownSession, fmt.Sprintf("no session %d on content distributor %d", id, m.cfg.NodeID)), 0)
		return
	}
	if m.partitions == 0 && m.listJob != 0 && len(m.held) < maxHeld {
		// The indexers are being listed (the session was just created):
		// the batch waits for the list rather than fail.
		m.held = append(m.held, heldCall{peer, f})
		return
	}
	oc := &opsCall{peer: peer, f: f}
	type part struct {
		ops  [][]byte
		seqs []uint64
	}
	parts := map[int]*part{}
	n := m.partitions
	for _, v := range f.Args[1].L {
		var op feed.Operation
		if v.Tag != wire.Bytes || op.UnmarshalBinary(v.B) != nil {
			m.Pending.Send(peer, wire.Raise(f, wire.ExcBadRequest, "an operation does not decode"), 0)
			return
		}
		if op.Collection != s.collection {
			oc.results = append(oc.results, OpResult{Seq: op.Seq, Rejected: true,
				Err: fmt.Sprintf("operation for collection %q on a session of %q", op.Collection, s.collection)})
			continue
		}
		if n == 0 {
			oc.results = append(oc.results, OpResult{Seq: op.Seq, Err: "no indexer is registered"})
			continue
		}
		p := Partition(op.URI, n)
		if parts[p] == nil {
			parts[p] = &part{}
		}
		parts[p].ops = append(parts[p].ops, v.B)
		parts[p].seqs = append(parts[p].seqs, op.Seq)
	}
	if n == 0 {
		m.refreshIndexers(now, true)
	}
	keys := make([]int, 0, len(parts))
	for p := range parts {
		keys = append(keys, p)
	}
	sort.Ints(keys)
	for _, p := range keys {
		pt := parts[p]
		addr, ok := m.indexers[p]
		if !ok {
			for _, seq := range pt.seqs {
				oc.results = append(oc.results, OpResult{Seq: seq, Err: fmt.Sprintf("no indexer for partition %d", p)})
			}
			m.refreshIndexers(now, true)
			continue
		}
		m.nextJob++
		spec := IndexOps{Addr: addr, Session: id, Ops: pt.ops, Seqs: pt.seqs}
		m.opsJobs[m.nextJob] = opsJob{oc: oc, spec: spec}
		oc.waiting++
		m.inflightOps += int64(len(pt.ops))
		m.Pending.Work = append(m.Pending.Work, loop.Job{ID: m.nextJob, Spec: spec})
	}
	m.updateLoad()
	if oc.waiting == 0 {
		m.Pending.Send(peer, wire.ReplyTo(f, ResultValue(oc.results)), 0)
	}
}

type opsJob struct {
	oc   *opsCall
	spec IndexOps
}

func (m *Machine) opsDone(j opsJob, ev loop.Event[*wire.Frame]) {
	oc, spec := j.oc, j.spec
	m.inflightOps -= int64(len(spec.Seqs))
	rs, _ := ev.Result.([]OpResult)
	if ev.Err != nil || len(rs) != len(spec.Seqs) {
		why := "the indexer answered the wrong number of results"
		if ev.Err != nil {
			why = ev.Err.Error()
		}
		m.logf(slog.LevelWarn, "an indexer failed", "addr", spec.Addr, "ops", len(spec.Seqs), "err", why)
		rs = rs[:0]
		for _, seq := range spec.Seqs {
			rs = append(rs, OpResult{Seq: seq, Err: "indexer " + spec.Addr + ": " + why})
		}
		m.indexersStale = true
	}
	oc.results = append(oc.results, rs...)
	oc.waiting--
	m.updateLoad()
	if oc.waiting == 0 {
		m.Pending.Send(oc.peer, wire.ReplyTo(oc.f, ResultValue(oc.results)), 0)
	}
}

// updateLoad sets load to the sessions held plus the operations in flight
// to the indexers.
func (m *Machine) updateLoad() { m.load = int64(len(m.sessions)) + m.inflightOps }

// refreshIndexers lists the indexers when due (every PingMaster), or now.
func (m *Machine) refreshIndexers(now time.Time, force bool) {
	if m.listJob != 0 || (!force && !m.indexersStale && now.Before(m.nextList)) {
		return
	}
	m.nextList = now.Add(m.cfg.PingMaster)
	m.nextJob++
	m.listJob = m.nextJob
	m.Pending.Work = append(m.Pending.Work, loop.Job{ID: m.nextJob, Spec: ListIndexers{}})
}

func (m *Machine) indexersListed(ev loop.Event[*wire.Frame]) {
	m.listJob = 0
	defer m.releaseHeld(ev.Now)
	if ev.Err != nil {
		m.logf(slog.LevelWarn, "cannot list the indexers", "err", ev.Err)
		return
	}
	m.indexersStale = false
	aors, _ := ev.Result.([]wire.AOR)
	idx := map[int]string{}
	n := 0
	for _, a := range aors {
		i, cnt, ok := parsePartition(a)
		if !ok {
			continue
		}
		if n != 0 && cnt != n {
			m.logf(slog.LevelError, "indexers disagree on the number of partitions, ignoring one", "aor", a.String(), "partitions", n)
			continue
		}
		n = cnt
		idx[i] = a.Addr()
	}
	if n != m.partitions || len(idx) != len(m.indexers) {
		m.logf(slog.LevelInfo, "indexers", "partitions", n, "bound", len(idx))
	}
	m.partitions, m.indexers = n, idx
}

// maxHeld bounds the process calls waiting for the indexers' list.
const maxHeld = 64

// heldCall is a process call waiting for the indexers' list.
type heldCall struct {
	peer loop.Peer
	f    *wire.Frame
}

// releaseHeld serves the process calls that waited for the list.
func (m *Machine) releaseHeld(now time.Time) {
	held := m.held
	m.held = nil
	for _, h := range held {
		m.process(h.peer, h.f, now)
	}
}

// indexerList prints the known indexers (for status).
func (m *Machine) indexerList() string {
	var sb strings.Builder
	for i := 0; i < m.partitions; i++ {
		fmt.Fprintf(&sb, "%d=%s ", i, m.indexers[i])
	}
	return strings.TrimSpace(sb.String())
}
