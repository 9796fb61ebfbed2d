package multinode

import (
	"context"
	"errors"
	"maps"
	"net"
	"sync/atomic"
)

// DNSStats are the multinode scheduler's DNS counters, the global
// statistics of MS-FSCADM 2.2.4.8 (DNSRequests, DNSResponses,
// DNSRetries, DNSTimeout, the DNSResponse histogram by RCODE,
// DNSRateLimit, DNSWrite and DNSRead), cumulative since the scheduler
// started. The machine counts the lookups and their results; the driver
// adds the bytes and the rate.
type DNSStats struct {
	// Requests counts lookups started; Retries those of a name whose
	// previous lookup failed.
	Requests, Retries int64
	// Responses counts lookups that got an answer (addresses, or a name
	// error or server failure); Timeouts those that got none in time.
	Responses, Timeouts int64
	// RCodes counts the answers by RFC 1035 RCODE: 0 (addresses, or no
	// address), 2 (server failure), 3 (no such name).
	RCodes map[int]int64
	// CacheHits counts node scheduler requests answered from the DNS
	// database without a lookup.
	CacheHits int64
	// MaxRate is the most lookups started within one second of the clock.
	MaxRate int64
	// Written and Read count the bytes of DNS traffic (UDP and TCP) of the
	// built-in resolver; a hosts file or another Resolver sends none.
	Written, Read int64
}

// Clone returns a copy of s.
func (s DNSStats) Clone() DNSStats {
	s.RCodes = maps.Clone(s.RCodes)
	return s
}

// RFC 1035 response codes the statistics count.
const (
	rcodeNoError  = 0
	rcodeServFail = 2
	rcodeNXDomain = 3
)

// countLookup counts a lookup of host about to start.
func (m *MNS) countLookup(host string, now int64) {
	m.dnsStats.Requests++
	if e := m.dns[host]; e != nil && e.addrs == nil {
		m.dnsStats.Retries++
	}
	if now != m.dnsSecond {
		m.dnsSecond, m.dnsInSecond = now, 0
	}
	m.dnsInSecond++
	m.dnsStats.MaxRate = max(m.dnsStats.MaxRate, m.dnsInSecond)
}

// countResult counts the result of a lookup.
func (m *MNS) countResult(err error) {
	rcode := -1
	var de *net.DNSError
	switch {
	case err == nil:
		rcode = rcodeNoError
	case errors.Is(err, ErrNotFound):
		rcode = rcodeNXDomain
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &de) && de.IsTimeout:
		m.dnsStats.Timeouts++
	case errors.As(err, &de) && de.IsNotFound:
		rcode = rcodeNXDomain
	case errors.As(err, &de) && de.Server != "":
		rcode = rcodeServFail // an answer came, and it was not usable
	}
	if rcode < 0 {
		return
	}
	m.dnsStats.Responses++
	if m.dnsStats.RCodes == nil {
		m.dnsStats.RCodes = map[int]int64{}
	}
	m.dnsStats.RCodes[rcode]++
}

// DNSStats returns the machine's DNS counters (bytes excluded).
func (m *MNS) DNSStats() DNSStats { return m.dnsStats.Clone() }

// dnsWire counts the bytes of the built-in resolver's connections.
type dnsWire struct {
	read, written atomic.Int64
	// server, if set, receives every query instead of the system's
	// name servers.
	server string
}

// dial is the net.Resolver's Dial.
func (w *dnsWire) dial(ctx context.Context, network, address string) (net.Conn, error) {
	if w.server != "" {
		address = w.server
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, network, address)
	if err != nil {
		return nil, err
	}
	if pc, ok := c.(net.PacketConn); ok {
		// The resolver frames UDP messages when the connection is a
		// PacketConn: keep it one.
		return &dnsPacketConn{dnsConn: dnsConn{Conn: c, w: w}, pc: pc}, nil
	}
	return &dnsConn{Conn: c, w: w}, nil
}

type dnsConn struct {
	net.Conn
	w *dnsWire
}

func (c *dnsConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.w.read.Add(int64(n))
	return n, err
}

func (c *dnsConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.w.written.Add(int64(n))
	return n, err
}

type dnsPacketConn struct {
	dnsConn
	pc net.PacketConn
}

func (c *dnsPacketConn) ReadFrom(p []byte) (int, net.Addr, error) {
	n, a, err := c.pc.ReadFrom(p)
	c.w.read.Add(int64(n))
	return n, a, err
}

func (c *dnsPacketConn) WriteTo(p []byte, a net.Addr) (int, error) {
	n, err := c.pc.WriteTo(p, a)
	c.w.written.Add(int64(n))
	return n, err
}
