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
	"sync/atomic"
	"time"

	"github.com/trawl/trawl/internal/cmt"
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
// One goroutine, Run's event loop, owns the state machine; every connection
// has a goroutine that feeds its messages to the loop.
type Server struct {
	// Listen is the TCP address to listen on ("" and no Listener: accept
	// only connections given to Serve).
	Listen string
	// Listener, if set, is used instead of Listen (tests pass one on
	// 127.0.0.1:0; `trawl run` a cmt.MemNetwork listener).
	Listener net.Listener
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

	once    sync.Once
	events  chan event
	stopped chan struct{}
	ready   chan struct{}
	addr    net.Addr
	nextID  atomic.Uint64

	mu      sync.Mutex // guards closing and wg.Add against wg.Wait
	closing bool
	wg      sync.WaitGroup
}

// goAdd counts a goroutine of the server, or reports false once it stops.
func (s *Server) goAdd() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return false
	}
	s.wg.Add(1)
	return true
}

type eventKind uint8

const (
	evConnect eventKind = iota + 1
	evMessage
	evDisconnect
)

type event struct {
	kind     eventKind
	peer     PeerID
	conn     *cmt.Conn
	replica  bool // evConnect: the link to the replica (duplicate server mode)
	failover bool // evConnect: a node scheduler on the failover listener (replica mode)
	msg      cmt.Message
}

// DefaultPromoteAfter is how long a replica's duplicate server must have
// been gone before a node scheduler's failover connection promotes it.
const DefaultPromoteAfter = 3 * time.Second

// acceptedSendQueue is the least send queue of an accepted connection.
const acceptedSendQueue = 1 << 15

// machine is what the loop drives: DS or Replica behind one shape.
type machine interface {
	connect(p PeerID, replica bool, now time.Time) []Action
	Disconnect(p PeerID, now time.Time) []Action
	Receive(p PeerID, m cmt.Message, now time.Time) []Action
	Tick(now time.Time) []Action
}

type dsMachine struct{ *DS }

func (m dsMachine) connect(p PeerID, replica bool, now time.Time) []Action {
	if replica {
		return m.ConnectReplica(p, now)
	}
	return m.Connect(p, now)
}

type replicaMachine struct{ *Replica }

func (m replicaMachine) connect(p PeerID, _ bool, now time.Time) []Action { return m.Connect(p, now) }

