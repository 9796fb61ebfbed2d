package dupserver

import (
	"fmt"
	"log/slog"
	"path"
	"slices"
	"sort"
	"time"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/loop"
)

// DSConfig configures a duplicate server machine.
type DSConfig struct {
	// NodeID is the duplicate server's node identifier, sent to the
	// replica as PKT_PPDUP_ID.
	NodeID string
	// DBDir is the directory the checksum store lives in; the PKT_DBNAME
	// of a collection is DBDir/<collection> (a logical name: all
	// collections share one database).
	DBDir string
	// Replica says the duplicate server has a replica: every change is
	// forwarded to it and tracked until it answers.
	Replica bool
	// KeepAlive is the keep-alive timer (DefaultKeepAlive if 0).
	KeepAlive time.Duration
	// ReplicaTimeout is how long a forwarded checksum message may wait for
	// the replica's answer (DefaultReplicaTimeout if 0).
	ReplicaTimeout time.Duration
	// Window bounds the unanswered messages forwarded to the replica
	// (DefaultWindow if 0).
	Window int
	// MaxQueued bounds the checksum messages held behind a pending one on
	// the same checksum (DefaultMaxQueued if 0).
	MaxQueued int
	// ReplicaAddr, when set, is where the replica listens: the machine
	// asks its driver to dial it at start and again, with backoff, whenever
	// the link is down (loop.Redial). Empty: the replica connection is
	// given to the machine as a Connected event tagged TagReplica.
	ReplicaAddr string
}

type opKind uint8

const (
	opAdd opKind = iota + 1
	opRemove
)

func (k opKind) String() string {
	if k == opAdd {
		return "PPDUP_ADD"
	}
	return "PPDUP_REMOVE"
}

// op is a checksum operation applied to the duplicate server's store and
// forwarded to the replica, waiting for its answer.
type op struct {
	kind   opKind
	key    Key
	origin PeerID // the node scheduler to answer; 0 for a resync
	add    cmt.PPDUPAdd
	remove cmt.PPDUPRemove
	owner  Owner // for an ADD: the owner to report
	seq    uint64
	sent   time.Time
	// cancelled: the collection was removed while the operation waited;
	// the replica's answer is still expected (in order) and is ignored.
	cancelled bool
}

// held is a checksum message waiting for the pending operation on its
// checksum (3.3.5.4 step 5, 3.3.5.5 step 2).
type held struct {
	from PeerID
	msg  cmt.Message
}

type nsPeer struct {
	colls map[string]struct{} // collections this connection sent messages for
	ka    int                 // unanswered keep-alives
}

// DS is the duplicate server state machine (MS-FSCMT 3.3), a
// loop.Machine. It is not safe for concurrent use: one goroutine owns it.
type DS struct {
	loop.Base[cmt.Message]
	cfg  DSConfig
	st   Store
	link loop.Redial[cmt.Message]

	colls map[string]*CollectionRecord
	peers map[PeerID]*nsPeer

	replica   PeerID // the connected replica, 0 if none
	replicaKA int
	inflight  map[Key]*op
	sentOps   []*op // operations sent to the replica, in order: its answers come in this order
	held      map[Key][]held
	nheld     int

	vclock     cmt.VectorClock
	cfgPending []string // collections whose SET_CONFIG the replica has not been sent
	cfgNormal  bool     // the replica acknowledged the latest configuration

	seq, confirmed uint64            // messages sent to the replica / known processed
	kaSeqs         []uint64          // sequence numbers of unanswered keep-alives to the replica
	tombs          map[string]uint64 // collection removals not confirmed by the replica -> seq (0: not sent)

	backlog, rescan bool
	cursor          Key

	lastKA time.Time

	syncing bool // a replica connected and is being resynchronised

	fence Fence // fence.go

	// diskFull: the disk is full, the messages that may write wait in
	// diskHeld (diskfull.go).
	diskFull bool
	diskHeld []held
}

// maxMissedKeepAlives is how many keep-alive periods in a row a peer may
// leave unanswered before its connection is closed as dead (docs/decisions/links.md).
const maxMissedKeepAlives = 2

// maxKASeqs bounds the unanswered keep-alives to the replica; past it the
// replica is given up.
const maxKASeqs = 1024

