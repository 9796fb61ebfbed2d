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
	"github.com/trawl/trawl/internal/marshal"
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

// ---- DNS ----

// freshAddrs returns the unexpired DNS result for host.
func (m *MNS) freshAddrs(host string, now time.Time) (*dnsEntry, bool) {
	if a, err := netip.ParseAddr(host); err == nil {
		return &dnsEntry{addrs: []netip.Addr{a}, at: now, ttl: m.cfg.DNSTTL}, true
	}
	e := m.dns[host]
	if e == nil || !now.Before(e.at.Add(e.ttl)) {
		return nil, false
	}
	return e, true
}

// lookup starts resolving host unless a lookup is in flight.
func (m *MNS) lookup(host string, waiter ConnID, hasWaiter bool, now time.Time) {
	w, inflight := m.lookups[host]
	if hasWaiter {
		w = append(w, waiter)
	}
	m.lookups[host] = w
	if !inflight {
		m.countLookup(host, now.Unix())
		m.out = append(m.out, Lookup{Host: host})
	}
}

func (m *MNS) dnsRequest(c *conn, req *cmt.UMDNSRequest, now time.Time) {
	host := normHost(req.Site)
	if host == "" {
		m.send(c.id, &cmt.UMDNSReply{Host: req.Site, Time: now.Unix(), TTL: int64(m.cfg.DNSNegativeTTL / time.Second)})
		return
	}
	if e, ok := m.freshAddrs(host, now); ok {
		m.dnsStats.CacheHits++
		m.send(c.id, m.dnsReply(req.Site, e, now))
		return
	}
	m.lookup(host, c.id, true, now)
}

// dnsReply answers a DNS request from the database (2.2.3.20): the time
// the resolution finished and the seconds the result stays valid from
// now (at least 1), so that a receiver adding the TTL to either time never
// keeps the result longer than the database does.
func (m *MNS) dnsReply(host string, e *dnsEntry, now time.Time) *cmt.UMDNSReply {
	ttl := max(int64(e.at.Add(e.ttl).Sub(now)/time.Second), 1)
	return &cmt.UMDNSReply{Collection: "", Host: host, Addrs: addrInfos(e.addrs), Time: e.at.Unix(), TTL: ttl}
}

// addrInfos converts addresses to addrinfo structures (2.2.2.1): family
// AF_INET (2) or AF_INET6 (10, Linux), SOCK_STREAM, port 0. nil stays nil
// (None, a failed lookup).
func addrInfos(addrs []netip.Addr) []cmt.AddrInfo {
	if addrs == nil {
		return nil
	}
	out := make([]cmt.AddrInfo, 0, len(addrs))
	for _, a := range addrs {
		fam := int32(2)
		if !a.Unmap().Is4() {
			fam = 10
		}
		out = append(out, cmt.AddrInfo{Family: fam, SockType: 1, IP: a.Unmap().String()})
	}
	return out
}

// DNSResult delivers the result of a Lookup: the addresses, or an error.
// The result enters the DNS database, every node scheduler waiting for it
// gets its CMD_UM_DNS_REPLY, and the entries waiting for the host move on.
func (m *MNS) DNSResult(host string, addrs []netip.Addr, err error, now time.Time) []Action {
	return m.DNSResultTTL(host, addrs, 0, err, now)
}

// LookupAnswer is what a resolver that knows TTLs answers a Lookup with.
type LookupAnswer struct {
	Addrs []netip.Addr
	TTL   time.Duration
}

