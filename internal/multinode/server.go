package multinode

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

	"github.com/cockroachdb/pebble/vfs"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/crawllog"
	"github.com/trawl/trawl/internal/diskspace"
	"github.com/trawl/trawl/internal/loop"
	"github.com/trawl/trawl/internal/marshal"
	"github.com/trawl/trawl/internal/tlsconf"
)

// DefaultPort is the port the multinode scheduler listens on for node
// schedulers: the base port 13000 + 1 (DESIGN.md 4.3).
const DefaultPort = 13001

// Defaults of the driver.
const (
	DefaultDNSWorkers = 16
	DefaultDNSTimeout = 10 * time.Second
	DefaultTick       = time.Second
	defaultSendQueue  = 1 << 14
	logFileMode       = 0o644
	logDirMode        = 0o755
	routesDirName     = "routes"
	logsDirName       = "logs"
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
	// TLS, if set, makes the listener mutual TLS (internal/tlsconf).
	TLS *tlsconf.Config
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
	// Disk, if set, holds the writing events while the free space of
	// Data's file system is below its low-water mark (diskfull.go).
	Disk *diskspace.Guard
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
	ready   chan struct{}
	stopped chan struct{}
	addr    net.Addr
	drv     *loop.Driver[cmt.Message]
	m       *MNS
	// wire counts the built-in resolver's DNS traffic (dnsstats.go).
	wire dnsWire
	// clogs writes the collections' log files while Run runs;
	// logsRefused counts the lines whose collection cannot name a
	// directory.
	clogs       atomic.Pointer[crawllog.Logs]
	logsRefused atomic.Uint64
}

