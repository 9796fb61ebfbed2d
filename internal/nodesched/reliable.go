package nodesched

import (
	"context"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/tlsconf"
)

// Defaults of what the driver keeps to send again after a broken link.
const (
	// DefaultResendWindow is how long a CMD_UM_URI sent to the multinode
	// scheduler is kept to be sent again on the next link: MS-FSCMT has no
	// acknowledgement, and what a broken link (or a multinode scheduler
	// killed with its queue in memory) loses would never be crawled. The
	// receiving node scheduler's seen-set drops what arrives twice.
	DefaultResendWindow = 10 * time.Minute
	// DefaultResendLimit bounds the entries kept.
	DefaultResendLimit = 1 << 18
)

type sentMsg struct {
	at time.Time
	o  Output
}

// track records a message sent on pc's link: a CMD_UM_URI(_URG) to the
// multinode scheduler for a resend within the window, a PPDUP_ADD/REMOVE
// to a duplicate server until its answer comes.
func (d *Driver) track(pc *peerConn, o Output, now time.Time) {
	switch x := o.Msg.(type) {
	case *cmt.UMURI, *cmt.UMURIUrg:
		if d.resendWindow() <= 0 {
			return
		}
		pc.recent = append(pc.recent, sentMsg{at: now, o: o})
		if len(pc.recent) > 2*DefaultResendLimit || now.Sub(pc.recent[0].at) > 2*d.resendWindow() {
			cut := max(0, len(pc.recent)-DefaultResendLimit)
			for cut < len(pc.recent) && now.Sub(pc.recent[cut].at) > d.resendWindow() {
				cut++
			}
			pc.recent = append([]sentMsg(nil), pc.recent[cut:]...)
		}
	case *cmt.PPDUPAdd:
		if pc.pending == nil {
			pc.pending = map[dsOpKey]Output{}
		}
		pc.pending[dsOpKey{add: true, coll: x.Collection, uri: x.URI, cs: x.Checksum}] = o
	case *cmt.PPDUPRemove:
		if pc.pending == nil {
			pc.pending = map[dsOpKey]Output{}
		}
		pc.pending[dsOpKey{coll: x.Collection, uri: x.URI, cs: x.Checksum}] = o
	}
}

func (d *Driver) resendWindow() time.Duration {
	if d.cfg.ResendWindow == 0 {
		return DefaultResendWindow
	}
	return d.cfg.ResendWindow
}

// dsOpKey names a checksum operation waiting for its answer.
type dsOpKey struct {
	add       bool
	coll, uri string
	cs        cmt.Checksum
}

// answered forgets the operation a duplicate server's answer is about.
func (pc *peerConn) answered(msg cmt.Message) {
	switch x := msg.(type) {
	case *cmt.PPDUPAddOK:
		delete(pc.pending, dsOpKey{add: true, coll: x.Collection, uri: x.URI, cs: x.Checksum})
	case *cmt.PPDUPRemoveOK:
		delete(pc.pending, dsOpKey{coll: x.Collection, uri: x.URI, cs: x.Checksum})
	}
}

// lost puts the checksum operations of a link that went down without an
// answer in front of its backlog: they go again, after the configurations,
// on the next link (to the same duplicate server or its replica). The
// duplicate server's answer to an operation it already has is the same.
func (pc *peerConn) lost() {
	if len(pc.pending) == 0 {
		return
	}
	outs := make([]Output, 0, len(pc.pending)+len(pc.backlog))
	for _, o := range pc.pending {
		outs = append(outs, o)
	}
	pc.pending = nil
	pc.backlog = append(outs, pc.backlog...)
}

// reasked reports messages the machine sends again itself on a new link to
// the multinode scheduler (Machine.askAgain), which the backlog must not
// repeat.
func reasked(m cmt.Message) bool {
	switch m.(type) {
	case *cmt.UMDNSRequest, *cmt.UMStartCrawlIP:
		return true
	}
	return false
}

// FailoverDialer returns a DialFunc over several addresses of one peer: a
// duplicate server and then the failover address of its replica
// (`trawl node --dupserver A --dupserver-failover A=R`). It dials the
// address that worked last, and the next ones when that fails; a link that
// ended less than a second after it was made (the peer refused it: a
// replica not yet ready to be promoted, a fenced duplicate server without
// its replica) makes the next call start at the following address, however
// long the redial backoff waited. local, if not empty, is the source IP
// address.
func FailoverDialer(addrs []string, name, local string, log *slog.Logger, tc *tlsconf.Config) DialFunc {
	var mu sync.Mutex
	cur := 0
	short := false // the last link ended within a second
	gen := 0       // links made, so that an old link's end is ignored
	return func(ctx context.Context) (*cmt.Conn, error) {
		mu.Lock()
		defer mu.Unlock()
		if len(addrs) > 1 && short {
			cur = (cur + 1) % len(addrs)
		}
		short = false
		var firstErr error
		for i := 0; i < len(addrs); i++ {
			a := addrs[(cur+i)%len(addrs)]
			c, err := dialTCP(ctx, a, name+" "+a, local, log, tc)
			if err != nil {
				if firstErr == nil {
					firstErr = err
				}
				continue
			}
			if i > 0 && log != nil {
				log.Warn("nodesched: switched to another address of a peer", "peer", name, "addr", a)
			}
			cur = (cur + i) % len(addrs)
			gen++
			if len(addrs) > 1 {
				g, made := gen, time.Now()
				go func() {
					<-c.Done()
					if time.Since(made) < time.Second {
						mu.Lock()
						if g == gen {
							short = true
						}
						mu.Unlock()
					}
				}()
			}
			return c, nil
		}
		return nil, firstErr
	}
}

// TCPDialerFrom is TCPDialer with a source IP address (empty: any) and,
// if tc is not nil, mutual TLS.
func TCPDialerFrom(addr, name, local string, log *slog.Logger, tc *tlsconf.Config) DialFunc {
	return func(ctx context.Context) (*cmt.Conn, error) { return dialTCP(ctx, addr, name, local, log, tc) }
}

func dialTCP(ctx context.Context, addr, name, local string, log *slog.Logger, tc *tlsconf.Config) (*cmt.Conn, error) {
	d := net.Dialer{Timeout: 10 * time.Second}
	if local != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(local)}
	}
	nc, err := tc.Dialer(&d).DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	return cmt.NewConn(nc, cmt.ConnConfig{Name: name, Logger: log, SendQueue: 65536}), nil
}
