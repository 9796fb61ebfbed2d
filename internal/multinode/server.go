package multinode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/vfs"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/crawllog"
	"github.com/trawl/trawl/internal/marshal"
)

// DefaultPort is the port the multinode scheduler listens on for node
// schedulers: the base port 13000 + 1 (DESIGN.md 4.3).
const DefaultPort = 13001

// Defaults of the driver.
const (
	DefaultDNSWorkers  = 16
	DefaultDNSTimeout  = 10 * time.Second
	DefaultTick        = time.Second
	defaultSendQueue   = 1 << 14
	maxPendingLookups  = 1 << 16
	eventQueue         = 1024
	logFileMode        = 0o644
	logDirMode         = 0o755
	routesDirName      = "routes"
	logsDirName        = "logs"
	defaultDNSFailText = "lookup queue full"
	// maxOverflow bounds the messages held for one node scheduler whose
	// send queue is full; beyond it the connection is closed.
	maxOverflow = 1 << 16
	// DefaultFullTimeout is how long a node scheduler's send queue may stay
	// full before its connection is closed.
	DefaultFullTimeout = 2 * time.Minute
	// flushEvery is how often held messages are retried while a send
	// queue is full.
	flushEvery = 10 * time.Millisecond
	// logStopWait bounds how long Run waits, when it stops, for the log
	// writer to write what is queued: a disk that hangs must not hang the
	// process's shutdown.
	logStopWait = 30 * time.Second
)

// ErrServerClosed is returned by the methods of a Server that is not
// running.
var ErrServerClosed = errors.New("multinode: server not running")

// Server runs the multinode scheduler: it listens for node schedulers,
// owns the state machine in one event loop, resolves names with bounded
// workers, persists routes and appends the collections' log files.
//
// Set the fields, then call Run. The administrative methods may be called
// from any goroutine while Run runs; they wait until Run has started.
type Server struct {
	// Listen is the TCP address for node schedulers (":13001" for the
	// default base port). Empty with Listener nil: no listener, only
	// Attach-ed connections.
	Listen string
	// Listener, if set, is used instead of Listen (for example a
	// cmt.MemNetwork listener, or 127.0.0.1:0 in tests).
	Listener net.Listener
	// Data is the directory of the multinode scheduler's state: the
	// routing database (Data/routes) and the collections' log files
	// (Data/logs/<collection>/<file>.log, see LogFilePath). Empty keeps
	// routes in memory and sends log lines to Logger.
	Data string
	// Logs tunes the writer of the collections' log files (package
	// crawllog): the size past which a file is rotated and the copies
	// kept (64 MiB and 3 by default), the queue of lines waiting for the
	// disk (16,384; a line that finds it full is dropped and counted), how
	// often lines are flushed, and how a file is opened. Dir and Logger
	// are the server's (Data/logs, Logger).
	Logs crawllog.Config
	// Resolver resolves host names. Nil: HostsFile if set, else the
	// system resolver.
	Resolver Resolver
	// HostsFile is a file in /etc/hosts format to resolve from; with
	// HostsFallback, names it lacks go to the system resolver.
	HostsFile     string
	HostsFallback bool
	// DNSServer, if set ("host:port"), receives the system resolver's
	// queries instead of the name servers of /etc/resolv.conf.
	DNSServer string
	// Logger receives the operator's log (nil discards it).
	Logger *slog.Logger
	// Clock returns the current time (nil: time.Now).
	Clock func() time.Time
	// Collections are added when Run starts.
	Collections []*CollectionSpec
	// Config tunes the state machine.
	Config Config
	// DNSWorkers bounds concurrent lookups (DefaultDNSWorkers if <= 0);
	// DNSTimeout bounds one lookup.
	DNSWorkers int
	DNSTimeout time.Duration
	// Tick is the period of the machine's clock (DefaultTick if <= 0).
	Tick time.Duration
	// ConnConfig configures each connection (the send queue defaults to
	// 16384 messages per priority; when it is full, messages are held and
	// forwarding to that node waits, see FullTimeout).
	ConnConfig cmt.ConnConfig
	// RerouteRequests polls Data/reroute every second for the requests
	// RequestReroute writes (`trawl multinode --reroute ID`).
	RerouteRequests bool
	// Allow lists the peer addresses node schedulers may connect from
	// (empty: any); a refused connection is closed at once and logged.
	Allow cmt.AllowList
	// FullTimeout is how long a node scheduler's send queue may stay full
	// before its connection is closed (DefaultFullTimeout if <= 0). While
	// it is full, the messages for it are held (up to 65,536) and the
	// entries routed to it wait in the collection's queue.
	FullTimeout time.Duration

	once    sync.Once
	events  chan event
	ready   chan struct{}
	stopped chan struct{}
	addr    net.Addr
	nextID  ConnID
	idMu    sync.Mutex
	// wire counts the built-in resolver's DNS traffic (dnsstats.go).
	wire dnsWire
	// clogs writes the collections' log files while Run runs;
	// logsRefused counts the lines whose collection cannot name a
	// directory.
	clogs       atomic.Pointer[crawllog.Logs]
	logsRefused atomic.Uint64
}