// DNSResultTTL is DNSResult with the records' TTL (0: unknown). A known
// TTL is kept within [DNSMinTTL, DNSTTL]: a moved site is followed once
// its record expires, and a zero or tiny TTL does not make every entry
// of a site ask again.
func (m *MNS) DNSResultTTL(host string, addrs []netip.Addr, ttl time.Duration, err error, now time.Time) []Action {
	m.countResult(err)
	e := &dnsEntry{at: now, ttl: m.cfg.DNSTTL}
	if ttl > 0 {
		e.ttl = min(max(ttl, m.cfg.DNSMinTTL), m.cfg.DNSTTL)
	}
	if err != nil || len(addrs) == 0 {
		e.ttl = m.cfg.DNSNegativeTTL
		if err == nil {
			err = errors.New("no address")
		}
		m.logf(slog.LevelDebug, "multinode: lookup failed", "host", host, "err", err.Error())
	} else {
		if len(addrs) > MaxDNSReplyAddrs {
			addrs = addrs[:MaxDNSReplyAddrs]
		}
		e.addrs = append([]netip.Addr(nil), addrs...)
	}
	m.storeDNS(host, e)
	waiters := m.lookups[host]
	delete(m.lookups, host)
	for _, id := range waiters {
		if c := m.conns[id]; c != nil && c.nodeID != "" && !c.closing {
			m.send(id, m.dnsReply(host, e, now))
		}
	}
	for _, col := range m.sortedColls() {
		m.unpark(col, "dns:"+host)
		m.drain(col, now)
	}
	return m.flush()
}

func (m *MNS) storeDNS(host string, e *dnsEntry) {
	m.dnsSeq++
	e.seq = m.dnsSeq
	m.dns[host] = e
	m.dnsFIFO = append(m.dnsFIFO, dnsKey{host, e.seq})
	for len(m.dns) > m.cfg.DNSCacheSize && len(m.dnsFIFO) > 0 {
		k := m.dnsFIFO[0]
		m.dnsFIFO = m.dnsFIFO[1:]
		if old := m.dns[k.host]; old != nil && old.seq == k.seq {
			delete(m.dns, k.host)
		}
	}
	if len(m.dnsFIFO) > 2*m.cfg.DNSCacheSize+1024 {
		// Compact the stale keys of hosts resolved again.
		kept := m.dnsFIFO[:0]
		for _, k := range m.dnsFIFO {
			if old := m.dns[k.host]; old != nil && old.seq == k.seq {
				kept = append(kept, k)
			}
		}
		m.dnsFIFO = append([]dnsKey(nil), kept...)
	}
}

// ---- crawl-IP permissions ----

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

// ---- the crawl queue ----

func (m *MNS) uriIn(c *conn, coll string, e *cmt.Entry, urgent bool, now time.Time) {
	col := m.colls[coll]
	if col == nil || col.removing {
		m.logf(slog.LevelDebug, "multinode: entry for an unknown or removed collection dropped", "node", c.nodeID, "collection", coll, "uri", e.URI.URI)
		return
	}
	col.counts.Received++
	forced := e.QueueFlags&cmt.QFForce != 0 || e.Flags&cmt.URIFForce != 0
	if col.mufilter != nil && !forced && col.mufilter.testAndAdd(e.URI.URI) {
		col.counts.Filtered++
		return
	}
	m.enqueue(col, *e, urgent, now)
}

// enqueue puts an entry at the back (or, urgent, the front) of the
// collection's queue and processes the queue.
func (m *MNS) enqueue(col *collection, e cmt.Entry, urgent bool, now time.Time) {
	site := entrySite(&e)
	if site == "" {
		col.counts.Dropped++
		m.logf(slog.LevelWarn, "multinode: entry without a crawl site dropped", "collection", col.spec.Name, "uri", e.URI.URI)
		return
	}
	if col.queue.len()+col.nparked >= m.cfg.QueueLimit {
		col.counts.Dropped++
		if d := col.counts.Dropped; d&(d-1) == 0 {
			m.logf(slog.LevelWarn, "multinode: collection queue full, entry dropped", "collection", col.spec.Name, "limit", m.cfg.QueueLimit, "dropped", d)
		}
		return
	}
	q := queued{entry: e, site: site, urgent: urgent}
	if urgent {
		col.queue.pushFront(q)
	} else {
		col.queue.pushBack(q)
	}
	m.drain(col, now)
}

func (m *MNS) park(col *collection, key string, q queued) {
	if col.parked == nil {
		col.parked = map[string][]queued{}
	}
	col.parked[key] = append(col.parked[key], q)
	col.nparked++
}

// unpark puts the entries waiting under key back at the front of the
// queue: the urgent ones first, each kind in arrival order.
func (m *MNS) unpark(col *collection, key string) {
	l := col.parked[key]
	if len(l) == 0 {
		return
	}
	delete(col.parked, key)
	col.nparked -= len(l)
	for _, urgent := range []bool{false, true} {
		for i := len(l) - 1; i >= 0; i-- {
			if l[i].urgent == urgent {
				col.queue.pushFront(l[i])
			}
		}
	}
}

