package distrib

import (
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"time"

	"github.com/trawl/trawl/internal/distrib/wire"
	"github.com/trawl/trawl/internal/loop"
)

// Role is a distributor's part in the election.
type Role uint8

// The roles.
const (
	None Role = iota
	Master
	Backup
)

func (r Role) String() string {
	return [...]string{"none", "master", "backup"}[r]
}

// Config configures a distributor machine.
type Config struct {
	// NodeID is the distributor's node_id.
	NodeID int64
	// Host and BasePort locate its objects: every one on BasePort+390,
	// sessions of external clients on BasePort+391; Port and
	// ExternalPort, when not 0, are those two ports instead (a
	// distributor listening on ports the system chose).
	Host               string
	BasePort           int
	Port, ExternalPort int
	// Incarnation tells this run from an earlier one at the same address
	// (the AORs' object_id is "cd<node_id>.<incarnation>").
	Incarnation int64
	// Collections is the collection holder; empty accepts every collection.
	Collections []string
	// CheckMaster is the master's "check master status" period and
	// PingMaster the backup's "check for master" period (5 s each if 0).
	CheckMaster, PingMaster time.Duration
	// PingFailures is the successive failed pings that make a backup take
	// over (3 if 0).
	PingFailures int
	// Lease is how long a master places sessions after its last confirmed
	// session_factory binding; past it, it steps down (see the package
	// comment). 0 means (PingFailures-1) x PingMaster, or 1.5 x
	// CheckMaster when that is not longer than CheckMaster.
	Lease time.Duration
}

type session struct {
	collection string
	external   bool
}

// pendingCall is a request waiting for a job before it is answered.
type pendingCall struct {
	peer loop.Peer
	f    *wire.Frame
	// node is the registrant of a register_dispatcher call.
	node int64
}

// Machine is a content distributor's state machine (MS-FSCDFT section 3).
type Machine struct {
	loop.Base[*wire.Frame]
	cfg Config

	role       Role
	phase      phase
	control    uint64   // the control job in flight (0: none)
	master     wire.AOR // the master (as a backup)
	registered bool     // registered with master
	pingFails  int
	// pingsOK counts a backup's answered pings since it last registered
	// (reregisterPings).
	pingsOK   int
	nextTimer time.Time

	// The fence: epoch is this distributor's epoch while master, seen the
	// highest epoch it has met (bindings resolved, session ids created
	// on it, refusals); leaseUntil is when the master steps down unless a
	// resolve confirms its binding first; now is the time of the event
	// being handled and jobAt the start of the control job in flight.
	epoch, seen int64
	leaseUntil  time.Time
	now, jobAt  time.Time

	collections map[string]bool
	load        int64
	sessions    map[int64]session
	nodes       map[int64]wire.AOR // dispatcher node state (master)

	nextJob uint64
	calls   map[uint64]pendingCall // jobs answering a request

	// The master's session placement.
	placing     map[uint64]masterCall
	placed      map[int64]int64 // session id -> node
	toNode      map[int64]int   // placements under way per node
	nextSession int64

	// Forwarding to the indexers.
	partitions    int
	indexers      map[int]string // partition -> address
	indexersStale bool
	nextList      time.Time
	listJob       uint64
	opsJobs       map[uint64]opsJob
	held          []heldCall // process calls waiting for the list
	inflightOps   int64

	// The periodic bind of the dispatcher_node, in a job id space of its
	// own (rebindJobs and up).
	rebind, rebindSeq uint64
	nextRebind        time.Time
}

// rebindJobs is the first job id of the periodic binds.
const rebindJobs = 1 << 62

type phase uint8

const (
	phStart        phase = iota // bind dispatcher_node
	phResolve                   // resolve session_factory
	phProbe                     // ping the resolved master
	phBindSF                    // become master: bind session_factory
	phUnbindMD                  // ... drop a stale master_dispatcher
	phBindMD                    // ... bind master_dispatcher
	phRegister                  // register_dispatcher with the master (self or other)
	phIdle                      // timers only
	phTakeUnbind                // takeover: unbind the old session_factory
	phTakeResolve               // takeover: re-resolve in case another backup won
	phTakeProbe                 // takeover: ping what the re-resolve found
	phCheckResolve              // master: check master status
	phResolveMD                 // resolve master_dispatcher before registering
)

