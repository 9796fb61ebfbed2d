package multinode

import (
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"time"

	"github.com/trawl/trawl/internal/cmt"
)

// Defaults of the failure handling that MS-FSCMT leaves out
// (docs/decisions/links.md, docs/decisions/multinode.md).
const (
	// DefaultMaxMissedKeepAlives is how many keep-alive periods in a row a
	// node scheduler may leave unanswered before its connection is closed
	// as dead.
	DefaultMaxMissedKeepAlives = 2
	// DefaultResendWindow is how long a forwarded entry is kept to be
	// forwarded again when its node scheduler registers again: the spec has
	// no acknowledgement of CMD_UM_URI, so what was in flight on a broken
	// connection would be lost.
	DefaultResendWindow = 10 * time.Minute
	// DefaultResendLimit bounds the entries kept per node scheduler.
	DefaultResendLimit = 1 << 17
)

// sent is an entry forwarded to a node scheduler, kept for a resend.
type sentEntry struct {
	at   time.Time
	coll string
	q    queued
}

// failover is the multinode scheduler's state for peer failures.
type failover struct {
	misses    map[ConnID]int       // keep-alive periods left unanswered in a row
	downSince map[string]time.Time // node ids owning routes, not registered: since when
	retired   map[string]bool      // node ids whose sites were rerouted
	recent    map[string][]sentEntry
	open      bool // routing started (Config.WaitNodes)
	startAt   time.Time
	scanned   bool // route owners collected for Config.NodeTimeout
}

func (f *failover) init() {
	if f.misses == nil {
		f.misses = map[ConnID]int{}
		f.downSince = map[string]time.Time{}
		f.retired = map[string]bool{}
		f.recent = map[string][]sentEntry{}
	}
}

// routingOpen reports whether entries may be routed: always, unless
// Config.WaitNodes asks to wait for that many node schedulers at start.
func (m *MNS) routingOpen() bool {
	return m.fo.open || m.cfg.WaitNodes <= 0
}

// openRouting starts routing (once) and drains every collection's queue.
func (m *MNS) openRouting(now time.Time, why string) {
	if m.fo.open {
		return
	}
	m.fo.open = true
	if m.cfg.WaitNodes > 0 {
		m.logf(slog.LevelInfo, "multinode: routing starts", "why", why, "nodes", m.registered())
	}
	for _, col := range m.sortedColls() {
		m.drain(col, now)
	}
}

// remember keeps an entry forwarded to node for a resend.
func (m *MNS) remember(node, coll string, q queued, now time.Time) {
	if m.cfg.ResendWindow < 0 {
		return
	}
	m.fo.init()
	l := append(m.fo.recent[node], sentEntry{at: now, coll: coll, q: q})
	// Trim now and then (amortized): drop what is older than the window,
	// keep at most the limit.
	if len(l) > 2*m.cfg.ResendLimit || now.Sub(l[0].at) > 2*m.cfg.ResendWindow {
		cut := max(0, len(l)-m.cfg.ResendLimit)
		for cut < len(l) && now.Sub(l[cut].at) > m.cfg.ResendWindow {
			cut++
		}
		l = append([]sentEntry(nil), l[cut:]...)
	}
	m.fo.recent[node] = l
}

// resend forwards again what node got within the resend window: its
// previous connection may have lost it (the node scheduler's seen-set drops
// what it already has).
func (m *MNS) resend(node string, id ConnID, now time.Time) {
	l := m.fo.recent[node]
	if len(l) > m.cfg.ResendLimit {
		l = l[len(l)-m.cfg.ResendLimit:]
	}
	n := 0
	for _, s := range l {
		col := m.colls[s.coll]
		if col == nil || col.removing || now.Sub(s.at) > m.cfg.ResendWindow {
			continue
		}
		n++
		if s.q.urgent {
			m.send(id, &cmt.UMURIUrg{Collection: s.coll, Entry: s.q.entry})
		} else {
			m.send(id, &cmt.UMURI{Collection: s.coll, Entry: s.q.entry})
		}
	}
	if n > 0 {
		m.logf(slog.LevelInfo, "multinode: entries forwarded again to a node scheduler that registered again", "node", node, "entries", n)
	}
}