type eventKind uint8

const (
	evConnect eventKind = iota
	evMessage
	evDisconnect
	evDNS
	evOp
)

type event struct {
	kind  eventKind
	id    ConnID
	conn  *cmt.Conn
	msg   cmt.Message
	host  string
	addrs []netip.Addr
	err   error
	op    func(m *MNS, now time.Time) ([]Action, error)
	reply chan error
}

func (s *Server) init() {
	s.once.Do(func() {
		s.events = make(chan event, eventQueue)
		s.ready = make(chan struct{})
		s.stopped = make(chan struct{})
	})
}

// Ready returns a channel closed once Run listens and has added the
// configured collections.
func (s *Server) Ready() <-chan struct{} {
	s.init()
	return s.ready
}

// Addr returns the address the server listens on (nil before Ready, or
// without a listener).
func (s *Server) Addr() net.Addr {
	select {
	case <-s.Ready():
		return s.addr
	default:
		return nil
	}
}

func (s *Server) now() time.Time {
	if s.Clock != nil {
		return s.Clock()
	}
	return time.Now()
}

func (s *Server) logger() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.New(slog.DiscardHandler)
}

// loop is the state owned by Run's event loop.
type loop struct {
	s       *Server
	ctx     context.Context
	m       *MNS
	log     *slog.Logger
	store   *RouteStore
	conns   map[ConnID]*peer
	full    map[ConnID]*peer // connections with held messages
	pending []string         // lookups waiting for a worker
	clogs   *crawllog.Logs   // nil without Data
	ln      net.Listener
	wg      sync.WaitGroup
	fatal   error
}

// peer is a connection as the event loop sees it: while its send queue is
// full, the messages for it wait in held, in order.
type peer struct {
	c         *cmt.Conn
	held      []Send
	fullSince time.Time
}

