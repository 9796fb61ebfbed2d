package multinode

import (
	"log/slog"
	"net/netip"
	"time"

	"github.com/trawl/trawl/internal/cmt"
)

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
