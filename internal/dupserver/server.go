package dupserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/diskspace"
	"github.com/trawl/trawl/internal/loop"
	"github.com/trawl/trawl/internal/tlsconf"
)

// Default ports (DESIGN.md section 4.3): a duplicate server listens on base+2,
// a replica on base+3.
const (
	DefaultPort        = 13002
	DefaultReplicaPort = 13003
)

// Server runs a duplicate server, or with ReplicaMode a replica, over real
// connections. Set the fields, then call Run; Serve adds a connection made
// elsewhere (an in-memory pipe of `trawl run`).
//
// The machine (DS, Replica or, with a failover listener, Failover) runs on
// a loop.Driver, which owns the connections, the timers and the redial of
// the replica.
type Server struct {
	// Listen is the TCP address to listen on ("" and no Listener: accept
	// only connections given to Serve).
	Listen string
	// Listener, if set, is used instead of Listen (tests pass one on
	// 127.0.0.1:0; `trawl run` a cmt.MemNetwork listener).
	Listener net.Listener
	// TLS, if set, makes the listeners and the link to the replica mutual
	// TLS (internal/tlsconf).
	TLS *tlsconf.Config
	// Replica is the address of this duplicate server's replica ("" for
	// none). The server dials it, and again with backoff when it is down.
	Replica string
	// ReplicaMode makes the server a replica that accepts its duplicate
	// server's connection.
	ReplicaMode bool
	// Data is the directory of the Pebble checksum store. Empty: an
	// in-memory store (unless Store is set).
	Data string
	// Store, if set, is used instead of opening Data; the caller closes it.
	Store Store
	// NodeID is the duplicate server's node identifier (PKT_PPDUP_ID);
	// default: the host name.
	NodeID string
	// Logger receives the records (nil: discarded).
	Logger *slog.Logger
	// Clock returns the time given to the machine (nil: time.Now).
	Clock func() time.Time
	// Dialer dials the replica (nil: a net.Dialer).
	Dialer cmt.Dialer
	// KeepAlive, ReplicaTimeout: the machine's timers (0: defaults).
	KeepAlive      time.Duration
	ReplicaTimeout time.Duration
	// TickInterval is how often the timers are checked (default 1 s).
	TickInterval time.Duration
	// Conn is the template of every connection's configuration; Name and
	// Logger are filled in per connection.
	Conn cmt.ConnConfig
	// Allow lists the peer addresses that may connect to the listeners
	// (empty: any); a refused connection is closed at once and logged.
	Allow cmt.AllowList
	// FailoverListen (or FailoverListener) is, in replica mode, where node
	// schedulers connect when the duplicate server is gone
	// (`trawl node --dupserver-failover`). A node scheduler's connection
	// there promotes the replica to a duplicate server when its duplicate
	// server has been disconnected for PromoteAfter
	// (DefaultPromoteAfter if 0); before, it is closed at once, so that the
	// node scheduler goes back to the duplicate server. See
	// docs/decisions/dupserver.md.
	FailoverListen   string
	FailoverListener net.Listener
	PromoteAfter     time.Duration
	// FailoverReplica is the replica address of the promoted server: the
	// old duplicate server, restarted with --replica-mode, catches up from
	// it ("" for none).
	FailoverReplica string

	// Disk, if set, holds the checksum writes while the free space of
	// Data's file system is below its low-water mark (diskfull.go).
	Disk *diskspace.Guard

	once    sync.Once
	stopped chan struct{}
	ready   chan struct{}
	addr    net.Addr
	drv     *loop.Driver[cmt.Message]
	disk    diskSetter // the machine the disk guard drives (diskfull.go)
}

// acceptedSendQueue is the least send queue of an accepted connection.
const acceptedSendQueue = 1 << 15

func (s *Server) init() {
	s.once.Do(func() {
		s.stopped = make(chan struct{})
		s.ready = make(chan struct{})
	})
}

func (s *Server) logger() *slog.Logger {
	if s.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Logger
}

// clock adapts Server.Clock to the driver.
type clock struct{ now func() time.Time }

func (c clock) Now() time.Time { return c.now() }
func (c clock) Timer(d time.Duration) (<-chan time.Time, func()) {
	return loop.RealClock{}.Timer(d)
}

// Addr waits until Run listens and returns the listening address, or nil if
// ctx ends first or the server has no listener.
func (s *Server) Addr(ctx context.Context) net.Addr {
	s.init()
	select {
	case <-s.ready:
		return s.addr
	case <-s.stopped:
		return nil
	case <-ctx.Done():
		return nil
	}
}

