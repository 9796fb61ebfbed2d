package multinode

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/marshal"
)

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