// Run serves until ctx ends. It returns nil after a clean stop, or the
// error that stopped it.
func (s *Server) Run(ctx context.Context) error {
	s.init()
	select {
	case <-s.stopped:
		return errors.New("multinode: Server.Run called twice")
	default:
	}
	defer close(s.stopped)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	l := &loop{s: s, ctx: ctx, m: New(s.Config), log: s.logger(), conns: map[ConnID]*peer{}, full: map[ConnID]*peer{}}

	// The routing database.
	var err error
	if s.Data != "" {
		if err := os.MkdirAll(s.Data, logDirMode); err != nil {
			return fmt.Errorf("multinode: data directory: %w", err)
		}
		l.store, err = OpenRouteStore(filepath.Join(s.Data, routesDirName), nil, l.log)
	} else {
		l.store, err = OpenRouteStore("routes", vfs.NewMem(), l.log)
	}
	if err != nil {
		return err
	}
	defer l.store.Close()
	nroutes := 0
	if err := l.store.LoadStates(l.m.RestoreState); err != nil {
		return err
	}
	if err := l.store.Load(func(r StoredRoute) {
		nroutes++
		l.m.RestoreRoute(r.Collection, r.Attr, r.NodeID, r.Site)
	}); err != nil {
		return err
	}

	// The collections' log files: one writer goroutine behind a bounded
	// queue, so that a slow or full disk costs log lines, never the event
	// loop. It stops when Run returns, after the loop has stopped, so
	// that it writes every line the loop queued.
	if s.Data != "" {
		lc := s.Logs
		lc.Dir, lc.Logger = filepath.Join(s.Data, logsDirName), l.log
		l.clogs = crawllog.New(lc)
		s.clogs.Store(l.clogs)
		lctx, lcancel := context.WithCancel(context.Background())
		ldone := make(chan struct{})
		go func() {
			defer close(ldone)
			if err := l.clogs.Run(lctx); err != nil {
				l.log.Warn("multinode: writing the collection logs failed", "err", err)
			}
		}()
		defer func() {
			lcancel()
			t := time.NewTimer(logStopWait)
			defer t.Stop()
			select {
			case <-ldone:
			case <-t.C:
				l.log.Error("multinode: the collection log writer did not stop, its last lines may be lost", "waited", logStopWait.String())
			}
		}()
	}

	// The resolver.
	res := s.Resolver
	if res == nil {
		var fallback Resolver
		if s.HostsFile == "" || s.HostsFallback {
			s.wire.server = s.DNSServer
			fallback = NetResolver{Resolver: &net.Resolver{PreferGo: true, Dial: s.wire.dial}}
		}
		if s.HostsFile != "" {
			hr, err := LoadHostsFile(s.HostsFile, fallback)
			if err != nil {
				return err
			}
			l.log.Info("multinode: resolving from hosts file", "file", s.HostsFile, "names", hr.Len(), "fallback", s.HostsFallback)
			res = hr
		} else {
			res = fallback
		}
	}

	// The listener.
	ln := s.Listener
	if ln == nil && s.Listen != "" {
		ln, err = net.Listen("tcp", s.Listen)
		if err != nil {
			return fmt.Errorf("multinode: listen: %w", err)
		}
	}
	if ln != nil {
		s.addr = ln.Addr()
		ln = cmt.AllowListener(ln, s.Allow, func(r net.Addr) {
			l.log.Warn("multinode: connection from an address not on the allow-list refused", "remote", r.String())
		})
		l.ln = ln
	}

	// DNS workers.
	jobs := make(chan string)
	workers := s.DNSWorkers
	if workers <= 0 {
		workers = DefaultDNSWorkers
	}
	timeout := s.DNSTimeout
	if timeout <= 0 {
		timeout = DefaultDNSTimeout
	}
	for range workers {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for {
				select {
				case <-ctx.Done():
					return
				case host := <-jobs:
					lctx, lcancel := context.WithTimeout(ctx, timeout)
					addrs, err := res.LookupHost(lctx, host)
					lcancel()
					s.post(ctx, event{kind: evDNS, host: host, addrs: addrs, err: err})
				}
			}
		}()
	}

	if ln != nil {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			l.accept(ln)
		}()
	}
	if s.RerouteRequests && s.Data != "" {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			s.pollReroutes(ctx, time.Second)
		}()
	}

	now := s.now()
	l.apply(l.m.Tick(now))
	for _, spec := range s.Collections {
		acts, err := l.m.AddCollection(spec, now)
		if err != nil {
			cancel()
			l.shutdown()
			return err
		}
		l.apply(acts)
	}
	if ln != nil {
		l.log.Info("multinode: listening for node schedulers", "addr", ln.Addr().String(), "collections", len(s.Collections), "routes", nroutes)
	}
	close(s.ready)

	tickEvery := s.Tick
	if tickEvery <= 0 {
		tickEvery = DefaultTick
	}
	ticker := time.NewTicker(tickEvery)
	defer ticker.Stop()
	flush := time.NewTicker(flushEvery)
	defer flush.Stop()
	for l.fatal == nil {
		var jobc chan string
		var next string
		if len(l.pending) > 0 {
			jobc, next = jobs, l.pending[0]
		}
		var flushc <-chan time.Time
		if len(l.full) > 0 {
			flushc = flush.C
		}
		select {
		case <-flushc:
			l.flushHeld()
		case <-ctx.Done():
			l.shutdown()
			return nil
		case <-ticker.C:
			l.apply(l.m.Tick(s.now()))
		case jobc <- next:
			l.pending = l.pending[1:]
			if len(l.pending) == 0 {
				l.pending = nil
			}
		case ev := <-s.events:
			l.handle(ev)
		}
	}
	cancel()
	l.shutdown()
	return l.fatal
}

func hasRouteActions(acts []Action) bool {
	for _, a := range acts {
		switch a.(type) {
		case PersistRoute, DropRoutes, PersistState:
			return true
		}
	}
	return false
}