// tickFailover runs the failure timers: dead connections, the wait for
// node schedulers at start and the node timeout.
func (m *MNS) tickFailover(now time.Time) {
	m.fo.init()
	if m.fo.startAt.IsZero() {
		m.fo.startAt = now
	}
	if !m.routingOpen() && m.cfg.WaitNodesTimeout > 0 && now.Sub(m.fo.startAt) >= m.cfg.WaitNodesTimeout {
		m.openRouting(now, "timeout waiting for node schedulers")
	}
	if m.cfg.NodeTimeout <= 0 {
		return
	}
	if !m.fo.scanned {
		m.fo.scanned = true
		for _, rt := range m.routes {
			for _, node := range rt.attrs {
				if _, reg := m.nodes[node]; !reg && !m.fo.retired[node] {
					if _, ok := m.fo.downSince[node]; !ok {
						m.fo.downSince[node] = now
					}
				}
			}
		}
	}
	var due []string
	for node, since := range m.fo.downSince {
		if _, reg := m.nodes[node]; reg {
			delete(m.fo.downSince, node)
			continue
		}
		if now.Sub(since) >= m.cfg.NodeTimeout {
			due = append(due, node)
		}
	}
	sort.Strings(due)
	for _, node := range due {
		if len(m.nodes) == 0 {
			return // nowhere to go yet; try again at the next tick
		}
		m.logf(slog.LevelWarn, "multinode: node scheduler gone longer than the node timeout, rerouting its sites", "node", node, "timeout", m.cfg.NodeTimeout.String())
		m.reroute(node, now)
	}
}

// keepAliveMissed counts an unanswered keep-alive of a connection and
// reports whether the connection is now considered dead.
func (m *MNS) keepAliveMissed(id ConnID) bool {
	m.fo.init()
	m.fo.misses[id]++
	return m.fo.misses[id] >= m.cfg.MaxMissedKeepAlives
}

// ErrNodeConnected is RerouteNode's error for a node scheduler that is
// registered.
var ErrNodeConnected = errors.New("multinode: the node scheduler is connected")

// RerouteNode moves every route of node (a node scheduler that will not
// come back) to the registered node schedulers: the new routes are
// persisted and announced, the collections' start URIs of the moved sites,
// the entries waiting for node and those forwarded to it within the resend
// window are queued again. node may not register again while this
// multinode scheduler runs (its old store would crawl the moved sites
// twice). It returns the number of routing attributes moved.
func (m *MNS) RerouteNode(node string, now time.Time) ([]Action, int, error) {
	if node == "" {
		return m.flush(), 0, fmt.Errorf("multinode: empty node identifier")
	}
	if _, reg := m.nodes[node]; reg {
		return m.flush(), 0, fmt.Errorf("%w: %s; stop it before rerouting its sites", ErrNodeConnected, node)
	}
	if len(m.nodes) == 0 {
		return m.flush(), 0, ErrNoNodes
	}
	n := m.reroute(node, now)
	return m.flush(), n, nil
}

func (m *MNS) reroute(node string, now time.Time) int {
	m.fo.init()
	m.fo.retired[node] = true
	delete(m.fo.downSince, node)
	moved := 0
	for _, col := range m.sortedColls() {
		if col.removing {
			continue
		}
		name := col.spec.Name
		rt := m.table(name)
		newNode := map[string]string{}
		attrs := make([]string, 0)
		for attr, n := range rt.attrs {
			if n == node {
				attrs = append(attrs, attr)
			}
		}
		sort.Strings(attrs)
		for _, attr := range attrs {
			nn := m.choose(col, attr, attr, nil)
			rt.attrs[attr] = nn
			newNode[attr] = nn
			moved++
			m.out = append(m.out, PersistRoute{Collection: name, Attr: attr, NodeID: nn})
		}
		if len(attrs) == 0 && len(col.parked["node:"+node]) == 0 {
			continue
		}
		sites := make([]string, 0)
		for site, attr := range rt.sites {
			if _, ok := newNode[attr]; ok {
				sites = append(sites, site)
			}
		}
		sort.Strings(sites)
		for _, site := range sites {
			attr := rt.sites[site]
			var infos []cmt.AddrInfo
			ttl := int64(0)
			if e, ok := m.freshAddrs(site, now); ok {
				infos = addrInfos(e.addrs)
				ttl = int64(e.at.Add(e.ttl).Sub(now) / time.Second)
			}
			for _, n := range m.registered() {
				m.send(m.nodes[n], &cmt.UMAddRoute{Collection: name, NodeID: newNode[attr], RouteAttr: attr, Site: site, Addrs: infos, TTL: ttl})
			}
		}
		// What the old node had: its start URIs, what waited for it and
		// what it got lately.
		for _, raw := range col.spec.StartURIs {
			e, err := StartEntry(raw)
			if err != nil {
				continue
			}
			if _, ok := newNode[rt.sites[entrySite(&e)]]; ok {
				e.Flags |= cmt.URIFForce
				col.queue.pushBack(queued{entry: e, site: entrySite(&e)})
			}
		}
		m.unpark(col, "node:"+node)
		for _, s := range m.fo.recent[node] {
			if s.coll == name {
				col.queue.pushBack(s.q)
			}
		}
		m.logf(slog.LevelWarn, "multinode: sites of a node scheduler rerouted", "collection", name, "node", node, "attrs", len(attrs), "sites", len(sites))
		m.drain(col, now)
	}
	delete(m.fo.recent, node)
	return moved
}
