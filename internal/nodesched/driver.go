package nodesched

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/config"
	"github.com/trawl/trawl/internal/crawllog"
	"github.com/trawl/trawl/internal/fetch"
	"github.com/trawl/trawl/internal/store"
	"github.com/trawl/trawl/internal/warc"
)

// DialFunc opens a connection to a peer; the driver runs the returned Conn.
// For `trawl node` it dials TCP; in one process it returns one end of a
// cmt.Pipe or dials a cmt.MemNetwork.
type DialFunc func(ctx context.Context) (*cmt.Conn, error)

// TCPDialer returns a DialFunc that connects to addr over TCP.
func TCPDialer(addr, name string, log *slog.Logger) DialFunc {
	return func(ctx context.Context) (*cmt.Conn, error) {
		var d net.Dialer
		nc, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			return nil, err
		}
		return cmt.NewConn(nc, cmt.ConnConfig{Name: name, Logger: log, SendQueue: 65536}), nil
	}
}

// Config configures a Driver.
type Config struct {
	NodeID    string
	AdminHost string
	AdminPort int32
	// Store is the crawl store (the caller closes it), or DataDir names the
	// directory of one the driver opens and closes.
	Store   *store.Store
	DataDir string
	// MNS dials the multinode scheduler; DS the duplicate servers.
	MNS DialFunc
	DS  []DialFunc
	// Workers is the number of concurrent fetches over all sites (64).
	Workers int
	// Collections are set up at start, as if received in CMD_ADM_CONF_ADD
	// (the in-process form used by `trawl run` and tests).
	Collections []*config.Collection
	Logger      *slog.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Backlog bounds the messages kept for a peer that is not connected.
	Backlog int
	// Key decrypts "!ENC!" passwords in the collections (nil: none; a
	// collection with encrypted passwords then fails to compile).
	Key *config.Key
	// TLSConfig, if set, is the base TLS configuration of every fetcher:
	// the roots that verify the sites' certificates (nil: the system's).
	// A collection's client certificate (key_file, cert_file) is added to
	// a copy of it.
	TLSConfig *tls.Config
	// SourceIP, if set, is the local address of the fetchers' connections
	// (`trawl node --source-ip`).
	SourceIP string
	// KeepAlive and MaxMissedKeepAlives: see MachineConfig.
	KeepAlive           time.Duration
	MaxMissedKeepAlives int
	// ResendWindow is how long URIs sent to the multinode scheduler are
	// kept to be sent again on a new link (DefaultResendWindow if 0,
	// none if negative).
	ResendWindow time.Duration
	// Feed, if set, feeds the crawled documents to content destinations
	// (feeding.go); nil crawls without feeding.
	Feed *FeedConfig
	// Observe, if set, sees every finished crawl step on the event loop
	// before it is committed (metrics, recent errors). It must not block
	// or keep o.
	Observe func(coll string, o *Outcome)
	// Record, if set, sees every HTTP request the fetchers make, with the
	// moment the politeness pacer let it start (Pipeline.Record; tests).
	Record func(RequestLog)
	// LogDir is the root of the collections' crawl logs (the log
	// section; package crawllog): DataDir/logs when empty and DataDir is
	// set, else no log files. LogMaxBytes and LogKeep: see
	// crawllog.Config.
	LogDir      string
	LogMaxBytes int64
	LogKeep     int
	// DiskSpace and LimitCheckInterval: see MachineConfig (limits.go).
	DiskSpace          DiskSpaceFunc
	LimitCheckInterval time.Duration
	// WARC configures WARC writing (warc.go): collections with an enabled
	// warc section write WARC files whatever it holds; its Dir switches
	// it on for all. Relative directories are under DataDir.
	WARC WARCConfig
}