// NewDS returns a duplicate server machine over st, loading the collections
// and pending removals st holds.
func NewDS(cfg DSConfig, st Store) (*DS, error) {
	if cfg.KeepAlive <= 0 {
		cfg.KeepAlive = DefaultKeepAlive
	}
	if cfg.ReplicaTimeout <= 0 {
		cfg.ReplicaTimeout = DefaultReplicaTimeout
	}
	if cfg.Window <= 0 {
		cfg.Window = DefaultWindow
	}
	if cfg.MaxQueued <= 0 {
		cfg.MaxQueued = DefaultMaxQueued
	}
	d := &DS{
		cfg: cfg, st: st,
		colls:    map[string]*CollectionRecord{},
		peers:    map[PeerID]*nsPeer{},
		inflight: map[Key]*op{},
		held:     map[Key][]held{},
		tombs:    map[string]uint64{},
		backlog:  cfg.Replica,
	}
	recs, err := st.Collections()
	if err != nil {
		return nil, err
	}
	for i := range recs {
		d.colls[recs[i].Name] = &recs[i]
	}
	if d.fence, err = st.Fence(); err != nil {
		return nil, err
	}
	if d.fence.Deposed {
		d.Pending.Log(slog.LevelError, "dupserver: DEPOSED: a replica was promoted at a higher epoch; node schedulers are refused "+
			"until this server is restarted with --replica-mode", "epoch", d.fence.Epoch)
	}
	tombs, err := st.Tombstones()
	if err != nil {
		return nil, err
	}
	for _, t := range tombs {
		d.tombs[t] = 0
	}
	if cfg.ReplicaAddr != "" && !d.fence.Deposed {
		d.link = loop.Redial[cmt.Message]{Tag: TagReplica, Addr: cfg.ReplicaAddr, Name: "dupserver: replica"}
		d.link.Start(&d.Pending)
	}
	return d, nil
}

// Step applies one event (loop.Machine): a connection tagged TagReplica is
// the link to the replica, any other one a node scheduler's.
func (d *DS) Step(ev loop.Event[cmt.Message]) {
	d.link.Step(ev, &d.Pending)
	switch ev.Kind {
	case loop.Connected:
		if ev.Tag == TagReplica {
			d.connectReplica(ev.Peer, ev.Now)
		} else {
			d.connect(ev.Peer, ev.Now)
		}
	case loop.Received:
		d.receive(ev.Peer, ev.Msg, ev.Now)
	case loop.Closed:
		d.disconnect(ev.Peer, ev.Now)
	case loop.Tick:
		d.tick(ev.Now)
	}
	d.checkInSync()
}

// DSStatus is a snapshot of a duplicate server's state.
type DSStatus struct {
	Collections      []string // known collections, sorted
	Removing         []string // collections whose removal is in progress
	NodeSchedulers   int      // connected node schedulers
	ReplicaConnected bool
	// ReplicaNormal: the replica acknowledged the latest configuration
	// (false: transition state, 3.3.5.1).
	ReplicaNormal bool
	InFlight      int // checksum messages waiting for the replica
	Held          int // checksum messages queued behind them
	Backlog       bool
	Tombstones    int
	// DiskHeld counts the messages held while the disk is full.
	DiskHeld int
}

// Status returns a snapshot of the machine's state.
func (d *DS) Status() DSStatus {
	s := DSStatus{
		NodeSchedulers:   len(d.peers),
		ReplicaConnected: d.replica != 0,
		ReplicaNormal:    d.cfgNormal && len(d.cfgPending) == 0,
		InFlight:         len(d.inflight),
		Held:             d.nheld,
		Backlog:          d.backlog,
		Tombstones:       len(d.tombs),
		DiskHeld:         len(d.diskHeld),
	}
	for n, r := range d.colls {
		if r.Removing {
			s.Removing = append(s.Removing, n)
		} else {
			s.Collections = append(s.Collections, n)
		}
	}
	sort.Strings(s.Collections)
	sort.Strings(s.Removing)
	return s
}

func (d *DS) send(to PeerID, m cmt.Message, p cmt.Priority) {
	d.Pending.Send(to, m, int(p))
}