// drain takes entries off the collection's queue (3.2.5.5 step 2) while
// a node scheduler is registered.
func (m *MNS) drain(col *collection, now time.Time) {
	if col.removing || !m.routingOpen() {
		return
	}
	for len(m.nodes) > 0 {
		q := col.queue.peek()
		if q == nil {
			return
		}
		item := *q
		col.queue.pop()
		m.dispatch(col, item, now)
	}
}

// dispatch routes and forwards one entry taken off the queue, or parks it
// until what it needs is there.
func (m *MNS) dispatch(col *collection, q queued, now time.Time) {
	name := col.spec.Name
	rt := m.table(name)
	if attr, ok := rt.sites[q.site]; ok {
		if node, ok := rt.attrs[attr]; ok {
			m.forward(col, node, q, now)
			return
		}
	}
	// A new site: resolve it, route it, announce the route, forward. While
	// node schedulers are still sending their routes, a site whose
	// routing attribute is not known yet waits for them.
	attr := routeAttr(col.spec, q.site)
	if _, known := rt.attrs[attr]; !known && len(col.rebuild) > 0 {
		m.park(col, "rebuild", q)
		return
	}
	if len(col.parked["dns:"+q.site]) > 0 {
		m.park(col, "dns:"+q.site, q)
		return
	}
	var addrs []netip.Addr
	ttl := int64(0)
	if !col.spec.Proxy {
		e, ok := m.freshAddrs(q.site, now)
		if !ok {
			m.park(col, "dns:"+q.site, q)
			m.lookup(q.site, 0, false, now)
			return
		}
		addrs = e.addrs
		ttl = int64(e.at.Add(e.ttl).Sub(now) / time.Second)
	}
	node, ok := rt.attrs[attr]
	if !ok {
		node = m.choose(col, attr, q.site, addrs)
		rt.attrs[attr] = node
	}
	rt.sites[q.site] = attr
	col.counts.Routed++
	m.out = append(m.out, PersistRoute{Collection: name, Attr: attr, NodeID: node, Site: q.site})
	infos := addrInfos(addrs)
	for _, n := range m.registered() {
		m.send(m.nodes[n], &cmt.UMAddRoute{Collection: name, NodeID: node, RouteAttr: attr, Site: q.site, Addrs: infos, TTL: ttl})
	}
	m.forward(col, node, q, now)
}

// choose picks the node scheduler for a new routing attribute among the
// registered ones whose Node element admits the site.
func (m *MNS) choose(col *collection, attr, site string, addrs []netip.Addr) string {
	all := m.registered()
	cands := all
	if len(col.spec.NodeScopes) > 0 {
		var ip netip.Addr
		if len(addrs) > 0 {
			ip = addrs[0]
		}
		cands = nil
		for _, n := range all {
			f := col.spec.NodeScopes[n]
			if f == nil {
				cands = append(cands, n)
				continue
			}
			if ok, _ := f.Allowed("http://"+hostForURI(site)+"/", ip); ok {
				cands = append(cands, n)
			}
		}
		if len(cands) == 0 {
			m.logf(slog.LevelWarn, "multinode: no registered node scheduler's Node rules admit the site; routing among all", "collection", col.spec.Name, "site", site)
			cands = all
		}
	}
	return rendezvous(attr, cands)
}

func hostForURI(h string) string {
	if a, err := netip.ParseAddr(h); err == nil && a.Is6() {
		return "[" + h + "]"
	}
	return h
}

// forward sends an entry to its node scheduler (3.2.5.5 step 2.3), or
// parks it until that node scheduler registers.
func (m *MNS) forward(col *collection, node string, q queued, now time.Time) {
	id, ok := m.nodes[node]
	if !ok {
		m.park(col, "node:"+node, q)
		return
	}
	if m.busy[id] {
		m.park(col, "busy:"+node, q)
		return
	}
	col.counts.Forwarded++
	m.remember(node, col.spec.Name, q, now)
	if q.urgent {
		m.send(id, &cmt.UMURIUrg{Collection: col.spec.Name, Entry: q.entry})
	} else {
		m.send(id, &cmt.UMURI{Collection: col.spec.Name, Entry: q.entry})
	}
}