// shutdown closes the listener and every connection and waits for the
// goroutines.
func (l *loop) shutdown() {
	if l.ln != nil {
		l.ln.Close()
	}
	for _, p := range l.conns {
		p.c.Close()
	}
	// Drain events so that goroutines blocked posting can finish.
	done := make(chan struct{})
	go func() {
		l.wg.Wait()
		close(done)
	}()
	for {
		select {
		case <-done:
			return
		case ev := <-l.s.events:
			if ev.kind == evConnect && ev.conn != nil {
				ev.conn.Close()
			}
			if ev.reply != nil {
				ev.reply <- ErrServerClosed
			}
		}
	}
}

// post delivers an event to the loop unless the server stops.
func (s *Server) post(ctx context.Context, ev event) bool {
	select {
	case s.events <- ev:
		return true
	case <-ctx.Done():
		return false
	case <-s.stopped:
		return false
	}
}

func (l *loop) accept(ln net.Listener) {
	for {
		nc, err := ln.Accept()
		if err != nil {
			select {
			case <-l.ctx.Done():
			default:
				l.log.Error("multinode: accept failed, no more node schedulers can connect", "err", err)
			}
			return
		}
		name := "node scheduler " + nc.RemoteAddr().String()
		l.s.start(l.ctx, &l.wg, cmt.NewConn(nc, l.s.connConfig(name)))
	}
}

func (s *Server) connConfig(name string) cmt.ConnConfig {
	cc := s.ConnConfig
	cc.Name = name
	if cc.Logger == nil {
		cc.Logger = s.logger()
	}
	if cc.SendQueue <= 0 {
		cc.SendQueue = defaultSendQueue
	}
	return cc
}

// start runs a connection and feeds its messages to the loop.
func (s *Server) start(ctx context.Context, wg *sync.WaitGroup, c *cmt.Conn) {
	s.idMu.Lock()
	s.nextID++
	id := s.nextID
	s.idMu.Unlock()
	wg.Add(2)
	go func() {
		defer wg.Done()
		err := c.Run(ctx)
		if err != nil && !errors.Is(err, io.EOF) {
			s.logger().Debug("multinode: connection ended", "conn", id, "err", err)
		}
	}()
	go func() {
		defer wg.Done()
		if !s.post(ctx, event{kind: evConnect, id: id, conn: c}) {
			c.Close()
			for range c.Incoming() {
			}
			return
		}
		for f := range c.Incoming() {
			if !s.post(ctx, event{kind: evMessage, id: id, msg: f.Message}) {
				c.Close()
			}
		}
		s.post(ctx, event{kind: evDisconnect, id: id})
	}()
}

