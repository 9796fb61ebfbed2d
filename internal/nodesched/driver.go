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
	"github.com/trawl/trawl/internal/diskspace"
	"github.com/trawl/trawl/internal/fetch"
	"github.com/trawl/trawl/internal/loop"
	"github.com/trawl/trawl/internal/nodesched/crawlpipe"
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
	Observe func(coll string, o *crawlpipe.Outcome)
	// Record, if set, sees every HTTP request the fetchers make, with the
	// moment the politeness pacer let it start (Pipeline.Record; tests).
	Record func(crawlpipe.RequestLog)
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
	// Disk, if set, is the full-disk floor under limits/disk_free: while
	// the free space is below its low-water mark no fetch starts
	// (diskpause.go).
	Disk *diskspace.Guard
	// StatsInterval: see MachineConfig.
	StatsInterval time.Duration
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
	pipe *crawlpipe.Pipeline

	// drv runs the machine (runner) while Run runs; started is closed
	// once it is set, stopped when Run returns.
	drv     *loop.Driver[cmt.Message]
	r       *runner
	started chan struct{}
	stopped chan struct{}

	ipMu sync.RWMutex
	ips  map[string]dialIP // host -> IP, for the dialer
	// tr is the fetchers' transport while Run runs: its idle connections
	// are closed when a host's address changes.
	tr atomic.Pointer[http.Transport]

	idleMu sync.Mutex
	idle   bool
	stats  map[string]Counters
	// restored are the counters each collection read back from the store
	// at its setup (RunStats).
	restored map[string]Counters
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
	// st is the crawl store while Run runs (WithStore); Run clears it,
	// under the write lock, before it closes the store.
	stMu sync.RWMutex
	st   *store.Store
}

// ErrNotRunning is WithStore's error when the driver does not run.
var ErrNotRunning = errors.New("nodesched: the node scheduler is not running")

// WithStore runs fn on the crawl store while Run runs (readers only: the
// web analyzer's dump of the link graph); Run does not close the store
// before fn returns.
func (d *Driver) WithStore(fn func(st *store.Store) error) error {
	d.stMu.RLock()
	defer d.stMu.RUnlock()
	if d.st == nil {
		return ErrNotRunning
	}
	return fn(d.st)
}

// siteStatsEvery bounds how often the event loop copies the per-site
// counters for SiteStats.
const siteStatsEvery = 500 * time.Millisecond

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
	pipe := crawlpipe.NewPipeline(cfg.Now, nil)
	pipe.Record = cfg.Record
	if cfg.LogDir == "" && cfg.DataDir != "" {
		cfg.LogDir = filepath.Join(cfg.DataDir, "logs")
	}
	d := &Driver{cfg: cfg, log: log, now: cfg.Now, pipe: pipe, ips: map[string]dialIP{},
		started: make(chan struct{}), stopped: make(chan struct{})}
	if cfg.LogDir != "" {
		d.logs = crawllog.New(crawllog.Config{Dir: cfg.LogDir, MaxBytes: cfg.LogMaxBytes, Keep: cfg.LogKeep, Logger: log})
	}
	return d
}

// LogsDropped is how many crawl log lines were dropped: the writer's queue
// was full, or the link to the multinode scheduler was down or full.
func (d *Driver) LogsDropped() uint64 {
	n := d.logs.Dropped() + d.logsDropped.Load()
	select {
	case <-d.started:
		n += d.drv.Stats().Dropped // CMD_UM_LOG is the only droppable message
	default:
	}
	return n
}

// LoopStats returns the counters of the driver's event loop (loop.Stats;
// the zero value and false before Run has started it).
func (d *Driver) LoopStats() (loop.Stats, bool) {
	select {
	case <-d.started:
		return d.drv.Stats(), true
	default:
		return loop.Stats{}, false
	}
}

// AddCollection sets up a collection in the running driver (in-process
// CMD_ADM_CONF_ADD).
func (d *Driver) AddCollection(ctx context.Context, c *config.Collection) error {
	return d.exec(ctx, func(r *runner, now time.Time) error { return r.m.AddCollection(c, now) })
}