// SetBusy tells the machine that a connection's send queue is full (busy)
// or has room again. While a node scheduler's connection is busy, the
// entries routed to it wait in the collection's queue (they count against
// QueueLimit) instead of being forwarded; when it has room again they are
// forwarded in their order.
func (m *MNS) SetBusy(id ConnID, busy bool, now time.Time) []Action {
	c := m.conns[id]
	if c == nil {
		return m.flush()
	}
	if busy {
		if m.busy == nil {
			m.busy = map[ConnID]bool{}
		}
		m.busy[id] = true
		return m.flush()
	}
	if !m.busy[id] {
		return m.flush()
	}
	delete(m.busy, id)
	if c.nodeID != "" && m.nodes[c.nodeID] == id {
		for _, col := range m.sortedColls() {
			m.unpark(col, "busy:"+c.nodeID)
			m.drain(col, now)
		}
	}
	return m.flush()
}

// ---- administrative operations ----

// AddCollection adds a crawl collection: every registered node scheduler
// gets CMD_ADM_CONF_ADD, and the start URIs are queued.
func (m *MNS) AddCollection(spec *CollectionSpec, now time.Time) ([]Action, error) {
	if spec == nil {
		return nil, ErrUnknownCollection
	}
	if old := m.colls[spec.Name]; old != nil {
		if old.removing {
			return m.flush(), fmt.Errorf("%w: %s", ErrRemoving, spec.Name)
		}
		return m.flush(), fmt.Errorf("%w: %s", ErrCollectionExists, spec.Name)
	}
	col := &collection{spec: spec, state: cmt.StateActive}
	if spec.MuFilter > 0 {
		col.mufilter = newBloom(spec.MuFilter)
	}
	if st, ok := m.restored[spec.Name]; ok {
		// Suspended before a restart: still suspended.
		delete(m.restored, spec.Name)
		if st.State.Valid() && st.State != cmt.StateRemoving {
			col.state = st.State
		}
		if st.FeedAll {
			col.feeding.apply(true, nil)
		} else if len(st.FeedDests) > 0 {
			col.feeding.apply(true, st.FeedDests)
		}
		m.logf(slog.LevelInfo, "multinode: collection state restored", "collection", spec.Name, "state", int(col.state), "feeding_suspended_all", col.feeding.all, "feeding_suspended", len(col.feeding.dests))
	}
	m.restoreStatsInto(col) // nodestats.go
	m.colls[spec.Name] = col
	for _, n := range m.registered() {
		col.epoch++
		m.send(m.nodes[n], &cmt.AdmConfAdd{Collection: spec.Name, Config: cmt.CrawlConfig{Collections: []cmt.Collection{spec.Dict}}, Epoch: col.epoch})
		m.sendStateAfterAdd(m.nodes[n], col)
	}
	m.logf(slog.LevelInfo, "multinode: collection added", "collection", spec.Name, "start_uris", len(spec.StartURIs))
	for _, raw := range spec.StartURIs {
		e, err := StartEntry(raw)
		if err != nil {
			m.logf(slog.LevelWarn, "multinode: start URI skipped", "collection", spec.Name, "uri", raw, "err", err.Error())
			continue
		}
		if col.mufilter != nil {
			col.mufilter.testAndAdd(e.URI.URI)
		}
		col.counts.StartURIs++
		m.enqueue(col, e, false, now)
	}
	return m.flush(), nil
}

func (m *MNS) live(name string) (*collection, error) {
	col := m.colls[name]
	if col == nil {
		return nil, fmt.Errorf("%w: %s", ErrUnknownCollection, name)
	}
	if col.removing {
		return nil, fmt.Errorf("%w: %s", ErrRemoving, name)
	}
	return col, nil
}