// Driver runs a node scheduler: the Machine on an event loop, one reader per
// connection, and a bounded pool of fetch workers.
type Driver struct {
	cfg  Config
	log  *slog.Logger
	now  func() time.Time
	pipe *Pipeline

	events chan event
	jobs   chan *Job

	ipMu sync.RWMutex
	ips  map[string]string // host -> IP, for the dialer

	idleMu sync.Mutex
	idle   bool
	stats  map[string]Counters
	// feeding is the feeding chain while Run runs (Config.Feed).
	feeding atomic.Pointer[Feeding]
	// siteStats is refreshed at most every siteStatsEvery.
	siteStats   map[string]map[string]Counters
	siteStatsAt time.Time
	// files writes the storage/uri_dir files (uridir.go) while Run runs,
	// once a collection has asked for it.
	files atomic.Pointer[fileWriter]
	// warcs are the WARC writers while Run runs (warc.go).
	warcs atomic.Pointer[warcSet]
	// logs writes the crawl logs (nil: no LogDir); logsDropped counts the
	// lines for the multinode scheduler that found no room.
	logs        *crawllog.Logs
	logsDropped atomic.Uint64
	// screening counts the messages handed to the screeners (screener.go)
	// and not yet back on the loop.
	screening atomic.Int64
	screen    *screeners
}

// siteStatsEvery bounds how often the event loop copies the per-site
// counters for SiteStats.
const siteStatsEvery = 500 * time.Millisecond

type event struct {
	peer    Peer
	msg     cmt.Message
	up      *cmt.Conn // link up
	down    bool      // link down
	outcome *Outcome
	resolve *resolveReq
	add     *config.Collection
	exec    func(m *Machine, now time.Time) error
	addErr  chan error
	// screened is the verdict of msg's entry, screened off the loop.
	screened *screenVerdict
}

type resolveReq struct {
	host  string
	reply chan string
}