func (s *Server) init() {
	s.once.Do(func() {
		s.events = make(chan event, 4096)
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

func (s *Server) now() time.Time {
	if s.Clock != nil {
		return s.Clock()
	}
	return time.Now()
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
	var m machine
	if s.ReplicaMode {
		m = replicaMachine{NewReplica(ReplicaConfig{KeepAlive: s.KeepAlive, Logger: log}, st)}
	} else {
		dbDir := s.Data
		if dbDir != "" {
			if abs, err := filepath.Abs(dbDir); err == nil {
				dbDir = abs
			}
		}
		ds, err := NewDS(DSConfig{NodeID: nodeID, DBDir: dbDir, Replica: s.Replica != "", KeepAlive: s.KeepAlive,
			ReplicaTimeout: s.ReplicaTimeout, Logger: log}, st)
		if err != nil {
			return err
		}
		m = dsMachine{ds}
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ln := s.Listener
	if ln == nil && s.Listen != "" {
		var err error
		ln, err = net.Listen("tcp", s.Listen)
		if err != nil {
			return errorf("listen: %w", err)
		}
	}
	refusedLog := func(r net.Addr) {
		log.Warn(role+": connection from an address not on the allow-list refused", "remote", r.String())
	}
	if ln != nil {
		s.addr = ln.Addr()
		ln = cmt.AllowListener(ln, s.Allow, refusedLog)
		log.Info(role+": listening", "addr", ln.Addr().String(), "node", nodeID, "data", s.Data, "allow", s.Allow.String())
		s.goAdd()
		go func() {
			defer s.wg.Done()
			s.accept(ctx, ln, false)
		}()
	}
	var fo *failoverState
	fln := s.FailoverListener
	if s.ReplicaMode && fln == nil && s.FailoverListen != "" {
		var err error
		fln, err = net.Listen("tcp", s.FailoverListen)
		if err != nil {
			return errorf("failover listen: %w", err)
		}
	}
	if fln != nil {
		if !s.ReplicaMode {
			return errorf("a failover listener is for a replica")
		}
		fo = &failoverState{downSince: s.now(), dsPeers: map[PeerID]bool{}, refused: map[PeerID]bool{}}
		fln = cmt.AllowListener(fln, s.Allow, refusedLog)
		log.Info(role+": failover listening", "addr", fln.Addr().String(), "promote_after", s.promoteAfter().String())
		s.goAdd()
		go func() {
			defer s.wg.Done()
			s.accept(ctx, fln, true)
		}()
	}
	close(s.ready)
	if !s.ReplicaMode && s.Replica != "" {
		s.goAdd()
		go func() {
			defer s.wg.Done()
			s.dialReplica(ctx)
		}()
	}

	tick := s.TickInterval
	if tick <= 0 {
		tick = time.Second
	}
	ticker := time.NewTicker(tick)
	defer ticker.Stop()
	conns := map[PeerID]*cmt.Conn{}
	apply := func(acts []Action) {
		for _, a := range acts {
			c := conns[a.To]
			if c == nil {
				continue
			}
			if a.Close {
				c.Close()
				continue
			}
			if err := c.TrySend(a.Msg, a.Priority); err != nil {
				// A peer that does not read its messages is cut off
				// rather than let it grow a queue without bound.
				log.Warn(role+": cannot send, closing the connection", "peer", a.To, "cmd", a.Msg.Code(), "err", err)
				c.Close()
			}
		}
	}
	for {
		select {
		case <-ctx.Done():
			if ln != nil {
				ln.Close()
			}
			if fln != nil {
				fln.Close()
			}
			for _, c := range conns {
				c.Close()
			}
			cancel()
			s.drain()
			log.Info(role + ": stopped")
			return nil
		case <-ticker.C:
			apply(m.Tick(s.now()))
		case e := <-s.events:
			switch e.kind {
			case evConnect:
				if fo != nil {
					nm, ok := s.admit(ctx, fo, e, m, st, nodeID, log)
					if !ok {
						e.conn.Close()
						fo.refused[e.peer] = true
						continue
					}
					m = nm
				}
				conns[e.peer] = e.conn
				apply(m.connect(e.peer, e.replica, s.now()))
			case evMessage:
				if fo != nil && fo.refused[e.peer] {
					continue
				}
				apply(m.Receive(e.peer, e.msg, s.now()))
			case evDisconnect:
				if fo != nil {
					if fo.refused[e.peer] {
						delete(fo.refused, e.peer)
						continue
					}
					if fo.dsPeers[e.peer] {
						delete(fo.dsPeers, e.peer)
						if len(fo.dsPeers) == 0 {
							fo.downSince = s.now()
							log.Warn("dupserver replica: duplicate server gone; node schedulers may promote this replica", "after", s.promoteAfter().String())
						}
					}
				}
				delete(conns, e.peer)
				apply(m.Disconnect(e.peer, s.now()))
			}
		}
	}
}

// drain waits for the connection goroutines, consuming their events so that
// none blocks.
func (s *Server) drain() {
	s.mu.Lock()
	s.closing = true
	s.mu.Unlock()
	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	for {
		select {
		case <-done:
			return
		case <-s.events:
		}
	}
}

// post hands an event to the loop; false if the server stopped.
func (s *Server) post(ctx context.Context, e event) bool {
	select {
	case s.events <- e:
		return true
	case <-ctx.Done():
		return false
	case <-s.stopped:
		return false
	}
}

func (s *Server) accept(ctx context.Context, ln net.Listener, failover bool) {
	log := s.logger()
	for {
		nc, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			if errors.Is(err, net.ErrClosed) {
				return
			}
			log.Error("dupserver: accept", "err", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
			continue
		}
		cfg := s.Conn
		cfg.Name = nc.RemoteAddr().String()
		cfg.Logger = log
		if cfg.SendQueue < acceptedSendQueue {
			// Answers come in bursts (a node scheduler sending again what a
			// lost link left unanswered, a duplicate server resynchronising
			// its replica): a short queue would cut the peer off.
			cfg.SendQueue = acceptedSendQueue
		}
		c := cmt.NewConn(nc, cfg)
		if !s.goAdd() {
			c.Close()
			return
		}
		go func() {
			defer s.wg.Done()
			s.runConnKind(ctx, c, false, failover)
		}()
	}
}

// runConn registers c with the loop, runs it, feeds its messages to the
// loop and reports its end. It returns when c has closed.
func (s *Server) runConn(ctx context.Context, c *cmt.Conn, replica bool) error {
	return s.runConnKind(ctx, c, replica, false)
}

func (s *Server) runConnKind(ctx context.Context, c *cmt.Conn, replica, failover bool) error {
	id := PeerID(s.nextID.Add(1))
	if !s.post(ctx, event{kind: evConnect, peer: id, conn: c, replica: replica, failover: failover}) {
		c.Close()
		return errorf("server stopped")
	}
	errc := make(chan error, 1)
	go func() { errc <- c.Run(ctx) }()
	for f := range c.Incoming() {
		if !s.post(ctx, event{kind: evMessage, peer: id, msg: f.Message}) {
			c.Close()
		}
	}
	err := <-errc
	s.post(ctx, event{kind: evDisconnect, peer: id})
	if err != nil {
		s.logger().Info("dupserver: connection ended", "peer", id, "err", err)
	}
	return err
}

// Serve runs an already connected peer connection (a node scheduler, or in
// replica mode the duplicate server) through the server until it closes or
// ctx ends; Run must be running or start soon. Serve calls c.Run itself.
func (s *Server) Serve(ctx context.Context, c *cmt.Conn) error {
	s.init()
	if !s.goAdd() {
		c.Close()
		return errorf("server stopped")
	}
	defer s.wg.Done()
	return s.runConn(ctx, c, false)
}

// dialReplica keeps a connection to the replica, redialling with
// exponential backoff (100 ms to 10 s) while it is down.
func (s *Server) dialReplica(ctx context.Context) {
	s.dialReplicaAt(ctx, s.Replica)
}

func (s *Server) dialReplicaAt(ctx context.Context, addr string) {
	log := s.logger()
	var dialer cmt.Dialer = s.Dialer
	if dialer == nil {
		dialer = &net.Dialer{}
	}
	const minBackoff, maxBackoff = 100 * time.Millisecond, 10 * time.Second
	backoff := minBackoff
	failures := 0
	for ctx.Err() == nil {
		dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		nc, err := dialer.DialContext(dctx, "tcp", addr)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			failures++
			lvl := slog.LevelDebug
			if failures == 1 || failures%30 == 0 {
				lvl = slog.LevelWarn
			}
			log.Log(ctx, lvl, "dupserver: replica unreachable, retrying", "addr", addr, "err", err, "retry_in", backoff, "failures", failures)
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, maxBackoff)
			continue
		}
		failures, backoff = 0, minBackoff
		cfg := s.Conn
		cfg.Name = "replica " + addr
		cfg.Logger = log
		if cfg.SendQueue < 2*DefaultWindow {
			cfg.SendQueue = 2 * DefaultWindow
		}
		c := cmt.NewConn(nc, cfg)
		start := time.Now()
		s.runConn(ctx, c, true)
		if ctx.Err() != nil {
			return
		}
		// A link that keeps failing at once must not be redialled in a
		// tight loop.
		if time.Since(start) < time.Second {
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, maxBackoff)
		}
	}
}

// String describes the server for logs.
func (s *Server) String() string {
	if s.ReplicaMode {
		return fmt.Sprintf("dupserver replica %s", s.Listen)
	}
	return fmt.Sprintf("dupserver %s", s.Listen)
}