// UpdateCollection replaces a collection's configuration and relays it
// with CMD_ADM_CONF_UPDATE. The mufilter starts empty (the node schedulers
// requeue the start URIs, 3.1.5.11).
func (m *MNS) UpdateCollection(spec *CollectionSpec, now time.Time) ([]Action, error) {
	if spec == nil {
		return nil, ErrUnknownCollection
	}
	col, err := m.live(spec.Name)
	if err != nil {
		return m.flush(), err
	}
	col.spec = spec
	switch {
	case spec.MuFilter <= 0:
		col.mufilter = nil
	case col.mufilter == nil || col.mufilter.m != uint64(max(spec.MuFilter, 64)):
		col.mufilter = newBloom(spec.MuFilter)
	default:
		col.mufilter.reset()
	}
	for _, n := range m.registered() {
		col.epoch++
		m.send(m.nodes[n], &cmt.AdmConfUpdate{Collection: spec.Name, Config: cmt.CrawlConfig{Collections: []cmt.Collection{spec.Dict}}, Epoch: col.epoch})
	}
	m.drain(col, now)
	return m.flush(), nil
}

// RemoveCollection starts removing a collection: its queue is dropped and
// CMD_ADM_CONF_REMOVE goes to every registered node scheduler. The
// collection's remaining state (routes, statistics) goes when every node
// scheduler that may hold it (the registered ones, and the owners of its
// routes when they register again) has answered CMD_UM_DELETE_OK.
func (m *MNS) RemoveCollection(name string, now time.Time) ([]Action, error) {
	col, err := m.live(name)
	if err != nil {
		return m.flush(), err
	}
	col.removing = true
	col.state = cmt.StateRemoving
	col.queue.clear()
	col.parked, col.nparked = nil, 0
	col.rebuild = nil
	col.waitDel = map[string]bool{}
	for _, node := range m.table(name).attrs {
		col.waitDel[node] = true
	}
	for _, n := range m.registered() {
		col.waitDel[n] = true
		m.send(m.nodes[n], &cmt.AdmConfRemove{Collection: name})
	}
	m.logf(slog.LevelInfo, "multinode: removing collection", "collection", name, "awaiting", len(col.waitDel))
	if len(col.waitDel) == 0 {
		m.finishRemove(col)
	}
	return m.flush(), nil
}

func (m *MNS) finishRemove(col *collection) {
	name := col.spec.Name
	delete(m.colls, name)
	delete(m.routes, name)
	for ip, g := range m.ips {
		for k := range g.sites {
			if k[0] == name {
				delete(g.sites, k)
			}
		}
		if len(g.sites) == 0 {
			delete(m.ips, ip)
		}
	}
	m.out = append(m.out, DropRoutes{Collection: name})
	m.logf(slog.LevelInfo, "multinode: collection removed", "collection", name)
}

func (m *MNS) broadcast(msg cmt.Message) {
	for _, n := range m.registered() {
		m.send(m.nodes[n], msg)
	}
}

// SuspendCollection suspends a collection (CMD_ADM_CONF_SUSPEND) in state
// 4 (user), 5 (disk nearly full) or 8 (variable delay).
func (m *MNS) SuspendCollection(name string, state cmt.CollectionState) ([]Action, error) {
	col, err := m.live(name)
	if err != nil {
		return m.flush(), err
	}
	switch state {
	case cmt.StateSuspendedUser, cmt.StateSuspendedDisk, cmt.StateSuspendedDelay:
	default:
		return m.flush(), fmt.Errorf("%w: %d (suspend takes 4, 5 or 8)", ErrBadState, state)
	}
	col.state = state
	m.broadcast(&cmt.AdmConfSuspend{Collection: name, State: state})
	m.persistState(col)
	return m.flush(), nil
}

// ResumeCollection resumes a suspended collection (CMD_ADM_CONF_RESUME).
func (m *MNS) ResumeCollection(name string) ([]Action, error) {
	col, err := m.live(name)
	if err != nil {
		return m.flush(), err
	}
	col.state = cmt.StateActive
	m.broadcast(&cmt.AdmConfResume{Collection: name})
	m.persistState(col)
	return m.flush(), nil
}

// SetState sets a collection's state and tells every node scheduler
// (CMD_UM_CONF_STATE).
func (m *MNS) SetState(name string, state cmt.CollectionState) ([]Action, error) {
	col, err := m.live(name)
	if err != nil {
		return m.flush(), err
	}
	if !state.Valid() || state == cmt.StateRemoving {
		return m.flush(), fmt.Errorf("%w: %d", ErrBadState, state)
	}
	col.state = state
	m.broadcast(&cmt.UMConfState{Collection: name, State: state})
	m.persistState(col)
	return m.flush(), nil
}

