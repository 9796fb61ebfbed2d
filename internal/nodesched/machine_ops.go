package nodesched

import (
	"net/netip"
	"strings"
	"time"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/crawllog"
	"github.com/trawl/trawl/internal/frontier"
	"github.com/trawl/trawl/internal/nodesched/crawlpipe"
)

func (m *Machine) addRoute(x *cmt.UMAddRoute, now time.Time) error {
	b := m.st.NewBatch()
	id, err := m.nodeNum(b, x.NodeID)
	if err != nil {
		b.Discard()
		return err
	}
	if err := b.PutRoute(x.Collection, hostOf(x.Site), id); err != nil {
		b.Discard()
		return err
	}
	if x.NodeID == m.cfg.NodeID && len(x.Addrs) > 0 {
		rec := &dnsRecord{Host: hostOf(x.Site), Expires: now.Add(time.Duration(max(x.TTL, 1)) * time.Second)}
		for _, a := range x.Addrs {
			if ip, err := netip.ParseAddr(a.IP); err == nil {
				rec.Addrs = append(rec.Addrs, ip)
			}
		}
		if len(rec.Addrs) > 0 {
			if err := b.PutDNS(rec); err != nil {
				b.Discard()
				return err
			}
			m.resolved = append(m.resolved, Resolution{Host: rec.Host, IP: rec.Addrs[0].String()})
		}
	}
	return b.Commit()
}

func (m *Machine) askRoute(coll string) error {
	var routes []cmt.Route
	flush := func() {
		if len(routes) > 0 {
			m.send(MNS, &cmt.UMAddRouteReply{Collection: coll, Routes: routes})
			routes = nil
		}
	}
	err := m.st.Routes(coll, func(site string, node int64) error {
		routes = append(routes, cmt.Route{Attr: site, NodeID: m.nodeName[node]})
		if len(routes) == cmt.MaxRoutesPerMessage {
			flush()
		}
		return nil
	})
	flush()
	m.send(MNS, &cmt.UMLastRoute{Collection: coll})
	return err
}

// refresh starts a refresh cycle (3.1.5.9) per the CONF_REFRESH bitmask.
func (m *Machine) refresh(c *collection, flags cmt.RefreshFlags, now time.Time) error {
	c.s = c.s.WithFreshRobots()
	links := m.startLinks(c)
	if flags&cmt.RefreshStartURIsOnly != 0 && flags&(cmt.RefreshCollection|cmt.RefreshSubCollection|cmt.RefreshTruncateQueues) == 0 {
		return m.addLinks(c, now, forceStart(links), nil, "")
	}
	var seeds []frontier.Entry
	var others []crawlpipe.Link
	for _, l := range links {
		if own, _ := m.route(c.s.Name, l.Site); own {
			seeds = append(seeds, frontier.Entry{URI: l.URI, Site: l.Site, URIFlags: l.Flags, Extra: crawlpipe.EncodeMeta(crawlpipe.EntryMeta{})})
		} else {
			others = append(others, l)
		}
	}
	// What the cycle that ends counted goes out before the new cycle is
	// counted (refresh_cycles): the multinode scheduler files a report
	// under the cycle it knows of.
	m.reportStats(c)
	rep, err := c.front.Refresh(now, seeds, func(site, uri string) error {
		m.resetLists()
		b := m.st.NewBatch()
		if err := b.DeleteURI(c.s.Name, site, uri); err != nil {
			b.Discard()
			return err
		}
		if err := m.feedDeleted(c, b, uri); err != nil {
			b.Discard()
			return err
		}
		c.setCur(site)
		c.count("deleted", 1)
		c.clearCur()
		return m.feedCommit(c.s.Name, b, b.Commit, m.takeStepFeed(), "")
	})
	m.pump(c)
	if err != nil {
		return err
	}
	c.count("refresh_cycles", 1)
	m.log.Info("nodesched: refresh cycle started", "collection", c.s.Name, "cycle", rep.Cycle, "seeded", rep.Seeded, "truncated", rep.Truncated)
	return m.addLinks(c, now, forceStart(others), nil, "")
}