// toReplica sends m to the replica, in order (every message to the replica
// has normal priority, so the link stays first in first out), and returns
// its sequence number.
func (d *DS) toReplica(m cmt.Message) uint64 {
	d.seq++
	d.send(d.replica, m, cmt.PriorityNormal)
	return d.seq
}

func (d *DS) sendError(to PeerID, coll, why string) {
	d.Pending.Log(slog.LevelWarn, "dupserver: PPDUP_ERROR", "peer", to, "collection", coll, "why", why)
	if _, ok := d.peers[to]; ok {
		d.send(to, &cmt.PPDUPError{Collection: coll, Why: why}, cmt.DefaultPriority(cmt.CmdPPDUPError))
	}
}

func (d *DS) dbName(coll string) string {
	if d.cfg.DBDir == "" {
		return coll
	}
	return path.Join(d.cfg.DBDir, coll)
}

// connect reports a new node scheduler connection.
func (d *DS) connect(p PeerID, now time.Time) {
	if d.refuseNS() {
		d.Pending.Log(slog.LevelWarn, "dupserver: node scheduler refused: the replica cannot acknowledge changes (fenced pair)",
			"peer", p, "deposed", d.fence.Deposed, "epoch", d.fence.Epoch)
		d.Pending.CloseConn(p, "fenced: no replica")
		return
	}
	d.peers[p] = &nsPeer{colls: map[string]struct{}{}}
	d.Pending.Log(slog.LevelInfo, "dupserver: node scheduler connected", "peer", p)
}

// connectReplica reports a new connection to the replica. The duplicate
// server sends it the pending collection removals, every configuration and
// then every checksum it has not acknowledged.
func (d *DS) connectReplica(p PeerID, now time.Time) {
	if !d.cfg.Replica {
		d.Pending.Log(slog.LevelWarn, "dupserver: replica connection without a configured replica, closing it", "peer", p)
		d.Pending.CloseConn(p, "replica connection without a configured replica")
		return
	}
	if d.replica != 0 {
		d.failReplica("replaced by a new connection", true, now)
	}
	d.replica, d.replicaKA = p, 0
	d.syncing = true
	if d.fence.Epoch > 0 {
		d.barrier() // carries the epoch
	}
	d.Pending.Log(slog.LevelInfo, "dupserver: replica connected, resynchronising", "peer", p, "tombstones", len(d.tombs))
	names := make([]string, 0, len(d.tombs))
	for n := range d.tombs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		d.tombs[n] = d.toReplica(&cmt.PPDUPConfRemove{Collection: n, PPDUPID: d.cfg.NodeID})
	}
	d.cfgPending = d.cfgPending[:0]
	for n, r := range d.colls {
		if !r.Removing {
			d.cfgPending = append(d.cfgPending, n)
		}
	}
	sort.Strings(d.cfgPending)
	d.cfgNormal = len(d.cfgPending) == 0
	d.flushConfigs()
	if len(names) > 0 {
		d.barrier()
	}
	d.markBacklog()
	d.cursor = Key{}
	d.pump(now)
}

// disconnect reports that a connection closed.
func (d *DS) disconnect(p PeerID, now time.Time) {
	switch {
	case p != 0 && p == d.replica:
		d.failReplica("connection closed", false, now)
	case d.peers[p] != nil:
		delete(d.peers, p)
		d.Pending.Log(slog.LevelInfo, "dupserver: node scheduler disconnected", "peer", p)
	}
}

// receive processes a message from peer p.
func (d *DS) receive(p PeerID, m cmt.Message, now time.Time) {
	if p != 0 && p == d.replica {
		d.fromReplica(m, now)
	} else if peer := d.peers[p]; peer != nil {
		d.fromNS(p, peer, m, now)
	} else {
		d.Pending.Log(slog.LevelDebug, "dupserver: message from a closed connection dropped", "peer", p, "cmd", m.Code())
	}
}

