// Package indexer is the indexing node behind trawl's content distributors:
// the "indexing dispatcher" that MS-FSCDFT 3.5.4 calls through
// coreprocessing::session_factory (create, recreate, close; [MS-FSDP],
// not public), holding one partition of a collection's index in an
// internal/index.Index.
//
// # Decisions
//
//   - Port: base port + 400, a flag like every port.
//
//   - Partitions: an indexer is partition I of N (trawl indexer --partition I
//     --partitions N). It binds "esp/subsystems/indexing/dispatcher/<I>",
//     interface coreprocessing::session_factory 5.1, object_id
//     "partition I of N", and binds again every RebindInterval (5 s), so a
//     name server that dropped it (or restarted empty) gets it back. A
//     distributor sends an operation to partition FNV-1a-64(URI) mod N
//     (distrib.Partition), so every document lives in exactly one
//     partition; all indexers must agree on N (one that disagrees is
//     ignored and logged).
//
//   - Objects on the indexer's port (internal/distrib/wire frames):
//
//     coreprocessing::session_factory create|recreate|close(id, collection) -> ()
//     coreprocessing::session process(id, [operation...]) -> [[seq, error, rejected]...]
//     indexer search(query, collection, size) -> (total, JSON of []index.Hit)
//     indexer query(query, JSON of index.SearchOptions) -> JSON of index.Results
//     indexer count() -> documents
//     indexer lookup(collection, url) -> JSON of index.Stored (the document
//     as stored, and the last version applied to it)
//     any object __ping() -> ()
//
//     An operation is a feed.Operation in its own binary encoding. process
//     accepts operations of any session id (after an indexer restart the
//     distributors' sessions carry on without a recreate): the session
//     calls only keep the count of open sessions. Operations are applied
//     with index.Apply, whose versions (the outbox sequence numbers) make a
//     resend after a failure harmless; an operation the index can never
//     take (no URI) is answered rejected. An update-fields operation (the
//     rank and anchor text of link analysis) is merged into the stored
//     document: the index reads its stored fields back and indexes it
//     again, the wire carrying only the changed fields; its version is
//     compared with the document's earlier partial updates only (see
//     internal/index fields.go), and one for a URL not indexed yet is kept
//     for when it is added (answered ok).
//
//   - Full disk (ServerConfig.Disk, docs/decisions/diskspace.md): while the
//     free space of the index's file system is below the guard's
//     low-water mark, a process call's operations wait unapplied and
//     unanswered in their worker (searches and counts go on); they are
//     applied and answered when the space is back at the high-water mark.
package indexer

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/trawl/trawl/internal/diskspace"
	"github.com/trawl/trawl/internal/distrib"
	"github.com/trawl/trawl/internal/distrib/wire"
	"github.com/trawl/trawl/internal/feed"
	"github.com/trawl/trawl/internal/index"
	"github.com/trawl/trawl/internal/loop"
)

// PortOffset is the indexer's port offset from the base port.
const PortOffset = 400

// Object is the name of the indexer's search object.
const Object = "indexer"

// Jobs of the indexer machine.
type (
	// Apply applies ops; Seqs are their operations' sequence numbers.
	Apply struct {
		Ops  []index.Op
		Seqs []uint64
	}
	// Search runs a query; its result is *index.Results.
	Search struct {
		Query, Collection string
		Size              int
	}
	// Count counts the documents; its result is uint64.
	Count struct{}
	// Lookup reads one document; its result is index.Stored.
	Lookup struct{ Collection, URL string }
	// Bind binds the indexer in the registry.
	Bind struct{ AOR wire.AOR }
)

func (j Apply) String() string  { return fmt.Sprintf("apply %d ops", len(j.Ops)) }
func (j Search) String() string { return fmt.Sprintf("search %q in %q", j.Query, j.Collection) }
func (Count) String() string    { return "count" }
func (j Lookup) String() string { return fmt.Sprintf("lookup %q in %q", j.URL, j.Collection) }
func (j Bind) String() string   { return "bind " + j.AOR.String() }

// Config configures the machine.
type Config struct {
	Partition, Partitions int
	Host                  string
	Port                  int
	// RebindInterval is how often the indexer binds itself again (5 s if 0).
	RebindInterval time.Duration
}

type call struct {
	peer    loop.Peer
	f       *wire.Frame
	results []distrib.OpResult
}

