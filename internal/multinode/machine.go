package multinode

import (
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"sort"
	"strings"
	"time"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/crawllog"
	"github.com/trawl/trawl/internal/loop"
)

// ConnID identifies one connection of a node scheduler to the multinode
// scheduler; the driver assigns it (a loop.Peer).
type ConnID = loop.Peer

// Default values of Config.
const (
	// DefaultKeepAlive is the Node Scheduler Keep-Alive timer (3.2.2).
	DefaultKeepAlive = 120 * time.Second
	// DefaultDNSTTL is the longest a resolved name stays valid: its
	// records' TTL when the resolver reports one (DNSResolver does), this
	// when it does not (a hosts file); the spec's examples use 86400 s.
	DefaultDNSTTL = 86400 * time.Second
	// DefaultDNSMinTTL is the least time an answer is kept, whatever its
	// records' TTL.
	DefaultDNSMinTTL = time.Second
	// DefaultDNSNegativeTTL is how long a failed lookup is remembered.
	DefaultDNSNegativeTTL = 60 * time.Second
	// DefaultDNSCacheSize bounds the DNS database.
	DefaultDNSCacheSize = 1 << 18
	// DefaultQueueLimit bounds the entries a collection holds (queued and
	// waiting for DNS, a node or the routes of a node).
	DefaultQueueLimit = 1 << 18
	// DefaultRebuildTimeout bounds the wait for CMD_UM_LAST_ROUTE.
	DefaultRebuildTimeout = 60 * time.Second
	// MaxDNSReplyAddrs caps the addresses of one DNS answer or route.
	MaxDNSReplyAddrs = 32
)

// Config tunes the state machine. Zero fields take the defaults.
type Config struct {
	KeepAlive      time.Duration
	DNSTTL         time.Duration
	DNSMinTTL      time.Duration
	DNSNegativeTTL time.Duration
	DNSCacheSize   int
	QueueLimit     int
	RebuildTimeout time.Duration
	// SkipAskRoute turns off CMD_UM_ASK_ROUTE at a node scheduler's first
	// registration after the multinode scheduler started.
	SkipAskRoute bool
	// MaxMissedKeepAlives is how many keep-alive periods in a row a node
	// scheduler may leave unanswered before its connection is closed as
	// dead (DefaultMaxMissedKeepAlives).
	MaxMissedKeepAlives int
	// WaitNodes holds routing at start until that many node schedulers
	// have registered, or WaitNodesTimeout has passed (0: no wait), so that
	// the first sites spread over every node scheduler.
	WaitNodes        int
	WaitNodesTimeout time.Duration
	// NodeTimeout reroutes the sites of a node scheduler that stays away
	// that long (0: only RerouteNode does).
	NodeTimeout time.Duration
	// ResendWindow and ResendLimit bound the entries kept per node
	// scheduler to forward again when it registers again (defaults
	// DefaultResendWindow, DefaultResendLimit; a negative window keeps
	// none).
	ResendWindow time.Duration
	ResendLimit  int
}

func (c Config) withDefaults() Config {
	if c.KeepAlive <= 0 {
		c.KeepAlive = DefaultKeepAlive
	}
	if c.DNSTTL <= 0 {
		c.DNSTTL = DefaultDNSTTL
	}
	if c.DNSMinTTL <= 0 {
		c.DNSMinTTL = DefaultDNSMinTTL
	}
	if c.DNSNegativeTTL <= 0 {
		c.DNSNegativeTTL = DefaultDNSNegativeTTL
	}
	if c.DNSCacheSize <= 0 {
		c.DNSCacheSize = DefaultDNSCacheSize
	}
	if c.QueueLimit <= 0 {
		c.QueueLimit = DefaultQueueLimit
	}
	if c.RebuildTimeout <= 0 {
		c.RebuildTimeout = DefaultRebuildTimeout
	}
	if c.MaxMissedKeepAlives <= 0 {
		c.MaxMissedKeepAlives = DefaultMaxMissedKeepAlives
	}
	if c.ResendWindow == 0 {
		c.ResendWindow = DefaultResendWindow
	}
	if c.ResendLimit <= 0 {
		c.ResendLimit = DefaultResendLimit
	}
	return c
}

// Action is something the driver must do for the state machine, in the
// order the machine returned them.
type Action interface{ isAction() }