// RefreshCollection starts a refresh cycle (CMD_ADM_CONF_REFRESH) of the
// collection or of subcollection sub. The mufilter starts empty, since
// the new cycle sends URIs again; RefreshTruncateQueues also empties the
// multinode scheduler's queue.
func (m *MNS) RefreshCollection(name, sub string, flags cmt.RefreshFlags) ([]Action, error) {
	col, err := m.live(name)
	if err != nil {
		return m.flush(), err
	}
	if col.mufilter != nil {
		col.mufilter.reset()
	}
	if flags&cmt.RefreshTruncateQueues != 0 {
		col.queue.clear()
		col.parked, col.nparked = nil, 0
	}
	m.broadcast(&cmt.AdmConfRefresh{Collection: name, SubCollection: sub, Flags: flags})
	return m.flush(), nil
}

// SuspendFeeding suspends (or resumes) feeding to the named destinations,
// all of them when dests is nil (CMD_ADM_CONF_FEEDING_SUSPEND).
// The state is kept and sent again to every node scheduler that
// registers, as the collection's suspension is: a node scheduler that
// was not connected when the command came gets it too.
func (m *MNS) SuspendFeeding(name string, suspend bool, dests []string) ([]Action, error) {
	col, err := m.live(name)
	if err != nil {
		return m.flush(), err
	}
	col.feeding.apply(suspend, dests)
	m.broadcast(&cmt.AdmConfFeedingSuspend{Collection: name, Suspend: suspend, Destinations: dests})
	m.persistState(col)
	return m.flush(), nil
}

// persistState asks the driver to record col's administrative state.
func (m *MNS) persistState(col *collection) {
	m.out = append(m.out, PersistState{Collection: col.spec.Name, State: col.state, FeedAll: col.feeding.all, FeedDests: col.feeding.sorted()})
}

// siteTargets returns the connections a site operation goes to: the node
// scheduler the site is routed to, or every registered node scheduler
// when the site is not routed.
func (m *MNS) siteTargets(col *collection, site string) ([]ConnID, error) {
	host := normHost(site)
	rt := m.table(col.spec.Name)
	attr, ok := rt.sites[host]
	if !ok {
		attr = routeAttr(col.spec, host)
	}
	if node, ok := rt.attrs[attr]; ok {
		id, up := m.nodes[node]
		if !up {
			return nil, fmt.Errorf("%w: site %s, node %s", ErrNodeOffline, site, node)
		}
		return []ConnID{id}, nil
	}
	if len(m.nodes) == 0 {
		return nil, ErrNoNodes
	}
	var out []ConnID
	for _, n := range m.registered() {
		out = append(out, m.nodes[n])
	}
	return out, nil
}

func (m *MNS) siteOp(name, site string, msg cmt.Message) ([]Action, error) {
	col, err := m.live(name)
	if err != nil {
		return m.flush(), err
	}
	ids, err := m.siteTargets(col, site)
	if err != nil {
		return m.flush(), err
	}
	for _, id := range ids {
		m.send(id, msg)
	}
	return m.flush(), nil
}

// PreemptSite stops crawling a site for now (CMD_ADM_PREEMPT_SITE); with
// requeue the node scheduler queues it at the front again.
func (m *MNS) PreemptSite(name, site string, requeue bool) ([]Action, error) {
	return m.siteOp(name, site, &cmt.AdmPreemptSite{Collection: name, Site: site, Requeue: requeue})
}

// QuarantineSite blocks a site for d (CMD_UM_QUARANTINE_SITE, or
// CMD_UM_QUARANTINE_SITE_REQUEUE with requeue).
func (m *MNS) QuarantineSite(name, site string, d time.Duration, requeue bool) ([]Action, error) {
	secs := int64(d / time.Second)
	if requeue {
		return m.siteOp(name, site, &cmt.UMQuarantineSiteRequeue{Collection: name, Site: site, Seconds: secs})
	}
	return m.siteOp(name, site, &cmt.UMQuarantineSite{Collection: name, Site: site, Seconds: secs})
}

// DeleteSite deletes everything stored for a site (CMD_UM_DELETE_SITE).
func (m *MNS) DeleteSite(name, site string) ([]Action, error) {
	return m.siteOp(name, site, &cmt.UMDeleteSite{Collection: name, Site: site})
}