// subRefresh starts a round of subcollection k (its own refresh, or an
// operator's refetch of it when force): its URIs count as not seen and its
// refresh_mode applies to them (frontier.RefreshSub); its start URIs are
// queued again. A soft round waits (Postponed) while its URIs are queued.
func (m *Machine) subRefresh(c *collection, k int, now time.Time, force bool) error {
	var seeds []frontier.Entry
	var others []crawlpipe.Link
	for _, l := range m.startLinks(c) {
		if c.s.SubIndex(l.URI) != k {
			continue
		}
		if own, _ := m.route(c.s.Name, l.Site); own {
			seeds = append(seeds, frontier.Entry{URI: l.URI, Site: l.Site, URIFlags: l.Flags, Extra: crawlpipe.EncodeMeta(crawlpipe.EntryMeta{})})
		} else {
			others = append(others, l)
		}
	}
	rep, err := c.front.RefreshSub(now, k, seeds, force)
	m.pump(c)
	if err != nil {
		return err
	}
	if rep.Postponed {
		m.log.Debug("nodesched: subcollection refresh waits for its queued URIs (soft)", "collection", c.s.Name, "subcollection", rep.Sub)
		return nil
	}
	c.count("subrefresh_rounds", 1)
	m.log.Info("nodesched: subcollection refresh started", "collection", c.s.Name, "subcollection", rep.Sub,
		"seeded", rep.Seeded, "truncated", rep.Truncated, "rescheduled", rep.Rescheduled)
	return m.addLinks(c, now, forceStart(others), nil, "")
}

func forceStart(l []crawlpipe.Link) []crawlpipe.Link {
	for i := range l {
		l[i].Flags |= uint32(cmt.URIFForce)
	}
	return l
}

// remove is CMD_ADM_CONF_REMOVE (3.1.5.12).
func (m *Machine) remove(name string) error {
	c := m.colls[name]
	if c != nil {
		c.state = cmt.StateRemoving
		if err := c.front.Close(); err != nil {
			m.log.Warn("nodesched: closing frontier", "collection", name, "err", err)
		}
		delete(m.colls, name)
		for i, n := range m.order {
			if n == name {
				m.order = append(m.order[:i], m.order[i+1:]...)
				break
			}
		}
		b := m.st.NewBatch()
		if err := deleteCollection(b, name); err != nil { // view.go
			b.Discard()
			return err
		}
		m.uriFilesRemoved(c, b) // uridir.go
		ops, err := m.feedRemoveCollection(name, b)
		if err == nil {
			err = forgetAdminModes(b, name)
		}
		if err != nil {
			b.Discard()
			return err
		}
		if err := m.feedCommit(name, b, b.Commit, ops, ""); err != nil {
			return err
		}
		for i := range m.ds {
			m.sendPrio(DS(i), &cmt.PPDUPConfRemove{Collection: name}, cmt.PriorityHigh)
			m.sendPrio(DS(i), &cmt.PPDUPConfRemove2{Collection: name}, cmt.PriorityNormal)
		}
	}
	m.send(MNS, &cmt.UMDeleteOK{Collection: name})
	return nil
}

func (m *Machine) reprocess(c *collection, x *cmt.UMReprocessSite) error {
	r := Reprocess{Site: x.Site, Prefix: x.Prefix, Destination: x.Destination, Exact: x.Exact}
	err := m.st.SiteURIs(c.s.Name, x.Site, func(uri string) error {
		if (x.Exact && uri == x.Prefix) || (!x.Exact && strings.HasPrefix(uri, x.Prefix)) {
			r.URIs++
		}
		return nil
	})
	c.reproc = append(c.reproc, r)
	if len(c.reproc) > 1024 {
		c.reproc = c.reproc[len(c.reproc)-1024:]
	}
	c.count("reprocess_requests", 1)
	if err != nil {
		return err
	}
	_, err = m.feedReprocess(c, x.Site, x.Prefix, x.Exact, x.Destination)
	return err
}

func (m *Machine) deleteSite(c *collection, site string) error {
	var uris []string
	if err := m.st.SiteURIs(c.s.Name, site, func(uri string) error { uris = append(uris, uri); return nil }); err != nil {
		return err
	}
	return m.deleteList(c, site, uris, true)
}

func (m *Machine) deleteURIs(c *collection, x *cmt.UMDeleteURIs) error {
	for _, su := range x.Sites {
		if err := m.deleteList(c, su.Site, su.URIs, false); err != nil {
			return err
		}
	}
	return nil
}