// tick advances the timers to now: the keep-alive timer (3.3.6) and the
// replica timeout.
func (d *DS) tick(now time.Time) {
	if d.lastKA.IsZero() {
		d.lastKA = now
	} else if now.Sub(d.lastKA) >= d.cfg.KeepAlive {
		d.lastKA = now
		ids := make([]PeerID, 0, len(d.peers))
		for id := range d.peers {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		for _, id := range ids {
			peer := d.peers[id]
			if peer.ka > 0 {
				d.Pending.Log(slog.LevelWarn, "dupserver: node scheduler did not answer the previous keep-alive", "peer", id, "unanswered", peer.ka)
			}
			if peer.ka >= maxMissedKeepAlives {
				d.Pending.Log(slog.LevelError, "dupserver: node scheduler dead (keep-alives unanswered), closing its connection", "peer", id, "unanswered", peer.ka)
				d.Pending.CloseConn(id, "node scheduler dead: keep-alives unanswered")
				continue
			}
			peer.ka++
			d.send(id, &cmt.PPDUPKeepalive{}, cmt.DefaultPriority(cmt.CmdPPDUPKeepalive))
		}
		if d.replica != 0 {
			if d.replicaKA > 0 {
				d.Pending.Log(slog.LevelWarn, "dupserver: replica did not answer the previous keep-alive", "peer", d.replica, "unanswered", d.replicaKA)
			}
			if d.replicaKA >= maxMissedKeepAlives {
				d.failReplica("keep-alives unanswered", true, now)
			} else {
				d.barrier()
			}
		}
	}
	if d.replica != 0 {
		for _, o := range d.inflight {
			if now.Sub(o.sent) >= d.cfg.ReplicaTimeout {
				d.failReplica(fmt.Sprintf("no answer to %s %s within %s", o.kind, o.key, d.cfg.ReplicaTimeout), true, now)
				break
			}
		}
	}
	d.pump(now)
}

// ---- messages from node schedulers ----

func (d *DS) fromNS(p PeerID, peer *nsPeer, m cmt.Message, now time.Time) {
	if d.diskHold(p, m) { // diskfull.go
		return
	}
	switch m := m.(type) {
	case *cmt.PPDUPAdd:
		d.checksumMessage(p, peer, m, m.Collection, m.NodeID, m.URI, m.Checksum, now)
	case *cmt.PPDUPRemove:
		d.checksumMessage(p, peer, m, m.Collection, m.NodeID, m.URI, m.Checksum, now)
	case *cmt.PPDUPSetConfig:
		d.setConfig(p, peer, m)
	case *cmt.PPDUPConfRemove:
		d.confRemove(p, m.Collection)
	case *cmt.PPDUPConfRemove2:
		d.confRemove2(p, m.Collection)
	case *cmt.PPDUPKeepalive:
		d.send(p, &cmt.PPDUPKeepaliveAck{}, cmt.DefaultPriority(cmt.CmdPPDUPKeepaliveAck))
	case *cmt.PPDUPKeepaliveAck:
		peer.ka = 0
	default:
		d.Pending.Log(slog.LevelWarn, "dupserver: unexpected message from a node scheduler ignored", "peer", p, "cmd", m.Code())
	}
}

func (d *DS) setConfig(p PeerID, peer *nsPeer, m *cmt.PPDUPSetConfig) {
	colls := slices.Clone(m.Config.Collections)
	if m.Collection != "" {
		if _, ok := m.Config.Collection(m.Collection); !ok {
			colls = append(colls, cmt.Collection{Name: m.Collection})
		}
		if r := d.colls[m.Collection]; r != nil && r.Removing {
			d.Pending.Log(slog.LevelInfo, "dupserver: PPDUP_SET_CONFIG for a collection being removed discarded", "collection", m.Collection)
			return
		}
	}
	if len(colls) == 0 {
		d.sendError(p, m.Collection, "PPDUP_SET_CONFIG: no collection in PKT_DATA or PKT_DSPECNAME")
		return
	}
	for _, c := range colls {
		if err := validCollection(c.Name); err != nil {
			d.sendError(p, c.Name, "PPDUP_SET_CONFIG: "+err.Error())
			return
		}
	}
	for _, c := range colls {
		if r := d.colls[c.Name]; r != nil && r.Removing {
			d.Pending.Log(slog.LevelInfo, "dupserver: configuration of a collection being removed discarded", "collection", c.Name)
			continue
		}
		rec := &CollectionRecord{Name: c.Name, Config: c}
		if err := d.st.PutCollection(*rec); err != nil {
			d.sendError(p, c.Name, "PPDUP_SET_CONFIG: checksum store: "+err.Error())
			return
		}
		d.colls[c.Name] = rec
		peer.colls[c.Name] = struct{}{}
		if d.cfg.Replica && !slices.Contains(d.cfgPending, c.Name) {
			// 3.3.5.1 step 3: transition state; the configuration goes to
			// the replica before the next checksum message.
			d.cfgPending = append(d.cfgPending, c.Name)
			d.cfgNormal = false
		}
		d.Pending.Log(slog.LevelInfo, "dupserver: collection configured", "collection", c.Name, "peer", p)
	}
	d.send(p, &cmt.PPDUPConfigAck{VClock: m.VClock}, cmt.DefaultPriority(cmt.CmdPPDUPConfigAck))
}

// flushConfigs sends the replica the configurations it has not been sent,
// each with a new vector clock value.
func (d *DS) flushConfigs() {
	if d.replica == 0 {
		return
	}
	for _, n := range d.cfgPending {
		r := d.colls[n]
		if r == nil || r.Removing {
			continue
		}
		c := r.Config
		c.Name = n
		d.cfgNormal = false
		d.toReplica(&cmt.PPDUPSetConfig{Collection: n, Config: cmt.CrawlConfig{Collections: []cmt.Collection{c}}, VClock: d.vclock.Next()})
	}
	d.cfgPending = d.cfgPending[:0]
}

func (d *DS) confRemove(p PeerID, name string) {
	if err := validCollection(name); err != nil {
		d.sendError(p, name, "PPDUP_CONF_REMOVE: "+err.Error())
		return
	}
	r := d.colls[name]
	if r == nil {
		r = &CollectionRecord{Name: name}
		d.colls[name] = r
	}
	r.Removing = true
	if err := d.st.PutCollection(*r); err != nil {
		d.Pending.Log(slog.LevelError, "dupserver: checksum store", "err", err)
	}
	if err := d.st.DeleteCollection(name); err != nil {
		d.Pending.Log(slog.LevelError, "dupserver: checksum store", "err", err)
	}
	// Operations of the collection still waiting for the replica or held
	// behind one are dropped: everything about it is discarded (3.3.5.2).
	for k, o := range d.inflight {
		if k.Collection == name {
			o.cancelled = true
			delete(d.inflight, k)
		}
	}
	for k, q := range d.held {
		if k.Collection == name {
			d.nheld -= len(q)
			delete(d.held, k)
		}
	}
	d.cfgPending = slices.DeleteFunc(d.cfgPending, func(n string) bool { return n == name })
	d.Pending.Log(slog.LevelInfo, "dupserver: collection removal in progress", "collection", name, "peer", p)
	if !d.cfg.Replica {
		return
	}
	if err := d.st.PutTombstone(name); err != nil {
		d.Pending.Log(slog.LevelError, "dupserver: checksum store", "err", err)
	}
	d.tombs[name] = 0
	if d.replica != 0 {
		d.tombs[name] = d.toReplica(&cmt.PPDUPConfRemove{Collection: name, PPDUPID: d.cfg.NodeID})
		d.barrier()
	}
}

func (d *DS) confRemove2(p PeerID, name string) {
	if err := validCollection(name); err != nil {
		d.sendError(p, name, "PPDUP_CONF_REMOVE2: "+err.Error())
		return
	}
	if d.colls[name] == nil {
		d.Pending.Log(slog.LevelDebug, "dupserver: PPDUP_CONF_REMOVE2 for an unknown collection", "collection", name)
		return
	}
	if err := d.st.DeleteCollectionRecord(name); err != nil {
		d.Pending.Log(slog.LevelError, "dupserver: checksum store", "err", err)
	}
	delete(d.colls, name)
	for _, peer := range d.peers {
		delete(peer.colls, name)
	}
	d.Pending.Log(slog.LevelInfo, "dupserver: collection removed", "collection", name, "peer", p)
}

// checksumMessage validates a PPDUP_ADD or PPDUP_REMOVE and processes it, or
// holds it behind a pending operation on the same checksum.
func (d *DS) checksumMessage(p PeerID, peer *nsPeer, m cmt.Message, coll, node, uri string, cs cmt.Checksum, now time.Time) {
	bad := ""
	if err := validCollection(coll); err != nil {
		bad = err.Error()
	} else if node == "" {
		bad = "missing node identifier (PKT_ID)"
	} else if uri == "" {
		bad = "missing URI (PKT_URI)"
	} else if cs.IsZero() {
		bad = "checksum (PKT_CSUM) is all zero bytes"
	}
	if bad != "" {
		d.sendError(p, coll, fmt.Sprintf("%s %s: %s", m.Code(), uri, bad))
		return
	}
	r := d.colls[coll]
	if r != nil && r.Removing {
		d.Pending.Log(slog.LevelDebug, "dupserver: message for a collection being removed discarded", "collection", coll, "cmd", m.Code())
		return
	}
	if r == nil {
		// A node scheduler need not send PPDUP_SET_CONFIG before checksums
		// of a new collection (3.1.5.10 does not ask for one): the
		// collection is registered with an empty configuration.
		r = &CollectionRecord{Name: coll}
		if err := d.st.PutCollection(*r); err != nil {
			d.sendError(p, coll, fmt.Sprintf("%s %s: checksum store: %v", m.Code(), uri, err))
			return
		}
		d.colls[coll] = r
		d.Pending.Log(slog.LevelInfo, "dupserver: collection registered by its first checksum", "collection", coll, "peer", p)
	}
	peer.colls[coll] = struct{}{}
	k := Key{coll, cs}
	if d.inflight[k] != nil || len(d.held[k]) > 0 {
		if d.nheld >= d.cfg.MaxQueued {
			d.sendError(p, coll, fmt.Sprintf("%s %s: busy: %d messages wait for the replica", m.Code(), uri, d.nheld))
			return
		}
		d.held[k] = append(d.held[k], held{from: p, msg: m})
		d.nheld++
		return
	}
	d.process(p, m, now)
}

func (d *DS) process(p PeerID, m cmt.Message, now time.Time) {
	switch m := m.(type) {
	case *cmt.PPDUPAdd:
		d.processAdd(p, m, now)
	case *cmt.PPDUPRemove:
		d.processRemove(p, m, now)
	}
}

func (d *DS) canForward() bool {
	return d.replica != 0 && len(d.inflight) < d.cfg.Window
}

func (d *DS) forward(o *op, m cmt.Message, now time.Time) {
	d.flushConfigs()
	o.seq = d.toReplica(m)
	o.sent = now
	d.inflight[o.key] = o
	d.sentOps = append(d.sentOps, o)
}

// processAdd is 3.3.5.4.
func (d *DS) processAdd(p PeerID, m *cmt.PPDUPAdd, now time.Time) {
	k := Key{m.Collection, m.Checksum}
	o, ok, err := d.st.Get(k)
	if err != nil {
		d.sendError(p, m.Collection, fmt.Sprintf("PPDUP_ADD %s: checksum store: %v", m.URI, err))
		return
	}
	if ok {
		// The checksum has an owner: the add succeeds only for the owner
		// itself (OwnerURI == URI); anyone else learns the owner.
		if d.syncOnly() {
			// Fenced pair: the owner is told only once the replica is
			// known to have it (it may be a change not yet acknowledged).
			if !d.canForward() {
				d.dropNS(p, "fenced: replica window full")
				return
			}
			d.forward(&op{kind: opAdd, key: k, origin: p, add: *m, owner: o}, &cmt.PPDUPAdd{Collection: m.Collection, NodeID: o.NodeID,
				URI: o.URI, Checksum: m.Checksum, PPDUPID: d.cfg.NodeID, DBName: d.dbName(m.Collection)}, now)
			return
		}
		d.addOK(p, m, o.URI)
		return
	}
	o = Owner{URI: m.URI, NodeID: m.NodeID}
	if err := d.st.Put(k, o, d.cfg.Replica); err != nil {
		d.sendError(p, m.Collection, fmt.Sprintf("PPDUP_ADD %s: checksum store: %v", m.URI, err))
		return
	}
	if d.canForward() {
		fwd := *m
		fwd.PPDUPID, fwd.DBName = d.cfg.NodeID, d.dbName(m.Collection)
		d.forward(&op{kind: opAdd, key: k, origin: p, add: *m, owner: o}, &fwd, now)
		return
	}
	if d.syncOnly() {
		d.dropNS(p, "fenced: replica window full")
		return
	}
	if d.replica != 0 {
		d.markBacklog()
	}
	d.addOK(p, m, o.URI)
}

// processRemove is 3.3.5.5.
func (d *DS) processRemove(p PeerID, m *cmt.PPDUPRemove, now time.Time) {
	k := Key{m.Collection, m.Checksum}
	o, ok, err := d.st.Get(k)
	if err != nil {
		d.sendError(p, m.Collection, fmt.Sprintf("PPDUP_REMOVE %s: checksum store: %v", m.URI, err))
		return
	}
	if !ok {
		d.Pending.Log(slog.LevelDebug, "dupserver: PPDUP_REMOVE of an unknown checksum", "key", k, "uri", m.URI)
		d.removeOK(p, m)
		return
	}
	if o.URI != m.URI {
		d.Pending.Log(slog.LevelInfo, "dupserver: PPDUP_REMOVE by a URI that does not own the checksum; owner kept",
			"key", k, "uri", m.URI, "owner", o.URI)
		d.removeOK(p, m)
		return
	}
	if err := d.st.Delete(k, d.cfg.Replica); err != nil {
		d.sendError(p, m.Collection, fmt.Sprintf("PPDUP_REMOVE %s: checksum store: %v", m.URI, err))
		return
	}
	if d.canForward() {
		fwd := *m
		fwd.PPDUPID, fwd.DBName = d.cfg.NodeID, d.dbName(m.Collection)
		d.forward(&op{kind: opRemove, key: k, origin: p, remove: *m}, &fwd, now)
		return
	}
	if d.syncOnly() {
		d.dropNS(p, "fenced: replica window full")
		return
	}
	if d.replica != 0 {
		d.markBacklog()
	}
	d.promote(m.Collection, m.Checksum)
	d.removeOK(p, m)
}

func (d *DS) addOK(to PeerID, m *cmt.PPDUPAdd, owner string) {
	if _, ok := d.peers[to]; !ok {
		return
	}
	d.send(to, &cmt.PPDUPAddOK{Collection: m.Collection, NodeID: m.NodeID, URI: m.URI, OwnerURI: owner, Checksum: m.Checksum},
		cmt.DefaultPriority(cmt.CmdPPDUPAddOK))
}

func (d *DS) removeOK(to PeerID, m *cmt.PPDUPRemove) {
	if _, ok := d.peers[to]; !ok {
		return
	}
	d.send(to, &cmt.PPDUPRemoveOK{Collection: m.Collection, URI: m.URI, NodeID: m.NodeID, Checksum: m.Checksum},
		cmt.DefaultPriority(cmt.CmdPPDUPRemoveOK))
}

// promote sends PPDUP_PROMOTE_REQ to every connected node scheduler that
// sent messages for the collection (3.3.5.5 step 3), the sender included.
func (d *DS) promote(coll string, cs cmt.Checksum) {
	ids := make([]PeerID, 0, len(d.peers))
	for id, peer := range d.peers {
		if _, ok := peer.colls[coll]; ok {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		d.send(id, &cmt.PPDUPPromoteReq{Collection: coll, Checksum: cs}, cmt.DefaultPriority(cmt.CmdPPDUPPromoteReq))
	}
}

// answer sends the node scheduler's answer to a completed operation.
func (d *DS) answer(o *op) {
	if o.origin == 0 {
		return
	}
	if o.kind == opAdd {
		d.addOK(o.origin, &o.add, o.owner.URI)
		return
	}
	d.promote(o.remove.Collection, o.remove.Checksum)
	d.removeOK(o.origin, &o.remove)
}

// release processes the messages held behind key k until one of them is
// forwarded to the replica again or none is left.
func (d *DS) release(k Key, now time.Time) {
	for d.inflight[k] == nil {
		q := d.held[k]
		if len(q) == 0 {
			break
		}
		h := q[0]
		d.held[k] = q[1:]
		d.nheld--
		if d.peers[h.from] == nil {
			continue
		}
		d.process(h.from, h.msg, now)
	}
	if len(d.held[k]) == 0 {
		delete(d.held, k)
	}
}