var phaseNames = [...]string{"start", "resolve", "probe", "bind-session-factory", "unbind-master-dispatcher",
	"bind-master-dispatcher", "register", "idle", "takeover-unbind", "takeover-resolve", "takeover-probe",
	"check-master", "resolve-master-dispatcher"}

// New returns a distributor that has not started: its first Tick starts
// the election.
func New(cfg Config) *Machine {
	if cfg.CheckMaster <= 0 {
		cfg.CheckMaster = 5 * time.Second
	}
	if cfg.PingMaster <= 0 {
		cfg.PingMaster = 5 * time.Second
	}
	if cfg.PingFailures <= 0 {
		cfg.PingFailures = 3
	}
	if cfg.Lease <= 0 {
		cfg.Lease = time.Duration(cfg.PingFailures-1) * cfg.PingMaster
		if cfg.Lease <= cfg.CheckMaster {
			cfg.Lease = cfg.CheckMaster + cfg.CheckMaster/2
		}
	}
	m := &Machine{cfg: cfg, collections: map[string]bool{}, sessions: map[int64]session{},
		nodes: map[int64]wire.AOR{}, calls: map[uint64]pendingCall{}, placing: map[uint64]masterCall{},
		placed: map[int64]int64{}, toNode: map[int64]int{}, indexers: map[int]string{}, opsJobs: map[uint64]opsJob{}}
	for _, c := range cfg.Collections {
		m.collections[c] = true
	}
	return m
}

// Role returns the distributor's role.
func (m *Machine) Role() Role { return m.role }