func (s *Server) init() {
	s.once.Do(func() {
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

// clock adapts Server.Clock to the driver.
type clock struct{ now func() time.Time }

func (c clock) Now() time.Time { return c.now() }
func (c clock) Timer(d time.Duration) (<-chan time.Time, func()) {
	return loop.RealClock{}.Timer(d)
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
	log := s.logger()
	m := New(s.Config)

	store, nroutes, err := s.openRoutes(m, log)
	if err != nil {
		return err
	}
	defer store.Close()

	// The collections' log files: one writer goroutine behind a bounded
	// queue, so that a slow or full disk costs log lines, never the event
	// loop. It stops when Run returns, after the loop has stopped, so
	// that it writes every line the loop queued.
	sink := &logSink{s: s, m: m, log: log}
	if s.Data != "" {
		lc := s.Logs
		lc.Dir, lc.Logger = filepath.Join(s.Data, logsDirName), log
		sink.clogs = crawllog.New(lc)
		s.clogs.Store(sink.clogs)
		lctx, lcancel := context.WithCancel(context.Background())
		ldone := make(chan struct{})
		go func() {
			defer close(ldone)
			if err := sink.clogs.Run(lctx); err != nil {
				log.Warn("multinode: writing the collection logs failed", "err", err)
			}
		}()
		defer func() {
			lcancel()
			t := time.NewTimer(logStopWait)
			defer t.Stop()
			select {
			case <-ldone:
			case <-t.C:
				log.Error("multinode: the collection log writer did not stop, its last lines may be lost", "waited", logStopWait.String())
			}
		}()
	}

	res, err := s.resolver(log)
	if err != nil {
		return err
	}

	// The listener.
	listeners := map[string]loop.Listener[cmt.Message]{}
	ln := s.Listener
	if ln == nil && s.Listen != "" {
		if ln, err = net.Listen("tcp", s.Listen); err != nil {
			return fmt.Errorf("multinode: listen: %w", err)
		}
	}
	if ln != nil {
		s.addr = ln.Addr()
		ln = cmt.AllowListener(ln, s.Allow, func(r net.Addr) {
			log.Warn("multinode: connection from an address not on the allow-list refused", "remote", r.String())
		})
		ln = s.TLS.Listener(ln, func(r net.Addr, err error) {
			log.Warn("multinode: connection without a valid TLS client certificate refused", "remote", r.String(), "err", err)
		})
		listeners["node"] = loop.CMTListener(ln, s.connConfig("node scheduler"))
	}

	// The first batch: the clock starts and the configured collections
	// are added; the driver applies it before the first event.
	now := s.now()
	m.emit(m.Tick(now), now)
	for _, spec := range s.Collections {
		acts, err := m.AddCollection(spec, now)
		if err != nil {
			if ln != nil {
				ln.Close()
			}
			return err
		}
		m.emit(acts, now)
	}

	workers := s.DNSWorkers
	if workers <= 0 {
		workers = DefaultDNSWorkers
	}
	timeout := s.DNSTimeout
	if timeout <= 0 {
		timeout = DefaultDNSTimeout
	}
	tick := s.Tick
	if tick <= 0 {
		tick = DefaultTick
	}
	full := s.FullTimeout
	if full <= 0 {
		full = DefaultFullTimeout
	}
	s.m = m
	s.drv = loop.New(loop.Config[cmt.Message]{
		Name:      "multinode",
		Machine:   m,
		Listeners: listeners,
		Storage: loop.StorageFunc(func(_ context.Context, recs []any) error {
			return sink.apply(store, recs)
		}),
		Worker: loop.WorkerFunc(func(ctx context.Context, spec any) (any, error) {
			ctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			if tr, ok := res.(TTLResolver); ok {
				addrs, ttl, err := tr.LookupHostTTL(ctx, spec.(Lookup).Host)
				return LookupAnswer{Addrs: addrs, TTL: ttl}, err
			}
			return res.LookupHost(ctx, spec.(Lookup).Host)
		}),
		MaxWork:      workers,
		Clock:        clock{now: s.now},
		TickInterval: tick,
		Logger:       log,
		Hold:         &loop.HoldConfig{Max: maxOverflow, Timeout: full, Retry: flushEvery},
	})
	if s.RerouteRequests && s.Data != "" {
		done := make(chan struct{})
		defer func() { <-done }()
		go func() {
			defer close(done)
			s.pollReroutes(ctx, time.Second)
		}()
	}
	if ln != nil {
		log.Info("multinode: listening for node schedulers", "addr", ln.Addr().String(), "collections", len(s.Collections), "routes", nroutes)
	}
	close(s.ready)
	defer s.startDiskWatch(ctx, m)()
	err = s.drv.Run(ctx)
	if err != nil {
		log.Error("multinode: routing database write failed, stopping", "err", err)
	}
	cancel()
	return err
}

// openRoutes opens the routing database (in memory without Data) and
// loads its routes and collection states into m.
func (s *Server) openRoutes(m *MNS, log *slog.Logger) (*RouteStore, int, error) {
	var store *RouteStore
	var err error
	if s.Data != "" {
		if err := os.MkdirAll(s.Data, logDirMode); err != nil {
			return nil, 0, fmt.Errorf("multinode: data directory: %w", err)
		}
		store, err = OpenRouteStore(filepath.Join(s.Data, routesDirName), nil, log)
	} else {
		store, err = OpenRouteStore("routes", vfs.NewMem(), log)
	}
	if err != nil {
		return nil, 0, err
	}
	nroutes := 0
	if err = store.LoadStates(m.RestoreState); err == nil {
		err = store.LoadStats(m.RestoreStats)
	}
	if err == nil {
		err = store.Load(func(r StoredRoute) {
			nroutes++
			m.RestoreRoute(r.Collection, r.Attr, r.NodeID, r.Site)
		})
	}
	if err != nil {
		store.Close()
		return nil, 0, err
	}
	return store, nroutes, nil
}

// resolver returns the resolver Run uses.
func (s *Server) resolver(log *slog.Logger) (Resolver, error) {
	if s.Resolver != nil {
		return s.Resolver, nil
	}
	var fallback Resolver
	if s.HostsFile == "" || s.HostsFallback {
		// Asked directly (miekg/dns) so that each answer's TTL is known;
		// the dial counts the bytes.
		r := &DNSResolver{Dial: s.wire.dial}
		if s.DNSServer != "" {
			r.Servers = []string{s.DNSServer}
		}
		fallback = r
	}
	if s.HostsFile == "" {
		// The machine's own names (localhost and the like) as the system
		// resolver would answer them, then DNS.
		if hr, err := LoadHostsFile("/etc/hosts", fallback); err == nil {
			return hr, nil
		}
		return fallback, nil
	}
	hr, err := LoadHostsFile(s.HostsFile, fallback)
	if err != nil {
		return nil, err
	}
	log.Info("multinode: resolving from hosts file", "file", s.HostsFile, "names", hr.Len(), "fallback", s.HostsFallback)
	return hr, nil
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

// Attach serves an in-memory connection (one end of cmt.Pipe, not yet
// running) as if a node scheduler had connected over TCP. It waits until
// Run has started; the connection then runs until it closes or Run stops.
func (s *Server) Attach(ctx context.Context, c *cmt.Conn) error {
	s.init()
	select {
	case <-s.ready:
	case <-s.stopped:
		return ErrServerClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	go s.drv.Serve(context.Background(), "node", loop.CMT(c, "in-memory"))
	return nil
}

// logSink is the driver-side Storage of the machine's Persist records:
// route records go to the routing database in one synced batch, log lines
// to the collection log writer.
type logSink struct {
	s     *Server
	m     *MNS
	log   *slog.Logger
	clogs *crawllog.Logs // nil without Data
}

func (l *logSink) apply(store *RouteStore, recs []any) error {
	var routes []Action
	for _, r := range recs {
		switch x := r.(type) {
		case PersistRoute, PersistState, PersistStats, DropRoutes:
			routes = append(routes, x.(Action))
		}
	}
	if len(routes) > 0 {
		if err := store.Apply(routes); err != nil {
			return err
		}
	}
	for _, r := range recs {
		if x, ok := r.(AppendLog); ok {
			l.appendLog(x)
		}
	}
	return nil
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
func (l *logSink) appendLog(x AppendLog) {
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

// op runs f on the driver's loop, files its actions into the machine's
// batch and returns its error once the batch was applied.
func (s *Server) op(ctx context.Context, f func(m *MNS, now time.Time) ([]Action, error)) error {
	s.init()
	select {
	case <-s.ready:
	case <-s.stopped:
		return ErrServerClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	var opErr error
	err := s.drv.Do(ctx, func(now time.Time) {
		acts, err := f(s.m, now)
		s.m.emit(acts, now)
		opErr = err
	})
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return ErrServerClosed
	}
	return opErr
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
	if err := s.op(ctx, func(m *MNS, _ time.Time) ([]Action, error) { out = m.DNSStats(); return nil, nil }); err != nil {
		return DNSStats{}, err
	}
	out.Written, out.Read = s.wire.written.Load(), s.wire.read.Load()
	return out, nil
}

// Route returns the node scheduler a host is routed to in a collection.
func (s *Server) Route(ctx context.Context, coll, host string) (node, attr string, ok bool, err error) {
	err = s.op(ctx, func(m *MNS, _ time.Time) ([]Action, error) {
		node, attr, ok = m.Route(coll, host)
		return nil, nil
	})
	return node, attr, ok, err
}