// exec runs fn on the driver's loop (loop.Driver.Do) once Run has started,
// and returns its error once the batch it made was applied.
func (d *Driver) exec(ctx context.Context, fn func(r *runner, now time.Time) error) error {
	select {
	case <-d.started:
	case <-d.stopped:
		return errors.New("nodesched: driver stopped")
	case <-ctx.Done():
		return ctx.Err()
	}
	var ferr error
	err := d.drv.Do(ctx, func(now time.Time) {
		d.r.dirty, d.r.now = true, now
		ferr = fn(d.r, now)
	})
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return errors.New("nodesched: driver stopped")
	}
	return ferr
}

// WARCStats counts the WARC records written (zero without WARC writing).
func (d *Driver) WARCStats() warc.Stats { return d.warcs.Load().stats() }

// Idle reports whether, at the last loop iteration, every collection had
// nothing queued or in flight and no received URI was being screened, and
// no storage/uri_dir file is waiting to be written.
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

// RunStats is Stats less what the collections' counters held when this
// process read them back from the store: what this run counted.
func (d *Driver) RunStats() map[string]Counters {
	d.idleMu.Lock()
	defer d.idleMu.Unlock()
	out := map[string]Counters{}
	for k, v := range d.stats {
		out[k] = ThisRun(v, d.restored[k])
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
	return &crawlpipe.CountingConn{Conn: c}, nil // WriteNet (wire.go)
}

func (d *Driver) resolve(ctx context.Context, host string) (string, error) {
	if ip := net.ParseIP(host); ip != nil {
		return host, nil
	}
	d.ipMu.RLock()
	e, ok := d.ips[host]
	d.ipMu.RUnlock()
	if ok && e.ip != "" && d.now().Before(e.expires) {
		return e.ip, nil
	}
	reply := make(chan string, 1)
	err := d.exec(ctx, func(r *runner, now time.Time) error {
		if ip, ok := r.m.LookupHost(host, now); ok {
			reply <- ip
		} else {
			r.waiters[host] = append(r.waiters[host], reply)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	select {
	case ip := <-reply:
		if ip == "" {
			return "", &net.DNSError{Err: "no such host (multinode scheduler)", Name: host, IsNotFound: true}
		}
		return ip, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

type peerConn struct {
	id      loop.Peer // the link's connection, 0 while it is down
	backlog []Output
	recent  []sentMsg          // URIs sent to the multinode scheduler (reliable.go)
	pending map[dsOpKey]Output // checksum operations a duplicate server has not answered
}

// Run runs the node scheduler until ctx ends.
func (d *Driver) Run(ctx context.Context) (err error) {
	defer close(d.stopped)
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
	d.stMu.Lock()
	d.st = st
	d.stMu.Unlock()
	defer func() {
		d.stMu.Lock()
		d.st = nil
		d.stMu.Unlock()
	}()
	tr := fetch.NewTransport(fetch.Options{Dial: d.dial, MaxIdleConnsPerHost: 4, TLSConfig: d.cfg.TLSConfig})
	d.tr.Store(tr)
	defer tr.CloseIdleConnections()
	// The WARC writers stop last but for the store: after the workers,
	// whose captures they write out before closing their files.
	wctx, wcancel := context.WithCancel(context.Background())
	ws := newWARCSet(wctx, d.cfg.WARC, d.cfg.DataDir, d.cfg.NodeID, d.log)
	d.warcs.Store(ws)
	defer func() { wcancel(); ws.wait() }()
	env := crawlpipe.Env{Dial: d.dial, Transport: tr, Now: d.now, NodeID: d.cfg.NodeID, Key: d.cfg.Key, TLSConfig: d.cfg.TLSConfig, WARC: ws.writer}
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
	m, err := NewMachine(MachineConfig{NodeID: d.cfg.NodeID, AdminHost: d.cfg.AdminHost, AdminPort: d.cfg.AdminPort,
		DupServers: len(d.cfg.DS), Store: st, Env: env, Logger: d.log, Feeds: fd != nil,
		KeepAlive: d.cfg.KeepAlive, MaxMissedKeepAlives: d.cfg.MaxMissedKeepAlives,
		DiskSpace: d.cfg.DiskSpace, LimitCheckInterval: d.cfg.LimitCheckInterval, StatsInterval: d.cfg.StatsInterval}, d.now())
	if err != nil {
		return err
	}
	sctx, scancel := context.WithCancel(ctx)
	defer scancel()
	d.screening.Store(0)
	d.screen = &screeners{ctx: sctx, pending: &d.screening, qs: map[string]chan screenReq{},
		post: func(r screenReq, v *screenVerdict) bool {
			return d.exec(sctx, func(rn *runner, now time.Time) error {
				d.screening.Add(-1)
				rn.handleScreened(r, v, now)
				return nil
			}) == nil
		}}
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
		// The last step's lines go to the files; the link is gone.
		for _, e := range m.CrawlLog() {
			if !e.Remote || d.cfg.MNS == nil {
				d.logs.Log(e.Entry)
			} else {
				d.logsDropped.Add(1)
			}
		}
		if cerr := m.Close(); cerr != nil && err == nil {
			err = cerr
		}
		// The machine's last writes (the frontiers' state saved by
		// Close, what the last steps staged after the loop stopped).
		if aerr := d.persist(st, fd, m.Records()); aerr != nil && err == nil {
			err = aerr
		}
		if serr := st.SyncWAL(); serr != nil && err == nil {
			err = serr
		}
	}()
	if fd != nil {
		wg.Add(1)
		go func() { defer wg.Done(); _ = fd.Run(ctx) }()
	}
	r := newRunner(d, m, d.now())
	r.st = st
	d.r = r
	d.drv = loop.New(loop.Config[cmt.Message]{
		Name:    "nodesched",
		Machine: r,
		Dialer:  peerDialer{d: d},
		Storage: loop.StorageFunc(func(_ context.Context, recs []any) error { return r.apply(st, fd, recs) }),
		Worker: loop.WorkerFunc(func(ctx context.Context, spec any) (any, error) {
			return d.pipe.Process(ctx, spec.(*crawlpipe.Job)), nil
		}),
		MaxWork: d.cfg.Workers,
		Clock:   clock{now: d.now},
		Logger:  d.log,
		// A peer that reads slowly holds the messages for it, in order,
		// as the old loop's blocking send did, within bounds.
		Hold: &loop.HoldConfig{Max: d.cfg.Backlog, Timeout: holdTimeout},
	})
	close(d.started)
	if err := d.drv.Run(ctx); err != nil {
		if r.fatal != nil {
			return r.fatal
		}
		return err
	}
	return nil
}

// offload hands uri_dir file work to the file writer (started on first
// use), which runs it in order off the event loop; it blocks while the
// writer's bounded queue is full.
func (d *Driver) offload(f func()) {
	fw := d.files.Load()
	if fw == nil {
		fw = newFileWriter()
		d.files.Store(fw)
	}
	fw.offload(f)
}

// persist applies the machine's records (Machine.Records) outside the
// loop: at shutdown, after the loop stopped.
func (d *Driver) persist(st *store.Store, fd *Feeding, recs []any) error {
	for _, rec := range recs {
		switch x := rec.(type) {
		case storeWrites:
			if err := commitWrites(st, fd, x); err != nil {
				return err
			}
		case uriDirWork:
			d.offload(x.f)
		case feedConf, feedState:
			if err := applyFeedConf(fd, x); err != nil {
				d.log.Error("nodesched: setting up the feeding; the collection does not feed", "err", err)
			}
		case fatalErr:
			return x.err
		}
	}
	return nil
}

// holdTimeout is how long a peer may leave its send queue full before its
// link is closed (and dialled again).
const holdTimeout = 10 * time.Minute

// clock adapts Config.Now to the driver.
type clock struct{ now func() time.Time }

func (c clock) Now() time.Time { return c.now() }
func (c clock) Timer(d time.Duration) (<-chan time.Time, func()) {
	return loop.RealClock{}.Timer(d)
}

// dialIP is the dialer's copy of a host's address, good until expires (the
// DNS record's TTL, as the multinode scheduler answered it).
type dialIP struct {
	ip      string
	expires time.Time
}