// Machine is the indexer's state machine.
type Machine struct {
	loop.Base[*wire.Frame]
	cfg      Config
	sessions map[int64]string
	nextJob  uint64
	calls    map[uint64]call
	bindJob  uint64
	nextBind time.Time
}

// New returns an indexer machine.
func New(cfg Config) *Machine {
	if cfg.RebindInterval <= 0 {
		cfg.RebindInterval = 5 * time.Second
	}
	return &Machine{cfg: cfg, sessions: map[int64]string{}, calls: map[uint64]call{}}
}

// AOR is the indexer's object reference.
func (m *Machine) AOR() wire.AOR {
	return wire.AOR{Name: distrib.IndexerName(m.cfg.Partition), ObjectID: distrib.IndexerObjectID(m.cfg.Partition, m.cfg.Partitions),
		Host: m.cfg.Host, Port: m.cfg.Port, Type: wire.IfaceIndexFactory, Version: wire.VersionIndexFactory}
}

// Sessions returns the number of open sessions.
func (m *Machine) Sessions() int { return len(m.sessions) }

func (m *Machine) job(c call, spec any) {
	m.nextJob++
	m.calls[m.nextJob] = c
	m.Pending.Work = append(m.Pending.Work, loop.Job{ID: m.nextJob, Spec: spec})
}

// Step implements loop.Machine.
func (m *Machine) Step(ev loop.Event[*wire.Frame]) {
	switch ev.Kind {
	case loop.Tick:
		if m.bindJob == 0 && !ev.Now.Before(m.nextBind) {
			m.nextBind = ev.Now.Add(m.cfg.RebindInterval)
			m.nextJob++
			m.bindJob = m.nextJob
			m.Pending.Work = append(m.Pending.Work, loop.Job{ID: m.nextJob, Spec: Bind{m.AOR()}})
		}
		m.Pending.WakeAt(m.nextBind)
	case loop.Result:
		if ev.Job == m.bindJob {
			m.bindJob = 0
			if ev.Err != nil {
				m.Pending.Log(slog.LevelWarn, "indexer: cannot bind in the registry", "err", ev.Err)
				m.nextBind = ev.Now
			}
			return
		}
		if c, ok := m.calls[ev.Job]; ok {
			delete(m.calls, ev.Job)
			m.done(c, ev)
		}
	case loop.Received:
		m.receive(ev.Peer, ev.Msg)
	}
}

func (m *Machine) receive(peer loop.Peer, f *wire.Frame) {
	if f.Kind != wire.Request {
		return
	}
	bad := func(what string) { m.Pending.Send(peer, wire.Raise(f, wire.ExcBadRequest, what), 0) }
	if f.Method == wire.MethodPing {
		m.Pending.Send(peer, wire.ReplyTo(f), 0)
		return
	}
	switch f.Object + "." + f.Method {
	case wire.IfaceIndexFactory + ".create", wire.IfaceIndexFactory + ".recreate", wire.IfaceIndexFactory + ".close":
		if len(f.Args) != 2 || f.Args[0].Tag != wire.Int || f.Args[1].Tag != wire.String {
			bad(f.Method + " takes a session id and a collection")
			return
		}
		if f.Method == "close" {
			delete(m.sessions, f.Args[0].I)
		} else {
			m.sessions[f.Args[0].I] = f.Args[1].S
		}
		m.Pending.Send(peer, wire.ReplyTo(f), 0)
	case distrib.IfaceIndexSession + ".process":
		if len(f.Args) != 2 || f.Args[0].Tag != wire.Int || f.Args[1].Tag != wire.List {
			bad("process takes a session id and a list of operations")
			return
		}
		c := call{peer: peer, f: f}
		var job Apply
		for _, v := range f.Args[1].L {
			var op feed.Operation
			if v.Tag != wire.Bytes || op.UnmarshalBinary(v.B) != nil {
				bad("an operation does not decode")
				return
			}
			iop, err := feed.IndexOp(op)
			if err != nil {
				c.results = append(c.results, distrib.OpResult{Seq: op.Seq, Err: err.Error(), Rejected: true})
				continue
			}
			job.Ops = append(job.Ops, iop)
			job.Seqs = append(job.Seqs, op.Seq)
		}
		if len(job.Ops) == 0 {
			m.Pending.Send(peer, wire.ReplyTo(f, distrib.ResultValue(c.results)), 0)
			return
		}
		m.job(c, job)
	case Object + ".search":
		if len(f.Args) != 3 || f.Args[0].Tag != wire.String || f.Args[1].Tag != wire.String || f.Args[2].Tag != wire.Int {
			bad("search takes a query, a collection and a size")
			return
		}
		m.job(call{peer: peer, f: f}, Search{Query: f.Args[0].S, Collection: f.Args[1].S, Size: int(f.Args[2].I)})
	case Object + ".query":
		var q Query
		if len(f.Args) != 2 || f.Args[0].Tag != wire.String || f.Args[1].Tag != wire.Bytes || json.Unmarshal(f.Args[1].B, &q.Options) != nil {
			bad("query takes a query and the JSON of the search options")
			return
		}
		q.Query = f.Args[0].S
		m.job(call{peer: peer, f: f}, q)
	case Object + ".count":
		m.job(call{peer: peer, f: f}, Count{})
	case Object + ".lookup":
		if len(f.Args) != 2 || f.Args[0].Tag != wire.String || f.Args[1].Tag != wire.String || f.Args[1].S == "" {
			bad("lookup takes a collection and a URL")
			return
		}
		m.job(call{peer: peer, f: f}, Lookup{Collection: f.Args[0].S, URL: f.Args[1].S})
	default:
		bad(fmt.Sprintf("no method %s.%s on an indexer", f.Object, f.Method))
	}
}