// Run runs the server until ctx ends. It returns nil after a clean stop.
func (s *Server) Run(ctx context.Context) error {
	s.init()
	defer close(s.stopped)
	log := s.logger()
	role := "dupserver"
	if s.ReplicaMode {
		role = "dupserver replica"
	}
	if s.ReplicaMode && s.Replica != "" {
		return errors.New("dupserver: a replica has no replica of its own")
	}
	st := s.Store
	if st == nil {
		if s.Data == "" {
			st = NewMemStore()
		} else {
			if err := os.MkdirAll(s.Data, 0o755); err != nil {
				return errorf("data directory: %w", err)
			}
			ps, err := OpenPebble(s.Data, PebbleOptions{Logger: log})
			if err != nil {
				return err
			}
			defer ps.Close()
			st = ps
		}
	}
	nodeID := s.NodeID
	if nodeID == "" {
		nodeID, _ = os.Hostname()
		if nodeID == "" {
			nodeID = "dupserver"
		}
	}
	now := time.Now
	if s.Clock != nil {
		now = s.Clock
	}
	refusedLog := func(r net.Addr) {
		log.Warn(role+": connection from an address not on the allow-list refused", "remote", r.String())
	}
	tlsRefused := func(r net.Addr, err error) {
		log.Warn(role+": connection without a valid TLS client certificate refused", "remote", r.String(), "err", err)
	}
	accepted := s.Conn
	accepted.Logger = log
	// Answers come in bursts (a node scheduler sending again what a lost
	// link left unanswered, a duplicate server resynchronising its
	// replica): a short queue would cut the peer off.
	accepted.SendQueue = max(accepted.SendQueue, acceptedSendQueue)
	listeners := map[string]loop.Listener[cmt.Message]{}
	ln := s.Listener
	if ln == nil && s.Listen != "" {
		var err error
		if ln, err = net.Listen("tcp", s.Listen); err != nil {
			return errorf("listen: %w", err)
		}
	}
	if ln != nil {
		s.addr = ln.Addr()
		listeners[TagListen] = loop.CMTListener(s.TLS.Listener(cmt.AllowListener(ln, s.Allow, refusedLog), tlsRefused), accepted)
		log.Info(role+": listening", "addr", ln.Addr().String(), "node", nodeID, "data", s.Data, "allow", s.Allow.String())
	}
	fln := s.FailoverListener
	if s.ReplicaMode && fln == nil && s.FailoverListen != "" {
		var err error
		if fln, err = net.Listen("tcp", s.FailoverListen); err != nil {
			return errorf("failover listen: %w", err)
		}
	}
	if fln != nil && !s.ReplicaMode {
		return errorf("a failover listener is for a replica")
	}
	dbDir := s.Data
	if dbDir != "" {
		if abs, err := filepath.Abs(dbDir); err == nil {
			dbDir = abs
		}
	}
	dsCfg := DSConfig{NodeID: nodeID, DBDir: dbDir, Replica: s.Replica != "", ReplicaAddr: s.Replica,
		KeepAlive: s.KeepAlive, ReplicaTimeout: s.ReplicaTimeout}
	var m loop.Machine[cmt.Message]
	switch {
	case fln != nil:
		listeners[TagFailover] = loop.CMTListener(s.TLS.Listener(cmt.AllowListener(fln, s.Allow, refusedLog), tlsRefused), accepted)
		dsCfg.Replica, dsCfg.ReplicaAddr = false, s.FailoverReplica
		m = NewFailover(FailoverConfig{Replica: ReplicaConfig{KeepAlive: s.KeepAlive}, DS: dsCfg,
			PromoteAfter: s.PromoteAfter, Start: now()}, st)
		log.Info(role+": failover listening", "addr", fln.Addr().String(), "promote_after", s.promoteAfter().String())
	case s.ReplicaMode:
		m = NewReplica(ReplicaConfig{KeepAlive: s.KeepAlive}, st)
	default:
		ds, err := NewDS(dsCfg, st)
		if err != nil {
			return err
		}
		m = ds
	}
	toReplica := s.Conn
	toReplica.Logger = log
	toReplica.SendQueue = max(toReplica.SendQueue, 2*DefaultWindow)
	s.drv = loop.New(loop.Config[cmt.Message]{
		Name: role, Machine: m, Listeners: listeners,
		Dialer:       loop.CMTDialer{D: s.TLS.Dialer(s.Dialer), Cfg: toReplica, Timeout: 5 * time.Second},
		Clock:        clock{now: now},
		TickInterval: s.TickInterval,
		Logger:       log,
	})
	close(s.ready)
	var wg sync.WaitGroup
	if ds, ok := m.(diskSetter); ok && s.Disk != nil {
		s.disk = ds
		wctx, stop := context.WithCancel(ctx)
		defer wg.Wait()
		defer stop()
		wg.Add(1)
		go s.watchDisk(wctx, &wg, ds)
	}
	err := s.drv.Run(ctx)
	log.Info(role + ": stopped")
	return err
}

func (s *Server) promoteAfter() time.Duration {
	if s.PromoteAfter > 0 {
		return s.PromoteAfter
	}
	return DefaultPromoteAfter
}

// Serve runs an already connected peer connection (a node scheduler, or in
// replica mode the duplicate server) through the server until it closes or
// ctx ends; Run must be running or start soon. Serve calls c.Run itself.
func (s *Server) Serve(ctx context.Context, c *cmt.Conn) error {
	s.init()
	select {
	case <-s.ready:
	case <-s.stopped:
		c.Close()
		return errorf("server stopped")
	case <-ctx.Done():
		c.Close()
		return ctx.Err()
	}
	if s.drv == nil {
		c.Close()
		return errorf("server stopped")
	}
	return s.drv.Serve(ctx, TagListen, loop.CMT(c, "in-memory"))
}

// LoopStats returns the counters of the server's event loop (loop.Stats;
// the zero value and false before Run has started it).
func (s *Server) LoopStats() (loop.Stats, bool) {
	s.init()
	select {
	case <-s.ready:
		return s.drv.Stats(), true
	default:
		return loop.Stats{}, false
	}
}

// String describes the server for logs.
func (s *Server) String() string {
	if s.ReplicaMode {
		return fmt.Sprintf("dupserver replica %s", s.Listen)
	}
	return fmt.Sprintf("dupserver %s", s.Listen)
}