// ReprocessSite resubmits a site's documents whose URI matches prefix
// (exactly with exact) to destination dest ("" for all)
// (CMD_UM_REPROCESS_SITE).
func (m *MNS) ReprocessSite(name, site, prefix, dest string, exact bool) ([]Action, error) {
	return m.siteOp(name, site, &cmt.UMReprocessSite{Collection: name, Site: site, Prefix: prefix, Destination: dest, Exact: exact})
}

// DeleteURIs deletes URIs (CMD_UM_DELETE_URIS), one message per node
// scheduler holding some of the sites.
func (m *MNS) DeleteURIs(name string, sites []cmt.SiteURIs) ([]Action, error) {
	col, err := m.live(name)
	if err != nil {
		return m.flush(), err
	}
	per := map[ConnID][]cmt.SiteURIs{}
	var order []ConnID
	for _, s := range sites {
		ids, err := m.siteTargets(col, s.Site)
		if err != nil {
			m.out = nil
			return nil, err
		}
		for _, id := range ids {
			if _, ok := per[id]; !ok {
				order = append(order, id)
			}
			per[id] = append(per[id], s)
		}
	}
	for _, id := range order {
		m.send(id, &cmt.UMDeleteURIs{Collection: name, Sites: per[id], ErrCode: cmt.ErrCodeUser})
	}
	return m.flush(), nil
}

// ---- queries ----

// NodeInfo describes a registered node scheduler.
type NodeInfo struct {
	NodeID    string
	Conn      ConnID
	AdminHost string
	AdminPort int32
	Since     time.Time
}

// Nodes returns the registered node schedulers in node id order.
func (m *MNS) Nodes() []NodeInfo {
	var out []NodeInfo
	for _, n := range m.registered() {
		c := m.conns[m.nodes[n]]
		out = append(out, NodeInfo{NodeID: n, Conn: c.id, AdminHost: c.adminHost, AdminPort: c.adminPort, Since: c.since})
	}
	return out
}

// CollectionInfo describes a collection.
type CollectionInfo struct {
	Name       string
	State      cmt.CollectionState
	Epoch      int64
	Queued     int // entries in the queue
	Waiting    int // entries waiting for DNS, a node or routes
	Rebuilding bool
	Routes     int // routing attributes
	Sites      int // routed crawl sites
	Counts     CollectionCounts
}

// Collections returns every collection in name order.
func (m *MNS) Collections() []CollectionInfo {
	var out []CollectionInfo
	for _, col := range m.sortedColls() {
		rt := m.table(col.spec.Name)
		out = append(out, CollectionInfo{
			Name: col.spec.Name, State: col.state, Epoch: col.epoch,
			Queued: col.queue.len(), Waiting: col.nparked, Rebuilding: len(col.rebuild) > 0,
			Routes: len(rt.attrs), Sites: len(rt.sites), Counts: col.counts,
		})
	}
	return out
}

// Collection returns one collection's description.
func (m *MNS) Collection(name string) (CollectionInfo, bool) {
	for _, ci := range m.Collections() {
		if ci.Name == name {
			return ci, true
		}
	}
	return CollectionInfo{}, false
}

// Stats returns a collection's statistics summed over its node
// schedulers (nodestats.go), a copy.
func (m *MNS) Stats(name string) (marshal.Dict, bool) {
	col := m.colls[name]
	if col == nil {
		return nil, false
	}
	return col.sumStats(), true
}

// Route returns the node scheduler and routing attribute of a host in a
// collection's routing database.
func (m *MNS) Route(coll, host string) (node, attr string, ok bool) {
	rt := m.routes[coll]
	if rt == nil {
		return "", "", false
	}
	host = normHost(host)
	attr, ok = rt.sites[host]
	if !ok {
		if col := m.colls[coll]; col != nil {
			attr = routeAttr(col.spec, host)
		} else {
			attr = host
		}
	}
	node, ok = rt.attrs[attr]
	return node, attr, ok
}

// CrawlIPHolder returns the node scheduler crawling an IP address.
func (m *MNS) CrawlIPHolder(ip string) (string, bool) {
	g := m.ips[ip]
	if g == nil {
		return "", false
	}
	return g.node, true
}
