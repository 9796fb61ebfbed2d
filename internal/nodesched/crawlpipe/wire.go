package crawlpipe

import (
	"net"
	"net/http/httptrace"
	"sync"
	"sync/atomic"
)

// This file counts the bytes a node scheduler sends on its HTTP and HTTPS
// connections (MS-FSCADM WriteNet): the fetchers' dialer wraps every
// connection in a CountingConn, and a request's HTTP trace takes the
// connection's count when it gets the connection and again when the first
// byte of the response arrives (the request is then written and flushed;
// net/http's WroteRequest comes before the flush). A connection carries
// one HTTP/1.1 request at a time between those two moments, so the
// difference is that request's bytes; on a new connection the count starts
// at zero, so the TLS handshake (or a proxy's CONNECT) is the first
// request's. A request that got no response is counted when the step ends
// (its connection is closed, not reused).

// CountingConn is a net.Conn that counts the bytes written to it.
type CountingConn struct {
	net.Conn
	written atomic.Int64
}

// Write counts p before it writes it: the peer may answer, and the
// response's first byte reach the trace, before Write returns.
func (c *CountingConn) Write(p []byte) (int, error) {
	c.written.Add(int64(len(p)))
	n, err := c.Conn.Write(p)
	if n < len(p) {
		c.written.Add(int64(n - len(p)))
	}
	return n, err
}

// NetConn returns the wrapped connection.
func (c *CountingConn) NetConn() net.Conn { return c.Conn }

// countingOf finds the CountingConn under c (through TLS and other
// wrappers that expose NetConn), or nil.
func countingOf(c net.Conn) *CountingConn {
	for range 8 {
		switch x := c.(type) {
		case *CountingConn:
			return x
		case interface{ NetConn() net.Conn }:
			c = x.NetConn()
		default:
			return nil
		}
	}
	return nil
}

// SentCounter adds up the bytes written for the requests of one crawl
// step (redirects included).
type SentCounter struct {
	mu    sync.Mutex
	conn  *CountingConn
	base  int64
	total int64
}

// GotConn is the trace's GotConn part.
func (s *SentCounter) GotConn(info httptrace.GotConnInfo) {
	cc := countingOf(info.Conn)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.conn, s.base = cc, 0
	if cc != nil && info.Reused {
		s.base = cc.written.Load()
	}
}

// GotFirstByte is the trace's GotFirstResponseByte part.
func (s *SentCounter) GotFirstByte() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn != nil {
		s.total += s.conn.written.Load() - s.base
		s.conn = nil
	}
}

// Total returns the bytes counted, once the requests are over.
func (s *SentCounter) Total() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn != nil {
		s.total += s.conn.written.Load() - s.base
		s.conn = nil
	}
	return s.total
}