// Nodes returns the registered dispatcher nodes' ids (master).
func (m *Machine) Nodes() []int64 {
	out := make([]int64, 0, len(m.nodes))
	for id := range m.nodes {
		out = append(out, id)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// Sessions returns the session ids in the session holder.
func (m *Machine) Sessions() []int64 {
	out := make([]int64, 0, len(m.sessions))
	for id := range m.sessions {
		out = append(out, id)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// MasterAddr returns the master's address as this distributor knows it.
func (m *Machine) MasterAddr() string {
	if m.role == Master {
		return m.aor("", "", "").Addr()
	}
	if m.master.Port == 0 {
		return ""
	}
	return m.master.Addr()
}

func (m *Machine) aor(name, typ, version string) wire.AOR {
	return wire.AOR{Name: name, ObjectID: "cd" + strconv.FormatInt(m.cfg.NodeID, 10) + "." + strconv.FormatInt(m.cfg.Incarnation, 10),
		Host: m.cfg.Host, Port: m.port(false), Type: typ, Version: version}
}

// port is the port of the distributor's objects, or with external of the
// sessions of external clients.
func (m *Machine) port(external bool) int {
	switch {
	case external && m.cfg.ExternalPort != 0:
		return m.cfg.ExternalPort
	case external:
		return m.cfg.BasePort + wire.PortExternal
	case m.cfg.Port != 0:
		return m.cfg.Port
	}
	return m.cfg.BasePort + wire.PortInternal
}

func (m *Machine) sfAOR() wire.AOR {
	a := m.aor(wire.NameDispatcher, wire.IfaceSessionFactory, wire.VersionSessionFactory)
	a.ObjectID += ".e" + strconv.FormatInt(m.epoch, 10)
	return a
}
func (m *Machine) mdAOR() wire.AOR {
	a := m.aor(wire.NameDispatcher, wire.IfaceMasterDispatcher, wire.VersionMasterDispatcher)
	a.ObjectID += ".e" + strconv.FormatInt(m.epoch, 10)
	return a
}
func (m *Machine) nodeAOR() wire.AOR {
	return m.aor(NodeName(m.cfg.NodeID), wire.IfaceDispatcherNode, wire.VersionDispatcherNode)
}

// job starts a control job (one at a time) in phase p.
func (m *Machine) job(p phase, spec any) {
	m.nextJob++
	m.control = m.nextJob
	m.phase = p
	m.jobAt = m.now
	m.Pending.Work = append(m.Pending.Work, loop.Job{ID: m.nextJob, Spec: spec})
}

// callJob starts a job that answers a request.
func (m *Machine) callJob(pc pendingCall, spec any) {
	m.nextJob++
	m.calls[m.nextJob] = pc
	m.Pending.Work = append(m.Pending.Work, loop.Job{ID: m.nextJob, Spec: spec})
}

func (m *Machine) logf(level slog.Level, msg string, args ...any) {
	m.Pending.Log(level, "distributor: "+msg, append([]any{"node", m.cfg.NodeID}, args...)...)
}

// Step implements loop.Machine.
func (m *Machine) Step(ev loop.Event[*wire.Frame]) {
	if !ev.Now.IsZero() {
		m.now = ev.Now
	}
	switch ev.Kind {
	case loop.Tick:
		m.tick(ev.Now)
	case loop.Result:
		if ev.Job == m.control && m.control != 0 {
			m.control = 0
			m.controlDone(ev)
			return
		}
		if pc, ok := m.calls[ev.Job]; ok {
			delete(m.calls, ev.Job)
			m.callDone(pc, ev)
		} else if mc, ok := m.placing[ev.Job]; ok {
			delete(m.placing, ev.Job)
			m.placedDone(mc, ev)
		} else if j, ok := m.opsJobs[ev.Job]; ok {
			delete(m.opsJobs, ev.Job)
			m.opsDone(j, ev)
		} else if ev.Job == m.listJob {
			m.indexersListed(ev)
		} else if ev.Job == m.rebind && m.rebind != 0 {
			m.rebind = 0
			if ev.Err != nil {
				m.logf(slog.LevelWarn, "cannot bind the dispatcher node again", "err", ev.Err)
			}
		}
	case loop.Received:
		m.receive(ev.Peer, ev.Msg, ev.Now)
	}
}

func (m *Machine) tick(now time.Time) {
	if len(m.sessions) > 0 {
		m.refreshIndexers(now, false)
	}
	// The dispatcher_node is bound again every PingMaster, so that a name
	// server that dropped it (missed pings) or lost it gets it back.
	if m.role != None && m.rebind == 0 && !now.Before(m.nextRebind) {
		if !m.nextRebind.IsZero() {
			m.rebindSeq++
			m.rebind = rebindJobs + m.rebindSeq
			m.Pending.Work = append(m.Pending.Work, loop.Job{ID: m.rebind, Spec: Bind{m.nodeAOR()}})
		}
		m.nextRebind = now.Add(m.cfg.PingMaster)
	}
	if m.role == Master {
		if !now.Before(m.leaseUntil) {
			m.logf(slog.LevelWarn, "my session_factory binding was not confirmed for a lease, stepping down",
				"lease", m.cfg.Lease, "epoch", m.epoch)
			m.stepDown()
			return
		}
		m.Pending.WakeAt(m.leaseUntil)
	}
	if m.control != 0 {
		return
	}
	if m.phase == phStart {
		m.job(phStart, Bind{m.nodeAOR()})
		return
	}
	if m.phase == phResolve {
		m.job(phResolve, resolveSF()) // the name server was not reachable: again
		return
	}
	if m.phase != phIdle {
		return
	}
	if now.Before(m.nextTimer) {
		m.Pending.WakeAt(m.nextTimer)
		return
	}
	switch m.role {
	case Master:
		m.nextTimer = now.Add(m.cfg.CheckMaster)
		m.job(phCheckResolve, resolveSF())
	case Backup:
		m.nextTimer = now.Add(m.cfg.PingMaster)
		m.job(phIdle, Ping{m.master.Addr(), wire.IfaceSessionFactory})
	}
	m.Pending.WakeAt(m.nextTimer)
}

func (m *Machine) controlDone(ev loop.Event[*wire.Frame]) {
	err := ev.Err
	switch m.phase {
	case phStart:
		if err != nil {
			m.logf(slog.LevelWarn, "cannot bind the dispatcher node, retrying", "err", err)
			return // the next tick tries again
		}
		m.job(phResolve, resolveSF())
	case phResolve:
		switch {
		case wire.IsException(err, wire.ExcResolve):
			m.logf(slog.LevelInfo, "no master registered, electing myself")
			m.bindSF()
		case err != nil:
			m.logf(slog.LevelWarn, "cannot resolve the master, retrying", "err", err)
			m.phase = phResolve
		default:
			a := ev.Result.(wire.AOR)
			m.learn(Epoch(a))
			if a.Addr() == m.sfAOR().Addr() {
				// Our own binding from an earlier run at this address
				// (or from before this run stepped down).
				m.logf(slog.LevelInfo, "the registered master is this address, taking it back")
				m.bindSF()
				return
			}
			m.master = a
			m.job(phProbe, Ping{a.Addr(), wire.IfaceSessionFactory})
		}
	case phProbe:
		if err != nil {
			// A registered master that does not answer: watch it like a
			// backup, and take over after the failures (3.4.5).
			m.pingFails = 1
			m.logf(slog.LevelWarn, "the registered master does not answer", "master", m.master.Addr(), "failures", m.pingFails, "err", err)
			m.becomeBackup(ev.Now, false)
			return
		}
		m.becomeBackup(ev.Now, true)
	case phBindSF:
		if wire.IsException(err, wire.ExcAlreadyBound) {
			m.logf(slog.LevelInfo, "another distributor became master first")
			m.job(phResolve, resolveSF())
			return
		}
		if err != nil {
			m.logf(slog.LevelWarn, "cannot bind the session factory", "err", err)
			m.phase = phResolve
			return
		}
		m.job(phUnbindMD, Unbind{Name: wire.NameDispatcher, Type: wire.IfaceMasterDispatcher, Version: wire.VersionMasterDispatcher})
	case phUnbindMD:
		if err != nil {
			m.logf(slog.LevelWarn, "cannot unbind the old master dispatcher", "err", err)
		}
		m.job(phBindMD, Bind{m.mdAOR()})
	case phBindMD:
		if err != nil {
			m.logf(slog.LevelWarn, "cannot bind the master dispatcher, starting over", "err", err)
			m.phase = phResolve
			return
		}
		m.role = Master
		m.master = m.sfAOR()
		m.pingFails = 0
		m.registered = false
		m.nextTimer = ev.Now.Add(m.cfg.CheckMaster)
		m.leaseUntil = m.jobAt.Add(m.cfg.Lease)
		m.logf(slog.LevelInfo, "I am the master", "addr", m.sfAOR().Addr(), "epoch", m.epoch)
		m.job(phResolveMD, resolveMD())
	case phResolveMD:
		if err != nil {
			m.logf(slog.LevelWarn, "cannot resolve the master dispatcher", "err", err)
			m.idle(ev.Now)
			return
		}
		a := ev.Result.(wire.AOR)
		m.job(phRegister, Register{a.Addr(), m.cfg.NodeID})
	case phRegister:
		if err != nil {
			m.logf(slog.LevelWarn, "register_dispatcher failed", "err", err)
		} else {
			m.registered, m.pingsOK = true, 0
		}
		m.idle(ev.Now)
	case phIdle:
		m.pinged(ev.Now, err)
	case phTakeUnbind:
		if err != nil {
			m.logf(slog.LevelWarn, "cannot unbind the old master", "err", err)
			m.idle(ev.Now)
			return
		}
		m.bindSF()
	case phTakeResolve:
		switch {
		case wire.IsException(err, wire.ExcResolve):
			m.bindSF()
		case err != nil:
			m.logf(slog.LevelWarn, "cannot resolve the master", "err", err)
			m.idle(ev.Now)
		default:
			a := ev.Result.(wire.AOR)
			m.learn(Epoch(a))
			if a.Addr() == m.master.Addr() {
				// Still the dead master: unbind it and take over.
				m.job(phTakeUnbind, m.unbindMaster())
				return
			}
			m.master = a
			m.job(phTakeProbe, Ping{a.Addr(), wire.IfaceSessionFactory})
		}
	case phTakeProbe:
		if err != nil {
			m.job(phTakeUnbind, m.unbindMaster())
			return
		}
		m.logf(slog.LevelInfo, "another backup took over first", "master", m.master.Addr())
		m.becomeBackup(ev.Now, true)
	case phCheckResolve:
		if err != nil && !wire.IsException(err, wire.ExcResolve) {
			m.logf(slog.LevelWarn, "cannot check the master status", "err", err)
			m.idle(ev.Now)
			return
		}
		if err == nil {
			m.learn(Epoch(ev.Result.(wire.AOR)))
		}
		if err == nil && ev.Result.(wire.AOR).Addr() == m.sfAOR().Addr() {
			// The binding is ours: the lease runs from this check.
			m.leaseUntil = m.jobAt.Add(m.cfg.Lease)
			if !m.registered {
				// Our own register_dispatcher failed (our
				// dispatcher_node was not bound then): again.
				m.job(phResolveMD, resolveMD())
				return
			}
			m.idle(ev.Now)
			return
		}
		// 3.3.5: our session_factory is no longer registered.
		m.logf(slog.LevelWarn, "I was replaced as master, becoming a backup")
		m.role = None
		m.nodes = map[int64]wire.AOR{}
		m.job(phResolve, resolveSF())
	}
}

func (m *Machine) idle(now time.Time) {
	m.phase = phIdle
	m.Pending.WakeAt(m.nextTimer)
	if m.role == Master {
		m.Pending.WakeAt(m.leaseUntil)
	}
}

// unbindMaster is the takeover's unbind of the dead master's
// session_factory: only if the binding is still the one resolved, so that
// a backup that took over meanwhile keeps its new binding (two backups
// taking over at once: the slower one's bind then fails with already_bound
// and it becomes a backup of the faster).
func (m *Machine) unbindMaster() Unbind {
	return Unbind{Name: wire.NameDispatcher, Type: wire.IfaceSessionFactory, Version: wire.VersionSessionFactory, Holder: m.master}
}

// bindSF starts the bind of session_factory under a new epoch, one above
// the highest seen.
func (m *Machine) bindSF() {
	m.seen++
	m.epoch = m.seen
	m.job(phBindSF, Bind{m.sfAOR()})
}

// learn raises the highest epoch seen to e.
func (m *Machine) learn(e int64) {
	if e > m.seen {
		m.seen = e
	}
}

// stepDown ends a master's term whose lease ran out (its binding was not
// confirmed for Lease) or whose epoch a dispatcher node refused: it places
// nothing more, answers session_factory and master_dispatcher with
// middleware::unavailable, and runs the election again from the resolve,
// which makes it a backup of whoever is bound, or master again (under a
// new epoch) if its own binding is still there.
func (m *Machine) stepDown() {
	m.role = None
	m.nodes = map[int64]wire.AOR{}
	m.leaseUntil = time.Time{}
	m.registered = false
	m.job(phResolve, resolveSF()) // any control job in flight is forgotten
}

// becomeBackup makes m a backup of m.master; with register it registers
// with it (3.2.4.1) and starts the "check for master" timer.
func (m *Machine) becomeBackup(now time.Time, register bool) {
	m.role = Backup
	m.nodes = map[int64]wire.AOR{}
	m.nextTimer = now.Add(m.cfg.PingMaster)
	if !register {
		m.registered = false
		m.idle(now)
		return
	}
	m.pingFails = 0
	m.logf(slog.LevelInfo, "I am a backup", "master", m.master.Addr())
	m.job(phResolveMD, resolveMD())
}

// reregisterPings: a backup calls register_dispatcher again after this
// many answered pings. A master that was killed and restarted at the same
// address before the backups missed PingFailures pings takes its binding
// back and answers their pings, but has no dispatcher node registered;
// the spec's ping cannot tell (it carries no epoch), so the backups
// register again now and then (registering is idempotent).
const reregisterPings = 6

// pinged handles the answer to a backup's __ping of the master (3.4.5).
func (m *Machine) pinged(now time.Time, err error) {
	if err == nil {
		m.pingFails = 0
		if !m.registered {
			m.becomeBackup(now, true)
			return
		}
		if m.pingsOK++; m.pingsOK >= reregisterPings {
			// A master that restarted at the same address answers
			// the ping but has forgotten its dispatcher nodes.
			m.pingsOK = 0
			m.job(phResolveMD, resolveMD())
			return
		}
		m.idle(now)
		return
	}
	m.pingFails++
	m.logf(slog.LevelWarn, "the master did not answer __ping", "master", m.master.Addr(), "failures", m.pingFails, "err", err)
	if m.pingFails < m.cfg.PingFailures {
		m.idle(now)
		return
	}
	m.logf(slog.LevelWarn, "taking over from the master", "master", m.master.Addr())
	m.job(phTakeResolve, resolveSF())
}

// receive answers a request on one of the distributor's objects.
func (m *Machine) receive(peer loop.Peer, f *wire.Frame, now time.Time) {
	if f.Kind != wire.Request {
		m.logf(slog.LevelWarn, "unexpected frame", "peer", peer, "frame", f.String())
		return
	}
	switch f.Object {
	case wire.IfaceSessionFactory:
		if m.role != Master {
			m.Pending.Send(peer, wire.Raise(f, wire.ExcUnavailable, "this content distributor is not the master"), 0)
			return
		}
		if f.Method == wire.MethodPing {
			m.Pending.Send(peer, wire.ReplyTo(f), 0)
			return
		}
		m.sessionFactory(peer, f)
		return
	case wire.IfaceSession:
		m.process(peer, f, now)
		return
	case wire.IfaceMasterDispatcher:
		if m.role != Master {
			m.Pending.Send(peer, wire.Raise(f, wire.ExcUnavailable, "this content distributor is not the master"), 0)
			return
		}
		switch f.Method {
		case wire.MethodPing:
			m.Pending.Send(peer, wire.ReplyTo(f), 0)
			return
		case "register_dispatcher":
			id := f.Arg(0)
			if id.Tag != wire.Int || len(f.Args) != 1 {
				m.Pending.Send(peer, wire.Raise(f, wire.ExcBadRequest, "register_dispatcher takes the node_id"), 0)
				return
			}
			// 3.1.4.1: resolve the registrant's dispatcher_node.
			m.callJob(pendingCall{peer: peer, f: f, node: id.I}, Resolve{NodeName(id.I), wire.IfaceDispatcherNode, wire.VersionDispatcherNode})
			return
		}
	case wire.IfaceDispatcherNode:
		m.dispatcherNode(peer, f)
		return
	}
	m.Pending.Send(peer, wire.Raise(f, wire.ExcBadRequest, fmt.Sprintf("no method %s.%s here", f.Object, f.Method)), 0)
}

func (m *Machine) callDone(pc pendingCall, ev loop.Event[*wire.Frame]) {
	f := pc.f
	switch {
	case f.Object == wire.IfaceMasterDispatcher:
		if ev.Err != nil {
			m.Pending.Send(pc.peer, wire.Raise(f, wire.ExcUnavailable, "cannot resolve the dispatcher node: "+ev.Err.Error()), 0)
			return
		}
		a := ev.Result.(wire.AOR)
		if old, ok := m.nodes[pc.node]; !ok || old != a {
			m.logf(slog.LevelInfo, "dispatcher registered", "registrant", pc.node, "addr", a.Addr())
		}
		m.nodes[pc.node] = a
		m.Pending.Send(pc.peer, wire.ReplyTo(f), 0)
	case f.Object == wire.IfaceDispatcherNode:
		m.nodeCallDone(pc, ev)
	}
}