// Send sends a message to a node scheduler's connection.
type Send struct {
	Conn     ConnID
	Message  cmt.Message
	Priority cmt.Priority
}

// CloseConn closes a connection.
type CloseConn struct {
	Conn   ConnID
	Reason string
}

// Lookup starts resolving a host name; the driver answers with DNSResult.
type Lookup struct{ Host string }

// PersistRoute records a routing decision in the routing database: the
// routing attribute Attr goes to node NodeID and, when Site is not empty,
// the crawl site Site has the routing attribute Attr. The driver writes it
// before it performs the actions that follow.
type PersistRoute struct {
	Collection, Attr, NodeID, Site string
}

// DropRoutes deletes every route of a removed collection (and its
// persisted state, PersistState).
type DropRoutes struct{ Collection string }

// PersistState records a collection's administrative state in the routing
// database, so that a restarted multinode scheduler keeps a suspension it
// was told (and sends it to the node schedulers that register): the crawl
// state (cmt.StateActive when nothing is suspended) and the feeding
// suspension (FeedAll: every destination; FeedDests: the named ones).
type PersistState struct {
	Collection string
	State      cmt.CollectionState
	FeedAll    bool
	FeedDests  []string
}

// AppendLog appends a line to one of a collection's log files (CMD_UM_LOG).
// File is one of the four codes of MS-FSCMT 2.2.4.8 and Text one line
// (no line break or other control character).
type AppendLog struct {
	Collection string
	File       cmt.LogFile
	Text       string
}

// LogLine is a line for the operator's log.
type LogLine struct {
	Level slog.Level
	Msg   string
	Args  []any
}

func (Send) isAction()         {}
func (CloseConn) isAction()    {}
func (Lookup) isAction()       {}
func (PersistRoute) isAction() {}
func (PersistState) isAction() {}
func (DropRoutes) isAction()   {}
func (AppendLog) isAction()    {}
func (LogLine) isAction()      {}

// Errors of the administrative operations.
var (
	ErrUnknownCollection = errors.New("multinode: unknown collection")
	ErrCollectionExists  = errors.New("multinode: collection already exists")
	ErrRemoving          = errors.New("multinode: collection is being removed")
	ErrNoNodes           = errors.New("multinode: no node scheduler is registered")
	ErrNodeOffline       = errors.New("multinode: the node scheduler of the site is not connected")
	ErrBadState          = errors.New("multinode: invalid collection state")
)

// conn is one connection and, once CMD_UM_INIT arrived, the node scheduler
// registered on it.
type conn struct {
	id        ConnID
	nodeID    string // "" until registered
	closing   bool   // the machine asked to close it: ignore what follows
	kaPending bool   // a CMD_UM_KEEPALIVE is unanswered
	adminHost string
	adminPort int32
	since     time.Time
}

// collection is the multinode scheduler's state for one crawl collection.
type collection struct {
	spec     *CollectionSpec
	state    cmt.CollectionState
	epoch    int64
	queue    deque
	parked   map[string][]queued // entries waiting, by what they wait for
	nparked  int
	rebuild  map[string]bool // node ids whose CMD_UM_LAST_ROUTE is awaited
	deadline time.Time       // end of the wait for the routes
	removing bool
	waitDel  map[string]bool // node ids whose CMD_UM_DELETE_OK is awaited
	mufilter *bloom
	counts   CollectionCounts
	feeding  feedingState // CMD_ADM_CONF_FEEDING_SUSPEND, sent again at registration
	// reports are the node schedulers' last statistics, lastURI and
	// siteLast the most recent last_uri reported (nodestats.go).
	reports  map[string]*nodeStats
	lastURI  string
	siteLast map[string]string
}

// feedingState is a collection's feeding suspension as the administrator
// set it: every destination, or some.
type feedingState struct {
	all   bool
	dests map[string]bool
}

func (f *feedingState) apply(suspend bool, dests []string) {
	if dests == nil {
		f.all, f.dests = suspend, nil
		return
	}
	if f.dests == nil {
		f.dests = map[string]bool{}
	}
	for _, d := range dests {
		if suspend {
			f.dests[d] = true
		} else {
			delete(f.dests, d)
		}
	}
}

