package multinode

import (
	"errors"
	"log/slog"
	"net/netip"
	"time"

	"github.com/trawl/trawl/internal/cmt"
)

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