// Attach serves an in-memory connection (one end of cmt.Pipe, not yet
// running) as if a node scheduler had connected over TCP. It waits until
// Run has started.
func (s *Server) Attach(ctx context.Context, c *cmt.Conn) error {
	s.init()
	select {
	case <-s.ready:
	case <-s.stopped:
		return ErrServerClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	return s.do(ctx, func(m *MNS, now time.Time) ([]Action, error) { return nil, nil }, c)
}

func (l *loop) handle(ev event) {
	now := l.s.now()
	switch ev.kind {
	case evConnect:
		l.conns[ev.id] = &peer{c: ev.conn}
		l.apply(l.m.Connect(ev.id, now))
	case evMessage:
		// A connection the loop closed already is over for the machine:
		// what it still delivers is ignored.
		if l.conns[ev.id] != nil {
			l.apply(l.m.Receive(ev.id, ev.msg, now))
		}
	case evDisconnect:
		if l.conns[ev.id] != nil {
			l.drop(ev.id)
			l.apply(l.m.Disconnect(ev.id, now))
		}
	case evDNS:
		l.apply(l.m.DNSResult(ev.host, ev.addrs, ev.err, now))
	case evOp:
		if ev.conn != nil {
			l.s.start(l.ctx, &l.wg, ev.conn)
		}
		var err error
		if ev.op != nil {
			var acts []Action
			acts, err = ev.op(l.m, now)
			l.apply(acts)
		}
		if ev.reply != nil {
			ev.reply <- err
		}
	}
}

// apply performs the machine's actions in order; route records are written
// (one synced batch) before anything else is done.
func (l *loop) apply(acts []Action) {
	if len(acts) == 0 {
		return
	}
	if hasRouteActions(acts) {
		if err := l.store.Apply(acts); err != nil {
			l.log.Error("multinode: routing database write failed, stopping", "err", err)
			l.fatal = err
			return
		}
	}
	for _, a := range acts {
		switch x := a.(type) {
		case Send:
			l.send(x)
		case CloseConn:
			if p := l.conns[x.Conn]; p != nil {
				l.closePeer(x.Conn, x.Reason)
			}
		case Lookup:
			if len(l.pending) >= maxPendingLookups {
				l.apply(l.m.DNSResult(x.Host, nil, errors.New(defaultDNSFailText), l.s.now()))
				continue
			}
			l.pending = append(l.pending, x.Host)
		case AppendLog:
			l.appendLog(x)
		case LogLine:
			l.log.Log(l.ctx, x.Level, x.Msg, x.Args...)
		}
	}
}

// send queues a message for a connection. When the connection's send queue
// is full, the message is held (after those held already, so the order
// stays) and the machine is told the connection is busy: it stops
// forwarding entries to it until the queue has room again.
func (l *loop) send(x Send) {
	p := l.conns[x.Conn]
	if p == nil {
		return
	}
	if len(p.held) == 0 {
		err := p.c.TrySend(x.Message, x.Priority)
		if err == nil {
			return
		}
		if !errors.Is(err, cmt.ErrQueueFull) {
			if !errors.Is(err, cmt.ErrClosed) {
				l.log.Error("multinode: cannot send", "conn", x.Conn, "command", x.Message.Code().String(), "err", err)
			}
			return
		}
		p.fullSince = l.s.now()
		l.full[x.Conn] = p
		l.log.Debug("multinode: send queue of a node scheduler full, holding its messages", "conn", x.Conn)
		p.held = append(p.held, x)
		l.apply(l.m.SetBusy(x.Conn, true, l.s.now()))
		return
	}
	if len(p.held) >= maxOverflow {
		l.log.Error("multinode: node scheduler does not read its messages, closing its connection", "conn", x.Conn, "reason", "held messages over the limit", "held", len(p.held), "full_for", l.s.now().Sub(p.fullSince).String())
		l.closePeer(x.Conn, "held messages over the limit")
		return
	}
	p.held = append(p.held, x)
}

// flushHeld retries the held messages of the full connections; a
// connection that has room again is no longer busy, one full for longer
// than FullTimeout is closed.
func (l *loop) flushHeld() {
	now := l.s.now()
	timeout := l.s.FullTimeout
	if timeout <= 0 {
		timeout = DefaultFullTimeout
	}
	ids := make([]ConnID, 0, len(l.full))
	for id := range l.full {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		p := l.full[id]
		if p == nil || l.conns[id] != p {
			delete(l.full, id)
			continue
		}
		n := 0
		for n < len(p.held) {
			h := p.held[n]
			err := p.c.TrySend(h.Message, h.Priority)
			if errors.Is(err, cmt.ErrQueueFull) {
				break
			}
			if err != nil && !errors.Is(err, cmt.ErrClosed) {
				l.log.Error("multinode: cannot send", "conn", id, "command", h.Message.Code().String(), "err", err)
			}
			p.held[n] = Send{}
			n++
		}
		if n > 0 {
			p.fullSince = now
		}
		p.held = p.held[n:]
		if len(p.held) > 0 {
			if now.Sub(p.fullSince) > timeout {
				l.log.Error("multinode: node scheduler does not read its messages, closing its connection", "conn", id, "reason", "send queue full too long", "held", len(p.held), "full_for", now.Sub(p.fullSince).String())
				l.closePeer(id, "send queue full too long")
			}
			continue
		}
		p.held = nil
		delete(l.full, id)
		l.apply(l.m.SetBusy(id, false, now))
	}
}

// drop forgets a connection in the loop.
func (l *loop) drop(id ConnID) {
	if p := l.conns[id]; p != nil {
		p.held = nil
	}
	delete(l.conns, id)
	delete(l.full, id)
}

// closePeer closes a connection and tells the machine at once that it
// ended, so that the node scheduler can register again on a new connection
// before the old one's reader has finished.
func (l *loop) closePeer(id ConnID, reason string) {
	p := l.conns[id]
	if p == nil {
		return
	}
	p.c.Close()
	l.drop(id)
	l.log.Debug("multinode: connection closed", "conn", id, "reason", reason)
	l.apply(l.m.Disconnect(id, l.s.now()))
}

// LogFilePath returns where the multinode scheduler under data appends a
// collection's log lines (CMD_UM_LOG): data/logs/<collection>/<file>.log,
// the collection name path-escaped (so a "/" stays inside the name), the
// file one of site.log, screened.log, schedule.log and fetch.log (package
// crawllog's names). A file code other than the four of MS-FSCMT 2.2.4.8,
// and a collection named "", "." or "..", are errors: no name a peer sends
// leads out of data/logs.
func LogFilePath(data, coll string, f cmt.LogFile) (string, error) {
	k, ok := crawllog.KindOf(f)
	if !ok {
		return "", fmt.Errorf("multinode: unknown log file %q", string(f))
	}
	return crawllog.Path(filepath.Join(data, logsDirName), coll, k)
}

// LogsDropped is how many collection log lines (CMD_UM_LOG) were not
// written: the log writer's queue was full (a slow or hanging disk), or
// the collection's name cannot name a directory. CollectionInfos has the
// count of each collection.
func (s *Server) LogsDropped() uint64 {
	return s.clogs.Load().Dropped() + s.logsRefused.Load()
}

// appendLog hands a collection's log line to the log writer. It never
// touches the disk and never blocks: a line that finds the writer's queue
// full is dropped, counted (crawllog warns at every power of two) and
// reported to the machine for the collection's counts.
func (l *loop) appendLog(x AppendLog) {
	if l.clogs == nil {
		l.log.Info("multinode: collection log", "collection", x.Collection, "file", string(x.File), "text", x.Text)
		return
	}
	k, ok := crawllog.KindOf(x.File)
	if ok {
		_, err := crawllog.Path("", x.Collection, k)
		ok = err == nil
	}
	if !ok {
		if n := l.s.logsRefused.Add(1); n&(n-1) == 0 {
			l.log.Warn("multinode: log lines dropped, their collection or file cannot name a log file", "collection", x.Collection, "file", string(x.File), "dropped", n)
		}
		l.m.LogDropped(x.Collection)
		return
	}
	if !l.clogs.Log(crawllog.Entry{Collection: x.Collection, Kind: k, Line: x.Text}) {
		l.m.LogDropped(x.Collection)
	}
}

// do runs op in the event loop and returns its error. conn, if not nil,
// is started as a new connection first.
func (s *Server) do(ctx context.Context, op func(m *MNS, now time.Time) ([]Action, error), conn *cmt.Conn) error {
	s.init()
	select {
	case <-s.ready:
	case <-s.stopped:
		return ErrServerClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	reply := make(chan error, 1)
	if !s.post(ctx, event{kind: evOp, op: op, reply: reply, conn: conn}) {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return ErrServerClosed
	}
	select {
	case err := <-reply:
		return err
	case <-s.stopped:
		return ErrServerClosed
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *Server) op(ctx context.Context, f func(m *MNS, now time.Time) ([]Action, error)) error {
	return s.do(ctx, f, nil)
}

// AddCollection adds a collection (see MNS.AddCollection).
func (s *Server) AddCollection(ctx context.Context, spec *CollectionSpec) error {
	return s.op(ctx, func(m *MNS, now time.Time) ([]Action, error) { return m.AddCollection(spec, now) })
}

// UpdateCollection replaces a collection's configuration.
func (s *Server) UpdateCollection(ctx context.Context, spec *CollectionSpec) error {
	return s.op(ctx, func(m *MNS, now time.Time) ([]Action, error) { return m.UpdateCollection(spec, now) })
}

// RemoveCollection removes a collection.
func (s *Server) RemoveCollection(ctx context.Context, name string) error {
	return s.op(ctx, func(m *MNS, now time.Time) ([]Action, error) { return m.RemoveCollection(name, now) })
}

// SuspendCollection suspends a collection in state 4, 5 or 8.
func (s *Server) SuspendCollection(ctx context.Context, name string, state cmt.CollectionState) error {
	return s.op(ctx, func(m *MNS, _ time.Time) ([]Action, error) { return m.SuspendCollection(name, state) })
}

// ResumeCollection resumes a collection.
func (s *Server) ResumeCollection(ctx context.Context, name string) error {
	return s.op(ctx, func(m *MNS, _ time.Time) ([]Action, error) { return m.ResumeCollection(name) })
}

// SetCollectionState sets a collection's state on every node scheduler.
func (s *Server) SetCollectionState(ctx context.Context, name string, state cmt.CollectionState) error {
	return s.op(ctx, func(m *MNS, _ time.Time) ([]Action, error) { return m.SetState(name, state) })
}

// RefreshCollection starts a refresh cycle.
func (s *Server) RefreshCollection(ctx context.Context, name, sub string, flags cmt.RefreshFlags) error {
	return s.op(ctx, func(m *MNS, _ time.Time) ([]Action, error) { return m.RefreshCollection(name, sub, flags) })
}

// SuspendFeeding suspends or resumes feeding to destinations (nil: all).
func (s *Server) SuspendFeeding(ctx context.Context, name string, suspend bool, dests []string) error {
	return s.op(ctx, func(m *MNS, _ time.Time) ([]Action, error) { return m.SuspendFeeding(name, suspend, dests) })
}

// PreemptSite stops crawling a site for now.
func (s *Server) PreemptSite(ctx context.Context, name, site string, requeue bool) error {
	return s.op(ctx, func(m *MNS, _ time.Time) ([]Action, error) { return m.PreemptSite(name, site, requeue) })
}

// QuarantineSite blocks a site for d.
func (s *Server) QuarantineSite(ctx context.Context, name, site string, d time.Duration, requeue bool) error {
	return s.op(ctx, func(m *MNS, _ time.Time) ([]Action, error) { return m.QuarantineSite(name, site, d, requeue) })
}

// DeleteSite deletes a site's documents.
func (s *Server) DeleteSite(ctx context.Context, name, site string) error {
	return s.op(ctx, func(m *MNS, _ time.Time) ([]Action, error) { return m.DeleteSite(name, site) })
}

// DeleteURIs deletes URIs.
func (s *Server) DeleteURIs(ctx context.Context, name string, sites []cmt.SiteURIs) error {
	return s.op(ctx, func(m *MNS, _ time.Time) ([]Action, error) { return m.DeleteURIs(name, sites) })
}

// ReprocessSite resubmits a site's documents for indexing.
func (s *Server) ReprocessSite(ctx context.Context, name, site, prefix, dest string, exact bool) error {
	return s.op(ctx, func(m *MNS, _ time.Time) ([]Action, error) { return m.ReprocessSite(name, site, prefix, dest, exact) })
}

// RerouteNode moves the sites of a node scheduler that will not come back
// to the registered ones (see MNS.RerouteNode) and returns the number of
// routing attributes moved.
func (s *Server) RerouteNode(ctx context.Context, node string) (int, error) {
	var n int
	err := s.op(ctx, func(m *MNS, now time.Time) ([]Action, error) {
		acts, moved, err := m.RerouteNode(node, now)
		n = moved
		return acts, err
	})
	return n, err
}

// Stats returns a collection's summed statistics.
func (s *Server) Stats(ctx context.Context, name string) (marshal.Dict, error) {
	var d marshal.Dict
	err := s.op(ctx, func(m *MNS, _ time.Time) ([]Action, error) {
		var ok bool
		if d, ok = m.Stats(name); !ok {
			return nil, fmt.Errorf("%w: %s", ErrUnknownCollection, name)
		}
		return nil, nil
	})
	return d, err
}

// Nodes returns the registered node schedulers.
func (s *Server) Nodes(ctx context.Context) ([]NodeInfo, error) {
	var out []NodeInfo
	err := s.op(ctx, func(m *MNS, _ time.Time) ([]Action, error) { out = m.Nodes(); return nil, nil })
	return out, err
}

// CollectionInfos describes the collections.
func (s *Server) CollectionInfos(ctx context.Context) ([]CollectionInfo, error) {
	var out []CollectionInfo
	err := s.op(ctx, func(m *MNS, _ time.Time) ([]Action, error) { out = m.Collections(); return nil, nil })
	return out, err
}

// DNSStats returns the DNS counters (MS-FSCADM global statistics),
// with the bytes the built-in resolver sent and received.
func (s *Server) DNSStats(ctx context.Context) (DNSStats, error) {
	var out DNSStats
	err := s.op(ctx, func(m *MNS, _ time.Time) ([]Action, error) { out = m.DNSStats(); return nil, nil })
	out.Written, out.Read = s.wire.written.Load(), s.wire.read.Load()
	return out, err
}

// Route returns the node scheduler a host is routed to in a collection.
func (s *Server) Route(ctx context.Context, coll, host string) (node, attr string, ok bool, err error) {
	err = s.op(ctx, func(m *MNS, _ time.Time) ([]Action, error) {
		node, attr, ok = m.Route(coll, host)
		return nil, nil
	})
	return node, attr, ok, err
}