func (f *feedingState) sorted() []string {
	out := make([]string, 0, len(f.dests))
	for d := range f.dests {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}

// CollectionCounts count what went through a collection's queue.
type CollectionCounts struct {
	Received  uint64 // entries received from node schedulers
	StartURIs uint64 // start URIs queued
	Forwarded uint64 // entries forwarded to node schedulers
	Filtered  uint64 // entries dropped by the mufilter
	Dropped   uint64 // entries dropped: queue full, or no crawl site
	Routed    uint64 // new sites routed
	// LogLines counts the CMD_UM_LOG lines accepted for the collection's
	// log files; LogsDropped those of them the driver could not write
	// (the log writer's queue was full, or the collection's name cannot
	// name a directory), as it reports them with LogDropped.
	LogLines    uint64
	LogsDropped uint64
}

// routeTable is a collection's routing database in memory.
type routeTable struct {
	attrs map[string]string // routing attribute -> node id
	sites map[string]string // crawl site -> routing attribute
}

// dnsEntry is one result in the DNS database.
type dnsEntry struct {
	addrs []netip.Addr // nil: the lookup failed
	at    time.Time    // when the resolution finished
	ttl   time.Duration
	seq   uint64
}

// ipGrant is one crawl-site IP address record: the node scheduler crawling
// the address and the (collection, site) pairs it crawls there.
type ipGrant struct {
	node  string
	sites map[[2]string]bool
}

// MNS is the multinode scheduler state machine (MS-FSCMT 3.2), a
// loop.Machine (Step in contract.go). Every typed method takes the current
// time where it needs one and returns the actions of that event, in order;
// Step and the server's operations file them into the pending batch. It is
// not safe for concurrent use: one goroutine owns it.
type MNS struct {
	loop.Base[cmt.Message]
	cfg Config
	out []Action
	// jobs are the lookups handed to the driver as Work, by job ID.
	jobs    map[uint64]string
	nextJob uint64
	conns   map[ConnID]*conn
	nodes   map[string]ConnID // registered node schedulers
	seen    map[string]bool   // node ids registered since the machine started
	colls   map[string]*collection
	// restored are the persisted states of collections not added yet
	// (RestoreState); AddCollection applies and forgets them.
	restored map[string]PersistState
	routes   map[string]*routeTable
	dns      map[string]*dnsEntry
	dnsFIFO  []dnsKey
	dnsSeq   uint64
	lookups  map[string][]ConnID // lookups in flight, with the connections waiting for a reply
	ips      map[string]*ipGrant
	nextKA   time.Time
	fo       failover        // failure handling (failover.go)
	busy     map[ConnID]bool // connections whose send queue is full (SetBusy)
	disk     diskHold        // the full-disk pause (diskfull.go)
	// dnsStats are the DNS counters (dnsstats.go); dnsSecond and
	// dnsInSecond count the lookups of the current second.
	dnsStats    DNSStats
	dnsSecond   int64
	dnsInSecond int64

	// restoredStats are the persisted statistics of collections not
	// added yet, by collection and node (RestoreStats).
	restoredStats map[string]map[string]*nodeStats
}

type dnsKey struct {
	host string
	seq  uint64
}

// New returns a multinode scheduler with no collection and no node.
func New(cfg Config) *MNS {
	return &MNS{
		cfg:     cfg.withDefaults(),
		conns:   map[ConnID]*conn{},
		nodes:   map[string]ConnID{},
		seen:    map[string]bool{},
		colls:   map[string]*collection{},
		routes:  map[string]*routeTable{},
		dns:     map[string]*dnsEntry{},
		lookups: map[string][]ConnID{},
		ips:     map[string]*ipGrant{},
	}
}

func (m *MNS) flush() []Action {
	out := m.out
	m.out = nil
	return out
}

func (m *MNS) logf(level slog.Level, msg string, args ...any) {
	m.out = append(m.out, LogLine{Level: level, Msg: msg, Args: args})
}

func (m *MNS) send(id ConnID, msg cmt.Message) {
	m.out = append(m.out, Send{Conn: id, Message: msg, Priority: cmt.DefaultPriority(msg.Code())})
}

// sendAfterAdd queues msg at the priority of CMD_ADM_CONF_ADD, so that it
// arrives after the collection's configuration.
func (m *MNS) sendAfterAdd(id ConnID, msg cmt.Message) {
	m.out = append(m.out, Send{Conn: id, Message: msg, Priority: cmt.DefaultPriority(cmt.CmdAdmConfAdd)})
}

func (m *MNS) closeConn(c *conn, reason string) {
	c.closing = true
	m.out = append(m.out, CloseConn{Conn: c.id, Reason: reason})
}

// registered returns the registered node ids in sorted order.
func (m *MNS) registered() []string {
	ids := make([]string, 0, len(m.nodes))
	for id := range m.nodes {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// sortedColls returns the collections in name order.
func (m *MNS) sortedColls() []*collection {
	names := make([]string, 0, len(m.colls))
	for n := range m.colls {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]*collection, len(names))
	for i, n := range names {
		out[i] = m.colls[n]
	}
	return out
}

func (m *MNS) table(coll string) *routeTable {
	rt := m.routes[coll]
	if rt == nil {
		rt = &routeTable{attrs: map[string]string{}, sites: map[string]string{}}
		m.routes[coll] = rt
	}
	return rt
}

// RestoreRoute loads a route from the routing database, before the machine
// starts (no action). site may be empty.
// sendStateAfterAdd sends a collection's suspensions to a node scheduler
// that was just sent its CMD_ADM_CONF_ADD. They follow the add at its
// priority: at their own (high) one they would overtake it and reach a
// node scheduler that does not have the collection yet.
func (m *MNS) sendStateAfterAdd(id ConnID, col *collection) {
	switch col.state {
	case cmt.StateSuspendedUser, cmt.StateSuspendedDisk, cmt.StateSuspendedDelay:
		m.sendAfterAdd(id, &cmt.AdmConfSuspend{Collection: col.spec.Name, State: col.state})
	case cmt.StateBlocked, cmt.StateCompactionStart, cmt.StateCompacting: // set by SetState
		m.sendAfterAdd(id, &cmt.UMConfState{Collection: col.spec.Name, State: col.state})
	}
	if col.feeding.all {
		m.sendAfterAdd(id, &cmt.AdmConfFeedingSuspend{Collection: col.spec.Name, Suspend: true})
	} else if len(col.feeding.dests) > 0 {
		m.sendAfterAdd(id, &cmt.AdmConfFeedingSuspend{Collection: col.spec.Name, Suspend: true, Destinations: col.feeding.sorted()})
	}
}

// RestoreState gives the machine a collection state persisted by an
// earlier run (PersistState); it takes effect when the collection is
// added. The driver calls it before serving, like RestoreRoute.
func (m *MNS) RestoreState(st PersistState) {
	if m.restored == nil {
		m.restored = map[string]PersistState{}
	}
	m.restored[st.Collection] = st
}

func (m *MNS) RestoreRoute(coll, attr, node, site string) {
	rt := m.table(coll)
	if attr != "" && node != "" {
		rt.attrs[attr] = node
	}
	if site != "" && attr != "" {
		rt.sites[site] = attr
	}
}

// ---- connections ----

// Connect registers a new connection (no node scheduler yet).
func (m *MNS) Connect(id ConnID, now time.Time) []Action {
	if _, ok := m.conns[id]; !ok {
		m.conns[id] = &conn{id: id, since: now}
	}
	return m.flush()
}

// Disconnect forgets a connection. The node scheduler registered on it is
// unregistered: its crawl-IP grants are released, its routes are kept (it
// gets its sites back when it registers again) and entries for its sites
// wait for it.
func (m *MNS) Disconnect(id ConnID, now time.Time) []Action {
	c := m.conns[id]
	if c == nil {
		return m.flush()
	}
	delete(m.conns, id)
	delete(m.fo.misses, id)
	wasBusy := m.busy[id]
	delete(m.busy, id)
	if c.nodeID == "" || m.nodes[c.nodeID] != id {
		return m.flush()
	}
	node := c.nodeID
	delete(m.nodes, node)
	for _, col := range m.colls {
		col.statsGone(node) // it crawls nothing while it is away
	}
	if wasBusy {
		// Entries held for the full connection wait for the node
		// scheduler's next registration like any other of its entries.
		for _, col := range m.sortedColls() {
			if l := col.parked["busy:"+node]; len(l) > 0 {
				delete(col.parked, "busy:"+node)
				col.nparked -= len(l)
				for _, q := range l {
					m.park(col, "node:"+node, q)
				}
			}
		}
	}
	if m.cfg.NodeTimeout > 0 {
		m.fo.init()
		m.fo.downSince[node] = now
	}
	released := 0
	for ip, g := range m.ips {
		if g.node == node {
			delete(m.ips, ip)
			released++
		}
	}
	m.logf(slog.LevelInfo, "multinode: node scheduler disconnected", "node", node, "released_ips", released)
	for _, col := range m.sortedColls() {
		if col.rebuild[node] {
			delete(col.rebuild, node)
			if len(col.rebuild) == 0 {
				m.endRebuild(col, now)
			}
		}
	}
	return m.flush()
}

// Receive handles a message from a connection.
func (m *MNS) Receive(id ConnID, msg cmt.Message, now time.Time) []Action {
	c := m.conns[id]
	if c == nil {
		c = &conn{id: id, since: now}
		m.conns[id] = c
	}
	if c.closing || msg == nil {
		return m.flush()
	}
	if c.nodeID == "" {
		init, ok := msg.(*cmt.UMInit)
		if !ok {
			m.logf(slog.LevelWarn, "multinode: first message is not CMD_UM_INIT, closing the connection", "conn", id, "command", msg.Code().String())
			m.closeConn(c, "first message is not CMD_UM_INIT")
			return m.flush()
		}
		m.register(c, init, now)
		return m.flush()
	}
	switch x := msg.(type) {
	case *cmt.UMInit:
		m.logf(slog.LevelWarn, "multinode: CMD_UM_INIT for a registered node identifier, closing the connection", "conn", id, "node", x.NodeID)
		m.closeConn(c, "node identifier already registered")
	case *cmt.UMKeepalive:
		m.send(id, &cmt.UMKeepaliveAck{})
	case *cmt.UMKeepaliveAck:
		c.kaPending = false
		delete(m.fo.misses, id)
	case *cmt.UMDNSRequest:
		m.dnsRequest(c, x, now)
	case *cmt.UMURI:
		m.uriIn(c, x.Collection, &x.Entry, false, now)
	case *cmt.UMURIUrg:
		m.uriIn(c, x.Collection, &x.Entry, true, now)
	case *cmt.UMStat:
		if col := m.colls[x.Collection]; col != nil && !col.removing {
			m.statIn(c, col, x.Stats) // nodestats.go
		} else {
			m.logf(slog.LevelDebug, "multinode: statistics for an unknown collection ignored", "node", c.nodeID, "collection", x.Collection)
		}
	case *cmt.UMLog:
		m.logIn(c, x)
	case *cmt.UMAddRouteReply:
		m.routesIn(c, x)
	case *cmt.UMLastRoute:
		if col := m.colls[x.Collection]; col != nil && col.rebuild[c.nodeID] {
			delete(col.rebuild, c.nodeID)
			if len(col.rebuild) == 0 {
				m.endRebuild(col, now)
			}
		}
	case *cmt.UMStartCrawlIP:
		m.startCrawlIP(c, x)
	case *cmt.UMStopCrawlIP:
		if g := m.ips[x.IP]; g != nil && g.node == c.nodeID {
			delete(g.sites, [2]string{x.Collection, x.Site})
			if len(g.sites) == 0 {
				delete(m.ips, x.IP)
			}
		}
	case *cmt.UMConfStateRequest:
		state := cmt.StateRemoving
		if col := m.colls[x.Collection]; col != nil {
			state = col.state
		}
		m.send(id, &cmt.UMConfState{Collection: x.Collection, State: state})
	case *cmt.UMDeleteOK:
		if col := m.colls[x.Collection]; col != nil && col.removing {
			delete(col.waitDel, c.nodeID)
			if len(col.waitDel) == 0 {
				m.finishRemove(col)
			}
		}
	default:
		m.logf(slog.LevelDebug, "multinode: unexpected message ignored", "node", c.nodeID, "command", msg.Code().String())
	}
	return m.flush()
}

// register handles the first CMD_UM_INIT of a connection (3.2.5.1).
func (m *MNS) register(c *conn, init *cmt.UMInit, now time.Time) {
	if init.NodeID == "" {
		m.logf(slog.LevelWarn, "multinode: CMD_UM_INIT without a node identifier, closing the connection", "conn", c.id)
		m.closeConn(c, "empty node identifier")
		return
	}
	if old, dup := m.nodes[init.NodeID]; dup {
		if oc := m.conns[old]; oc == nil || oc.closing {
			// The previous connection of this node scheduler is closing
			// (the driver has not reported its end yet): it is over, the
			// new one replaces it.
			m.logf(slog.LevelInfo, "multinode: node scheduler registered again before its previous connection ended; replacing it", "node", init.NodeID, "old_conn", old, "conn", c.id)
			out := m.out
			m.out = nil
			acts := m.Disconnect(old, now)
			m.out = append(out, acts...)
		}
	}
	if _, dup := m.nodes[init.NodeID]; dup {
		m.logf(slog.LevelWarn, "multinode: node identifier already registered, closing the connection", "conn", c.id, "node", init.NodeID)
		m.closeConn(c, "node identifier already registered")
		return
	}
	if m.fo.retired[init.NodeID] {
		m.logf(slog.LevelWarn, "multinode: the sites of this node identifier were rerouted, closing the connection; start it with an empty data directory under a new identifier", "conn", c.id, "node", init.NodeID)
		m.closeConn(c, "node identifier retired")
		return
	}
	c.nodeID, c.adminHost, c.adminPort, c.kaPending = init.NodeID, init.AdminHost, init.AdminPort, false
	m.nodes[init.NodeID] = c.id
	first := !m.seen[init.NodeID]
	m.seen[init.NodeID] = true
	m.logf(slog.LevelInfo, "multinode: node scheduler registered", "node", init.NodeID, "conn", c.id, "admin", fmt.Sprintf("%s:%d", init.AdminHost, init.AdminPort))
	for _, col := range m.sortedColls() {
		if col.removing {
			col.waitDel[init.NodeID] = true
			m.send(c.id, &cmt.AdmConfRemove{Collection: col.spec.Name})
			continue
		}
		col.epoch++
		m.send(c.id, &cmt.AdmConfAdd{Collection: col.spec.Name, Config: cmt.CrawlConfig{Collections: []cmt.Collection{col.spec.Dict}}, Epoch: col.epoch})
		m.sendStateAfterAdd(c.id, col)
		if first && !m.cfg.SkipAskRoute {
			if col.rebuild == nil {
				col.rebuild = map[string]bool{}
			}
			col.rebuild[init.NodeID] = true
			col.deadline = now.Add(m.cfg.RebuildTimeout)
			m.send(c.id, &cmt.UMAskRoute{Collection: col.spec.Name})
		}
	}
	m.resend(init.NodeID, c.id, now)
	if m.cfg.WaitNodes > 0 && len(m.nodes) >= m.cfg.WaitNodes {
		m.openRouting(now, "enough node schedulers registered")
	}
	for _, col := range m.sortedColls() {
		m.unpark(col, "node:"+init.NodeID)
		m.drain(col, now)
	}
}

// ---- timers ----

// Tick advances the machine's clock: the keep-alive timer (3.2.6) and the
// wait for routes after an CMD_UM_ASK_ROUTE.
func (m *MNS) Tick(now time.Time) []Action {
	if m.nextKA.IsZero() {
		m.nextKA = now.Add(m.cfg.KeepAlive)
	} else if !now.Before(m.nextKA) {
		for _, node := range m.registered() {
			c := m.conns[m.nodes[node]]
			if c.kaPending {
				m.logf(slog.LevelWarn, "multinode: node scheduler did not answer the last keep-alive", "node", node)
				if m.keepAliveMissed(c.id) {
					m.logf(slog.LevelError, "multinode: node scheduler dead (keep-alives unanswered), closing its connection", "node", node, "missed", m.fo.misses[c.id])
					m.closeConn(c, "keep-alives unanswered")
					continue
				}
			}
			m.send(c.id, &cmt.UMKeepalive{})
			c.kaPending = true
		}
		m.nextKA = now.Add(m.cfg.KeepAlive)
	}
	m.tickFailover(now)
	for _, col := range m.sortedColls() {
		if len(col.rebuild) > 0 && !now.Before(col.deadline) {
			waiting := make([]string, 0, len(col.rebuild))
			for n := range col.rebuild {
				waiting = append(waiting, n)
			}
			sort.Strings(waiting)
			m.logf(slog.LevelWarn, "multinode: no CMD_UM_LAST_ROUTE in time, resuming normal routing", "collection", col.spec.Name, "nodes", waiting)
			clear(col.rebuild)
			m.endRebuild(col, now)
		}
	}
	return m.flush()
}

func (m *MNS) endRebuild(col *collection, now time.Time) {
	m.unpark(col, "rebuild")
	m.drain(col, now)
}

// ---- crawl-IP permissions (DNS: machine_dns.go) ----

func (m *MNS) startCrawlIP(c *conn, req *cmt.UMStartCrawlIP) {
	reply := &cmt.UMStartCrawlIPReply{Collection: req.Collection, IP: req.IP, Site: req.Site, StoreID: req.StoreID}
	g := m.ips[req.IP]
	if g != nil && g.node != c.nodeID {
		m.logf(slog.LevelDebug, "multinode: crawl IP denied", "ip", req.IP, "site", req.Site, "node", c.nodeID, "holder", g.node)
		m.send(c.id, reply)
		return
	}
	if g == nil {
		g = &ipGrant{node: c.nodeID, sites: map[[2]string]bool{}}
		m.ips[req.IP] = g
	}
	g.sites[[2]string{req.Collection, req.Site}] = true
	reply.Allowed = true
	m.send(c.id, reply)
}

// ---- logs and routes from node schedulers ----

func (m *MNS) logIn(c *conn, x *cmt.UMLog) {
	col := m.colls[x.Collection]
	if col == nil {
		m.logf(slog.LevelDebug, "multinode: log line for an unknown collection ignored", "node", c.nodeID, "collection", x.Collection)
		return
	}
	switch x.File {
	case cmt.LogSite, cmt.LogScreened, cmt.LogSchedule, cmt.LogFetch:
	default:
		m.logf(slog.LevelWarn, "multinode: log line for an unknown log file ignored", "node", c.nodeID, "collection", x.Collection, "file", string(x.File))
		return
	}
	col.counts.LogLines++
	// One event, one line: a trailing line break is dropped and any other
	// control character becomes a space, so that a peer cannot break the
	// line structure of the file.
	m.out = append(m.out, AppendLog{Collection: x.Collection, File: x.File, Text: crawllog.OneLine(strings.TrimRight(x.Text, "\r\n"))})
}

// LogDropped records that the driver dropped a log line of collection
// coll (an AppendLog it could not write). It has no actions.
func (m *MNS) LogDropped(coll string) {
	if col := m.colls[coll]; col != nil {
		col.counts.LogsDropped++
	}
}

// routesIn handles the multinode-scheduler-bound CMD_UM_ADD_ROUTE
// (3.2.5.9): routes the database lacks are adopted and persisted; a route
// that contradicts the database is logged and the database kept.
//
// A node scheduler may report the routing attribute it was told or the
// host it stores the route under (trawl's node scheduler reports hosts).
// Either way the reported name X is recorded as a routing attribute and
// as a routed site with attribute X, and the attribute the collection's
// settings give X (its registered domain under domain_clustering) is
// adopted too when unknown, so that new hosts of that domain follow.
func (m *MNS) routesIn(c *conn, x *cmt.UMAddRouteReply) {
	col := m.colls[x.Collection]
	if col == nil {
		m.logf(slog.LevelDebug, "multinode: routes for an unknown collection ignored", "node", c.nodeID, "collection", x.Collection)
		return
	}
	rt := m.table(x.Collection)
	for _, r := range x.Routes {
		name := normHost(r.Attr)
		if name == "" || r.NodeID == "" {
			continue
		}
		if cur, ok := rt.attrs[name]; ok {
			if cur != r.NodeID {
				m.logf(slog.LevelWarn, "multinode: node scheduler reports a route that differs from the routing database; keeping the database's", "collection", x.Collection, "attr", name, "reported", r.NodeID, "kept", cur, "node", c.nodeID)
			}
			continue
		}
		rt.attrs[name] = r.NodeID
		site := ""
		if _, known := rt.sites[name]; !known {
			rt.sites[name] = name
			site = name
		}
		m.out = append(m.out, PersistRoute{Collection: x.Collection, Attr: name, NodeID: r.NodeID, Site: site})
		if derived := routeAttr(col.spec, name); derived != name {
			if _, ok := rt.attrs[derived]; !ok {
				rt.attrs[derived] = r.NodeID
				m.out = append(m.out, PersistRoute{Collection: x.Collection, Attr: derived, NodeID: r.NodeID})
			}
		}
	}
}