// deleteList deletes the records of uris (every URI of the site when
// wholeSite) and makes the frontier forget them in the same batch: their
// queued entries go, and a later link queues them again.
func (m *Machine) deleteList(c *collection, site string, uris []string, wholeSite bool) error {
	tx, err := c.front.Begin(m.now)
	if err != nil {
		return err
	}
	m.resetLists()
	b := tx.Batch()
	n := 0
	for _, uri := range uris {
		rec, ok, err := m.st.URI(c.s.Name, uri)
		if err != nil || !ok {
			continue
		}
		if rec.HasChecksum {
			_ = m.forgetKeys(c, b, uri, m.dupKeys(c, uri, rec.Checksum, rec.ContentType))
		}
		if err := b.DeleteURI(c.s.Name, site, uri); err != nil {
			tx.Discard()
			return err
		}
		if err := m.feedDeleted(c, b, uri); err != nil {
			tx.Discard()
			return err
		}
		n++
	}
	var dropped int
	if wholeSite {
		dropped, err = tx.DropSite(site, uris)
	} else {
		dropped, err = tx.DropURIs(site, uris)
	}
	if err != nil {
		tx.Discard()
		return err
	}
	c.setCur(site)
	c.count("deleted", int64(n))
	c.clearCur()
	err = m.feedCommit(c.s.Name, b, tx.Commit, m.takeStepFeed(), "")
	m.pump(c)
	if dropped > 0 {
		m.log.Debug("nodesched: queued entries dropped", "collection", c.s.Name, "site", site, "entries", dropped)
	}
	return err
}

func (m *Machine) quarantine(coll, site string, secs int64, requeue bool, now time.Time) error {
	c := m.colls[coll]
	if c == nil {
		return nil
	}
	until := now.Add(time.Duration(max(secs, 0)) * time.Second)
	c.quar[site] = until
	m.now = now
	m.logSite(c, site, "quarantined", "until="+until.UTC().Format(crawllog.TimeLayout))
	err := c.front.Quarantine(site, until, requeue, now)
	m.pump(c)
	return err
}

// Quarantined lists the quarantined sites of coll and when each expires.
func (m *Machine) Quarantined(coll string) map[string]time.Time {
	out := map[string]time.Time{}
	if c := m.colls[coll]; c != nil {
		for k, v := range c.quar {
			out[k] = v
		}
	}
	return out
}

func (m *Machine) dnsReply(x *cmt.UMDNSReply, now time.Time) error {
	host := strings.ToLower(x.Host)
	m.countDNSIn(x, host) // dnsstats.go
	rec := &dnsRecord{Host: host, Expires: now.Add(time.Duration(max(x.TTL, 1)) * time.Second)}
	for _, a := range x.Addrs {
		if ip, err := netip.ParseAddr(a.IP); err == nil {
			rec.Addrs = append(rec.Addrs, ip)
		}
	}
	if len(rec.Addrs) == 0 {
		rec.Failed = true
		rec.Expires = now.Add(5 * time.Minute)
	}
	b := m.st.NewBatch()
	if err := b.PutDNS(rec); err != nil {
		b.Discard()
		return err
	}
	if err := b.Commit(); err != nil {
		return err
	}
	ip := ""
	if len(rec.Addrs) > 0 {
		ip = rec.Addrs[0].String()
	}
	m.resolved = append(m.resolved, Resolution{Host: host, IP: ip, Expires: rec.Expires})
	waiters := m.dnsPending[host]
	delete(m.dnsPending, host)
	for _, w := range waiters {
		if c := m.colls[w.coll]; c != nil {
			c.front.SetIP(w.site, ip, now)
			m.pump(c)
		}
	}
	return nil
}

// LookupHost asks for the address of host for the fetchers' dialer: the DNS
// database answers when it can, otherwise a CMD_UM_DNS_REQUEST goes out and
// the answer comes through Resolved.
func (m *Machine) LookupHost(host string, now time.Time) (ip string, ok bool) {
	m.now = now
	host = strings.ToLower(host)
	if rec, ok, err := m.st.DNS(host, now); err == nil && ok {
		if len(rec.Addrs) > 0 {
			return rec.Addrs[0].String(), true
		}
		return "", true
	}
	if _, pending := m.dnsPending[host]; !pending {
		m.dnsPending[host] = nil
		m.send(MNS, &cmt.UMDNSRequest{Collection: "", Site: host})
	}
	return "", false
}

func hostOf(site string) string {
	h := site
	if strings.HasPrefix(h, "[") {
		if i := strings.Index(h, "]"); i > 0 {
			return strings.ToLower(h[1:i])
		}
	}
	if i := strings.LastIndexByte(h, ':'); i >= 0 {
		h = h[:i]
	}
	return strings.ToLower(h)
}