// New returns a driver.
func New(cfg Config) *Driver {
	if cfg.Workers <= 0 {
		cfg.Workers = 64
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Backlog <= 0 {
		cfg.Backlog = 1 << 20
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	pipe := NewPipeline(cfg.Now, nil)
	pipe.Record = cfg.Record
	if cfg.LogDir == "" && cfg.DataDir != "" {
		cfg.LogDir = filepath.Join(cfg.DataDir, "logs")
	}
	d := &Driver{cfg: cfg, log: log, now: cfg.Now, pipe: pipe,
		events: make(chan event, 4096), jobs: make(chan *Job, cfg.Workers), ips: map[string]string{}}
	if cfg.LogDir != "" {
		d.logs = crawllog.New(crawllog.Config{Dir: cfg.LogDir, MaxBytes: cfg.LogMaxBytes, Keep: cfg.LogKeep, Logger: log})
	}
	return d
}

// LogsDropped is how many crawl log lines were dropped: the writer's queue
// was full, or the link to the multinode scheduler was down or full.
func (d *Driver) LogsDropped() uint64 { return d.logs.Dropped() + d.logsDropped.Load() }

// crawlLog writes the machine's crawl log lines: those of umlogs to the
// multinode scheduler in CMD_UM_LOG when it is connected (never waiting: a
// full link drops them), the rest to the log files.
func (d *Driver) crawlLog(entries []LogEntry, mns *cmt.Conn) {
	for _, e := range entries {
		if e.Remote && d.cfg.MNS != nil {
			f, _ := e.Kind.LogFile()
			if mns == nil || mns.TrySend(&cmt.UMLog{Collection: e.Collection, File: f, Text: e.Line}, cmt.PriorityNormal) != nil {
				if n := d.logsDropped.Add(1); n&(n-1) == 0 {
					d.log.Warn("nodesched: crawl log lines for the multinode scheduler dropped", "collection", e.Collection, "log", e.Kind.String(), "dropped", n)
				}
			}
			continue
		}
		d.logs.Log(e.Entry)
	}
}

// AddCollection sets up a collection in the running driver (in-process
// CMD_ADM_CONF_ADD).
func (d *Driver) AddCollection(ctx context.Context, c *config.Collection) error {
	ch := make(chan error, 1)
	select {
	case d.events <- event{add: c, addErr: ch}:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-ch:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// WARCStats counts the WARC records written (zero without WARC writing).
func (d *Driver) WARCStats() warc.Stats { return d.warcs.Load().stats() }

// Idle reports whether, at the last loop iteration, every collection had
// nothing queued or in flight, and no storage/uri_dir file is waiting to
// be written.
func (d *Driver) Idle() bool {
	d.idleMu.Lock()
	defer d.idleMu.Unlock()
	if fw := d.files.Load(); fw != nil && fw.pending.Load() > 0 {
		return false
	}
	if d.screening.Load() > 0 {
		return false
	}
	return d.idle
}

// Stats returns the counters of every collection as of the last loop
// iteration.
func (d *Driver) Stats() map[string]Counters {
	d.idleMu.Lock()
	defer d.idleMu.Unlock()
	out := map[string]Counters{}
	for k, v := range d.stats {
		out[k] = v.clone()
	}
	return out
}

func (d *Driver) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	ip, err := d.resolve(ctx, host)
	if err != nil {
		return nil, err
	}
	var nd net.Dialer
	if d.cfg.SourceIP != "" {
		nd.LocalAddr = &net.TCPAddr{IP: net.ParseIP(d.cfg.SourceIP)}
	}
	c, err := nd.DialContext(ctx, network, net.JoinHostPort(ip, port))
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: c}, nil // WriteNet (wire.go)
}

func (d *Driver) resolve(ctx context.Context, host string) (string, error) {
	if ip := net.ParseIP(host); ip != nil {
		return host, nil
	}
	d.ipMu.RLock()
	ip, ok := d.ips[host]
	d.ipMu.RUnlock()
	if ok && ip != "" {
		return ip, nil
	}
	r := &resolveReq{host: host, reply: make(chan string, 1)}
	select {
	case d.events <- event{resolve: r}:
	case <-ctx.Done():
		return "", ctx.Err()
	}
	select {
	case ip := <-r.reply:
		if ip == "" {
			return "", &net.DNSError{Err: "no such host (multinode scheduler)", Name: host, IsNotFound: true}
		}
		return ip, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

type peerConn struct {
	conn    *cmt.Conn
	backlog []Output
	recent  []sentMsg          // URIs sent to the multinode scheduler (reliable.go)
	pending map[dsOpKey]Output // checksum operations a duplicate server has not answered
}

// Run runs the node scheduler until ctx ends.
func (d *Driver) Run(ctx context.Context) (err error) {
	st := d.cfg.Store
	if st == nil {
		if d.cfg.DataDir == "" {
			return errors.New("nodesched: no store and no data directory")
		}
		if st, err = store.Open(d.cfg.DataDir, store.Options{}); err != nil {
			return fmt.Errorf("nodesched: %w", err)
		}
		defer func() {
			if cerr := st.Close(); cerr != nil && err == nil {
				err = cerr
			}
		}()
	}
	tr := fetch.NewTransport(fetch.Options{Dial: d.dial, MaxIdleConnsPerHost: 4, TLSConfig: d.cfg.TLSConfig})
	defer tr.CloseIdleConnections()
	// The WARC writers stop last but for the store: after the workers,
	// whose captures they write out before closing their files.
	wctx, wcancel := context.WithCancel(context.Background())
	ws := newWARCSet(wctx, d.cfg.WARC, d.cfg.DataDir, d.cfg.NodeID, d.log)
	d.warcs.Store(ws)
	defer func() { wcancel(); ws.wait() }()
	env := Env{Dial: d.dial, Transport: tr, Now: d.now, NodeID: d.cfg.NodeID, Key: d.cfg.Key, TLSConfig: d.cfg.TLSConfig, WARC: ws.writer}
	var fd *Feeding
	if d.cfg.Feed != nil {
		fc := *d.cfg.Feed
		fc.Logs, fc.Now = d.logs, d.now
		if fd, err = NewFeeding(st, fc, d.log); err != nil {
			return err
		}
		d.feeding.Store(fd)
	}
	defer func() { // after the machine's last commit (the defer below)
		if fw := d.files.Load(); fw != nil {
			fw.stop()
			d.files.Store(nil)
		}
	}()
	offload := func(f func()) { // on the event loop only
		fw := d.files.Load()
		if fw == nil {
			fw = newFileWriter()
			d.files.Store(fw)
		}
		fw.offload(f)
	}
	m, err := NewMachine(MachineConfig{NodeID: d.cfg.NodeID, AdminHost: d.cfg.AdminHost, AdminPort: d.cfg.AdminPort,
		DupServers: len(d.cfg.DS), Store: st, Env: env, Logger: d.log, Feeding: fd,
		KeepAlive: d.cfg.KeepAlive, MaxMissedKeepAlives: d.cfg.MaxMissedKeepAlives,
		DiskSpace: d.cfg.DiskSpace, LimitCheckInterval: d.cfg.LimitCheckInterval, Offload: offload}, d.now())
	if err != nil {
		return err
	}
	sctx, scancel := context.WithCancel(ctx)
	defer scancel()
	d.screening.Store(0)
	d.screen = &screeners{ctx: sctx, out: d.events, pending: &d.screening, qs: map[string]chan screenReq{}}
	for _, c := range d.cfg.Collections {
		if err := m.AddCollection(c, d.now()); err != nil {
			return err
		}
	}
	if d.logs != nil {
		// The log writer stops last, so that it writes what the loop, the
		// workers and the feeders logged until they stopped.
		lctx, lcancel := context.WithCancel(context.Background())
		ldone := make(chan struct{})
		go func() {
			defer close(ldone)
			if err := d.logs.Run(lctx); err != nil {
				d.log.Warn("nodesched: writing the crawl logs failed", "err", err)
			}
		}()
		defer func() { lcancel(); <-ldone }()
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
		d.crawlLog(m.CrawlLog(), nil) // the last step's lines
		if cerr := m.Close(); cerr != nil && err == nil {
			err = cerr
		}
		if serr := st.SyncWAL(); serr != nil && err == nil {
			err = serr
		}
	}()
	if fd != nil {
		wg.Add(1)
		go func() { defer wg.Done(); _ = fd.Run(ctx) }()
	}
	for i := 0; i < d.cfg.Workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case j := <-d.jobs:
					o := d.pipe.Process(ctx, j)
					select {
					case d.events <- event{outcome: o}:
					case <-ctx.Done():
						return
					}
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	peers := map[Peer]*peerConn{MNS: {}}
	if d.cfg.MNS != nil {
		wg.Add(1)
		go func() { defer wg.Done(); d.link(ctx, MNS, d.cfg.MNS) }()
	}
	for i, dial := range d.cfg.DS {
		p := DS(i)
		peers[p] = &peerConn{}
		wg.Add(1)
		go func() { defer wg.Done(); d.link(ctx, p, dial) }()
	}
	waiters := map[string][]chan string{}
	inFlight := 0
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	syncTick := time.NewTicker(time.Second)
	defer syncTick.Stop()
	flush := func() {
		for _, o := range m.Outputs() {
			pc := peers[o.To]
			if pc == nil {
				continue
			}
			if pc.conn == nil {
				if len(pc.backlog) < d.cfg.Backlog {
					pc.backlog = append(pc.backlog, o)
				} else {
					d.log.Warn("nodesched: backlog full, message dropped", "peer", o.To, "cmd", o.Msg.Code())
				}
				continue
			}
			if err := pc.conn.Send(ctx, o.Msg, o.Priority); err != nil {
				pc.backlog = append(pc.backlog, o)
				continue
			}
			d.track(pc, o, d.now())
		}
		d.crawlLog(m.CrawlLog(), peers[MNS].conn)
		for _, p := range m.DeadPeers() {
			if pc := peers[p]; pc != nil && pc.conn != nil {
				pc.conn.Close()
			}
		}
		for _, r := range m.Resolved() {
			d.ipMu.Lock()
			d.ips[r.Host] = r.IP
			d.ipMu.Unlock()
			for _, ch := range waiters[r.Host] {
				ch <- r.IP
			}
			delete(waiters, r.Host)
		}
	}
	for {
		now := d.now()
		if err := m.Tick(now); err != nil {
			return err
		}
		wake := m.NextTimer()
		for inFlight < d.cfg.Workers {
			j, ok, w := m.Next(now)
			if !ok {
				if !w.IsZero() && w.Before(wake) {
					wake = w
				}
				break
			}
			inFlight++
			d.jobs <- j
		}
		flush()
		d.idleMu.Lock()
		d.idle = inFlight == 0 && m.Idle()
		{
			d.stats = map[string]Counters{}
			for _, c := range m.Collections() {
				d.stats[c] = m.Stats(c)
			}
			if now.Sub(d.siteStatsAt) >= siteStatsEvery || now.Before(d.siteStatsAt) {
				d.siteStatsAt = now
				d.siteStats = map[string]map[string]Counters{}
				for _, c := range m.Collections() {
					d.siteStats[c] = m.SiteStats(c)
				}
			}
		}
		d.idleMu.Unlock()
		dur := wake.Sub(d.now())
		if dur < time.Millisecond {
			dur = time.Millisecond
		}
		timer.Reset(dur)
		select {
		case <-ctx.Done():
			return nil
		case <-syncTick.C:
			if err := st.SyncWAL(); err != nil {
				return err
			}
		case <-timer.C:
		case ev := <-d.events:
			if err := d.handle(ctx, m, ev, peers, waiters, &inFlight); err != nil {
				return err
			}
			// Drain what else is ready before scheduling again.
			for n := 0; n < 256; n++ {
				select {
				case ev := <-d.events:
					if err := d.handle(ctx, m, ev, peers, waiters, &inFlight); err != nil {
						return err
					}
					continue
				default:
				}
				break
			}
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
	}
}

func (d *Driver) handle(ctx context.Context, m *Machine, ev event, peers map[Peer]*peerConn, waiters map[string][]chan string, inFlight *int) error {
	now := d.now()
	switch {
	case ev.outcome != nil:
		*inFlight--
		if d.cfg.Observe != nil {
			d.cfg.Observe(ev.outcome.Job.S.Name, ev.outcome)
		}
		if err := m.Complete(ev.outcome, now); err != nil {
			return fmt.Errorf("nodesched: committing %s: %w", ev.outcome.Job.Fetch.URI, err)
		}
	case ev.add != nil:
		ev.addErr <- m.AddCollection(ev.add, now)
	case ev.exec != nil:
		ev.addErr <- ev.exec(m, now)
		d.idleMu.Lock()
		d.siteStatsAt = time.Time{} // show the change at once
		d.idleMu.Unlock()
	case ev.resolve != nil:
		if ip, ok := m.LookupHost(ev.resolve.host, now); ok {
			ev.resolve.reply <- ip
		} else {
			waiters[ev.resolve.host] = append(waiters[ev.resolve.host], ev.resolve.reply)
		}
	case ev.up != nil:
		pc := peers[ev.peer]
		pc.conn = ev.up
		m.Connected(ev.peer, true, now)
		// INIT (and configurations for a duplicate server) go first, then
		// what was kept while the link was down.
		outs := m.Outputs()
		for _, o := range outs {
			if o.To == ev.peer {
				if pc.conn.Send(ctx, o.Msg, o.Priority) == nil {
					d.track(pc, o, now)
				} else if _, isInit := o.Msg.(*cmt.UMInit); !isInit {
					// The new link is gone already: keep it for the next.
					pc.backlog = append(pc.backlog, o)
				}
			} else {
				m.out = append(m.out, o)
			}
		}
		recent := pc.recent
		pc.recent = nil
		backlog := pc.backlog
		pc.backlog = nil
		for _, o := range backlog {
			if _, isInit := o.Msg.(*cmt.UMInit); isInit {
				continue
			}
			if !ev.peer.DS && reasked(o.Msg) {
				continue
			}
			if err := pc.conn.Send(ctx, o.Msg, o.Priority); err != nil {
				pc.backlog = append(pc.backlog, o)
				continue
			}
			d.track(pc, o, now)
		}
		// URIs sent on the previous links within the window go again: the
		// old link may have lost them.
		n := 0
		for _, r := range recent {
			if now.Sub(r.at) > d.resendWindow() {
				continue
			}
			if pc.conn.Send(ctx, r.o.Msg, r.o.Priority) == nil {
				n++
			}
			d.track(pc, r.o, r.at) // sent or not, kept for the next link
		}
		if n > 0 {
			d.log.Info("nodesched: URIs sent again on the new link", "peer", ev.peer, "uris", n)
		}
	case ev.down:
		if pc := peers[ev.peer]; pc != nil {
			pc.conn = nil
			pc.lost()
		}
		m.Connected(ev.peer, false, now)
	case ev.msg != nil:
		if ev.screened != nil {
			d.screening.Add(-1)
		} else {
			if pc := peers[ev.peer]; pc != nil && ev.peer.DS {
				pc.answered(ev.msg)
			}
			if coll, s, raw, ok := m.ToScreen(ev.msg); ok && d.screen != nil &&
				d.screen.offer(coll, screenReq{peer: ev.peer, msg: ev.msg, s: s, raw: raw}) {
				return nil // back with its verdict (screener.go)
			}
		}
		if err := m.HandleScreened(ev.peer, ev.msg, ev.screened, now); err != nil {
			d.log.Warn("nodesched: message failed", "peer", ev.peer, "cmd", ev.msg.Code(), "err", err)
		}
	}
	return nil
}

// link keeps one peer connected: dial, run, deliver messages, redial with
// backoff after a failure.
func (d *Driver) link(ctx context.Context, p Peer, dial DialFunc) {
	backoff := 100 * time.Millisecond
	failures := 0
	for ctx.Err() == nil {
		conn, err := dial(ctx)
		if err != nil {
			failures++
			lvl := slog.LevelDebug
			if failures == 1 || failures%30 == 0 {
				lvl = slog.LevelWarn
			}
			d.log.Log(ctx, lvl, "nodesched: peer unreachable, retrying", "peer", p, "err", err, "retry_in", backoff, "failures", failures)
			t := time.NewTimer(backoff)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return
			}
			backoff = min(backoff*2, 10*time.Second)
			continue
		}
		if failures > 0 {
			d.log.Info("nodesched: peer reachable again", "peer", p, "failures", failures)
		}
		failures = 0
		started := time.Now()
		done := make(chan error, 1)
		go func() { done <- conn.Run(ctx) }()
		select {
		case d.events <- event{peer: p, up: conn}:
		case <-ctx.Done():
			conn.Close()
			<-done
			return
		}
		for f := range conn.Incoming() {
			select {
			case d.events <- event{peer: p, msg: f.Message}:
			case <-ctx.Done():
			}
		}
		err = <-done
		if ctx.Err() != nil {
			return
		}
		d.log.Warn("nodesched: link lost", "peer", p, "err", err)
		select {
		case d.events <- event{peer: p, down: true}:
		case <-ctx.Done():
			return
		}
		// A link the peer ends at once (an allow-list, a replica not
		// promoted) must not be redialled in a tight loop; one that lived
		// redials at once.
		if time.Since(started) < time.Second {
			t := time.NewTimer(backoff)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return
			}
			backoff = min(backoff*2, 10*time.Second)
		} else {
			backoff = 100 * time.Millisecond
		}
	}
}

var _ = http.StatusOK