func (m *Machine) done(c call, ev loop.Event[*wire.Frame]) {
	f := c.f
	switch f.Method {
	case "process":
		seqs := ev.Result.([]uint64)
		for _, seq := range seqs {
			r := distrib.OpResult{Seq: seq}
			if ev.Err != nil {
				r.Err = ev.Err.Error()
			}
			c.results = append(c.results, r)
		}
		m.Pending.Send(c.peer, wire.ReplyTo(f, distrib.ResultValue(c.results)), 0)
	case "search":
		if ev.Err != nil {
			m.Pending.Send(c.peer, wire.Raise(f, wire.ExcBadRequest, ev.Err.Error()), 0)
			return
		}
		res := ev.Result.(*index.Results)
		b, _ := json.Marshal(res.Hits)
		m.Pending.Send(c.peer, wire.ReplyTo(f, wire.I64(int64(res.Total)), wire.Byt(b)), 0)
	case "query":
		if ev.Err != nil {
			m.Pending.Send(c.peer, wire.Raise(f, wire.ExcBadRequest, ev.Err.Error()), 0)
			return
		}
		b, err := json.Marshal(ev.Result)
		if err != nil {
			m.Pending.Send(c.peer, wire.Raise(f, wire.ExcBadRequest, err.Error()), 0)
			return
		}
		m.Pending.Send(c.peer, wire.ReplyTo(f, wire.Byt(b)), 0)
	case "lookup":
		if ev.Err != nil {
			m.Pending.Send(c.peer, wire.Raise(f, wire.ExcUnavailable, ev.Err.Error()), 0)
			return
		}
		b, _ := json.Marshal(ev.Result.(index.Stored)) // strings, numbers and a time: no error
		m.Pending.Send(c.peer, wire.ReplyTo(f, wire.Byt(b)), 0)
	case "count":
		if ev.Err != nil {
			m.Pending.Send(c.peer, wire.Raise(f, wire.ExcUnavailable, ev.Err.Error()), 0)
			return
		}
		m.Pending.Send(c.peer, wire.ReplyTo(f, wire.I64(int64(ev.Result.(uint64)))), 0)
	}
}

// Work does the machine's jobs on ix with reg. With a disk guard (nil:
// none), an Apply waits while the disk is full (docs/decisions/diskspace.md):
// the operations are not answered until they are applied, so their senders
// keep them.
func Work(ix *index.Index, bind func(ctx context.Context, a wire.AOR) error, disk *diskspace.Guard) loop.WorkerFunc {
	return func(ctx context.Context, spec any) (any, error) {
		switch j := spec.(type) {
		case Apply:
			if err := disk.Wait(ctx); err != nil {
				return j.Seqs, fmt.Errorf("indexer: waiting for disk space: %w", err)
			}
			_, err := ix.Apply(ctx, j.Ops)
			return j.Seqs, err
		case Search:
			return ix.Search(ctx, j.Query, index.SearchOptions{Collection: j.Collection, Size: j.Size})
		case Query:
			return j.run(ctx, ix)
		case Count:
			return ix.Count()
		case Lookup:
			return ix.Lookup(ctx, j.Collection, j.URL)
		case Bind:
			ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			return nil, bind(ctx, j.AOR)
		}
		return nil, fmt.Errorf("indexer: unknown job %T", spec)
	}
}
