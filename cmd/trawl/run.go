package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/trawl/trawl/internal/admin"
	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/config"
	"github.com/trawl/trawl/internal/crawldone"
	"github.com/trawl/trawl/internal/crawlsummary"
	"github.com/trawl/trawl/internal/diskspace"
	"github.com/trawl/trawl/internal/distrib/chain"
	"github.com/trawl/trawl/internal/dupserver"
	"github.com/trawl/trawl/internal/feed"
	"github.com/trawl/trawl/internal/gctune"
	"github.com/trawl/trawl/internal/loop"
	"github.com/trawl/trawl/internal/multinode"
	"github.com/trawl/trawl/internal/nodesched"
	"github.com/trawl/trawl/internal/nodesched/crawlpipe"
	"github.com/trawl/trawl/internal/nodesched/nsadmin"
	"github.com/trawl/trawl/internal/webfarm"
)

func init() {
	register(&command{name: "run", summary: "crawl: every role in one process (the main job)", run: runRun})
}

const runSummary = `Crawl what the configuration says. trawl run starts the multinode scheduler, one node
scheduler and a duplicate server in this process; they talk MS-FSCMT to each other over
in-memory connections, the same code path as a multi-machine crawl. What it crawls goes
through a name server, a content distributor and an indexer in this process (MS-FSCDFT over
loopback TCP), or with --nameserver those of a distributed chain. State lives under --data:
a restart with the same --data continues where the last run stopped (also after kill -9).

With --demo (or without --config) trawl starts its built-in synthetic web on 127.x.y.z
addresses and crawls it, so it works without internet; the summary compares what was
fetched with what a correct crawl must fetch.

With --once trawl exits when the crawl has nothing left to do (the first refresh cycle
is complete) and prints a summary; otherwise it keeps refreshing until SIGINT/SIGTERM,
which stop it cleanly.`

// runOptions are trawl run's flags.
type runOptions struct {
	configs    repeated
	data       string
	hostsFile  string
	dnsServer  string
	once       bool
	demo       bool
	demoHosts  int
	demoPages  int
	demoSeed   int64
	nodeID     string
	workers    int
	basePort   int
	listen     string
	keyFile    string
	key        *config.Key
	index      bool
	indexURL   string // --index opensearch://... (opensearch.go)
	cpuProfile string
	logLevel   string
	progress   string
	idleSettle time.Duration
	serve      bool
	warcDir    string
	nameServer string     // feed an external chain (run_feeding.go)
	adm        adminFlags // run_admin.go
	disk       *diskspace.Flags
	diskGuard  *diskspace.Guard // the one full-disk guard of --data, shared by the roles
}

func runRun(ctx context.Context, env *cmdEnv, args []string) error {
	var o runOptions
	fs := newFlagSet(env, "run", "run [--config FILE] [--demo] [--data DIR] [--hosts-file F] [--once]", runSummary)
	fs.Var(&o.configs, "config", "MS-FSCCFG crawl configuration file (repeatable)")
	fs.StringVar(&o.data, "data", "./data", "directory of all crawl state")
	fs.StringVar(&o.hostsFile, "hosts-file", "", "resolve host names from this /etc/hosts-format file (then the system resolver)")
	fs.StringVar(&o.dnsServer, "dns-server", "", "send the resolver's DNS queries to this server (HOST:PORT) instead of those of /etc/resolv.conf")
	fs.BoolVar(&o.once, "once", false, "exit when the first refresh cycle is complete, with a summary")
	fs.BoolVar(&o.demo, "demo", false, "crawl the built-in synthetic web (implies --once)")
	fs.IntVar(&o.demoHosts, "demo-hosts", 10, "with --demo: number of synthetic sites")
	fs.IntVar(&o.demoPages, "demo-pages", 100, "with --demo: pages per site")
	fs.Int64Var(&o.demoSeed, "demo-seed", 1, "with --demo: seed of the synthetic web")
	fs.StringVar(&o.nodeID, "node-id", "node1", "identifier of the node scheduler")
	fs.IntVar(&o.workers, "workers", 64, "concurrent fetches")
	fs.IntVar(&o.basePort, "base-port", 13000, "base port: the HTTP interface (XML-RPC admin, search, status) listens on base+0")
	fs.StringVar(&o.listen, "listen", "", "address of the HTTP interface (default 127.0.0.1:<base-port>; \"off\" disables it)")
	fs.StringVar(&o.logLevel, "log-level", "warn", "log level: debug, info, warn, error")
	fs.StringVar(&o.keyFile, "key-file", "", keyFileHelp)
	o.index = true
	fs.Var(indexFlag{on: &o.index, url: &o.indexURL}, "index", "true: feed the crawled documents into the full-text index under --data; false: crawl only;\nopensearch://HOST:PORT[,HOST:PORT]/INDEX: feed them into that OpenSearch index (the search page queries it)")
	fs.StringVar(&o.nameServer, "nameserver", "", "HOST:PORT of a name server: feed the documents through its content distributors and indexers\n(default: a name server, a content distributor and an indexer in this process, the index under --data)")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the whole run to this file (go tool pprof)")
	fs.StringVar(&o.progress, "progress", "auto", "live progress line: auto (on a terminal), on, off")
	fs.DurationVar(&o.idleSettle, "idle-settle", 1500*time.Millisecond, "with --once, the fallback when messages between the roles are unaccounted for (a lost connection): how long the crawl must stay idle to count as complete")
	fs.StringVar(&o.warcDir, "warc", "", "write what is crawled as WARC files (gzipped WARC/1.1) into this directory, for every collection")
	fs.BoolVar(&o.serve, "serve", false, "with --once or --demo: keep the HTTP interface (search, status, admin API) up after the crawl until Ctrl-C/SIGTERM")
	o.adm.register(fs)
	o.disk = diskspace.Register(fs)
	waf := registerRunWebanalyzer(fs) // webanalyzer.go
	fs.BoolVar(&o.adm.protectSearch, "search-auth", false, "require the admin API's credential (--admin-token or --admin-user) on the search page and its JSON API too")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	log, err := o.check(env, fs)
	if err != nil {
		return err
	}
	gctune.ApplyDefault() // GOGC 200 with a memory limit guard (internal/gctune)
	if err := o.prepare(); err != nil {
		return err
	}
	if o.cpuProfile != "" {
		f, err := os.Create(o.cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var farm *webfarm.Farm
	var expect []string
	if o.demo {
		if farm, expect, err = startDemo(ctx, env, &o); err != nil {
			return err
		}
		defer farm.Close()
	}
	specs, err := loadSpecs(env, o.configs)
	if err != nil {
		return err
	}

	_, statErr := os.Stat(filepath.Join(o.data, "node"))
	resumed := statErr == nil
	e := newEngine(&o, specs, log)
	if e.searchErr != nil {
		if e.ln != nil {
			e.ln.Close()
		}
		return e.searchErr
	}
	defer e.search.Close()
	wa, err := waf.start(ctx, env, &o, e, log)
	if err != nil {
		return err
	}
	defer wa.Close()
	start := time.Now()
	errc := make(chan error, 1)
	go func() { errc <- e.run(ctx) }()
	go func() {
		select {
		case a := <-e.httpAddr:
			fmt.Fprint(env.stderr, listenMessage("run", a.String(), o.adm.tls))
		case <-ctx.Done():
		}
	}()

	runErr, stopped, complete := waitCrawl(ctx, env, &o, e, errc, start)
	if complete {
		wa.Complete(ctx, env.stderr)
	}
	summary := func(elapsed time.Duration, serving bool) {
		e.printSummary(env.stdout, elapsed, farm, expect)
		e.search.WriteSummary(env.stdout, e.ns.FeedPending())
		if resumed {
			fmt.Fprintf(env.stdout, "  %-22s this run continued the crawl state in %s; the counts above are this run's only\n", "resumed", o.data)
		}
		printNextSteps(context.Background(), env.stdout, &o, e, e.httpHost(), serving)
	}
	if complete && o.serve && e.ln != nil {
		// --serve: the summary now, then the HTTP interface (and the
		// idle roles behind it) until Ctrl-C/SIGTERM.
		summary(time.Since(start), true)
		select {
		case runErr = <-errc:
			stopped = true
		case <-ctx.Done():
		}
		cancel()
		if !stopped {
			runErr = <-errc
		}
	} else {
		elapsed := time.Since(start)
		cancel()
		if !stopped {
			runErr = <-errc
		}
		summary(elapsed, false)
	}
	if runErr != nil && !errors.Is(runErr, context.Canceled) {
		return runErr
	}
	return nil
}

// check checks the flags together (printing what is wrong) and returns
// the process's logger.
func (o *runOptions) check(env *cmdEnv, fs *flag.FlagSet) (*slog.Logger, error) {
	usage := func(msg string) (*slog.Logger, error) {
		fmt.Fprintln(env.stderr, "trawl run: "+msg)
		return nil, errUsage
	}
	if o.serve && o.listen == "off" {
		return usage("--serve keeps the HTTP interface up, but --listen off disables it: drop one of them")
	}
	if fs.NArg() > 0 {
		return usage(fmt.Sprintf("unexpected argument %q", fs.Arg(0)))
	}
	if len(o.configs) == 0 {
		o.demo = true
	}
	if o.demo {
		if len(o.configs) > 0 {
			return usage("--demo and --config exclude each other")
		}
		o.once = true
	}
	log, level, err := admin.NewLogger(env.stderr, o.logLevel)
	if err != nil {
		return usage(err.Error())
	}
	o.adm.level = level
	if o.adm.tls, err = loadTLS(env, "run", o.adm.tlsFlags); err != nil {
		return nil, err
	}
	if o.adm.protectSearch && !o.adm.auth().Enabled() {
		return usage("--search-auth needs --admin-token or --admin-user")
	}
	if err := o.adm.checkListen(o.listen, "--listen"); err != nil {
		return usage(err.Error())
	}
	if o.diskGuard, err = o.disk.Guard(o.data, "trawl run", log); err != nil {
		return usage(err.Error())
	}
	return log, nil
}

// prepare creates the data directory and resolves what the flags name.
func (o *runOptions) prepare() error {
	if err := os.MkdirAll(o.data, 0o755); err != nil {
		return err
	}
	var err error
	if o.warcDir != "" {
		if o.warcDir, err = filepath.Abs(o.warcDir); err != nil {
			return err
		}
	}
	o.key, err = passwordKey(o.keyFile)
	return err
}

// loadSpecs parses the configuration files and prepares their
// collections; the configuration's errors (and its warnings about
// parameters that are honoured) go to stderr.
func loadSpecs(env *cmdEnv, paths []string) ([]*multinode.CollectionSpec, error) {
	var specs []*multinode.CollectionSpec
	for _, path := range paths {
		cfg, err := config.ParseFile(path, nil)
		if err != nil {
			var el config.ErrorList
			if errors.As(err, &el) {
				for _, e := range el {
					fmt.Fprintln(env.stderr, e.Error())
				}
				return nil, exitError{1}
			}
			return nil, err
		}
		for _, w := range cfg.Warnings {
			if !w.NotHonoured {
				fmt.Fprintln(env.stderr, "warning: "+w.Error())
			}
		}
		for _, col := range cfg.Collections {
			spec, err := multinode.NewCollectionSpec(col, nil)
			if err != nil {
				return nil, err
			}
			specs = append(specs, spec)
		}
	}
	if len(specs) == 0 {
		return nil, errors.New("the configuration holds no collection")
	}
	return specs, nil
}

// waitCrawl shows the progress line until the crawl ends: the engine
// stopped (stopped, with its error), ctx ended, or with --once the crawl
// is complete (internal/crawldone: nothing queued, nothing in flight).
func waitCrawl(ctx context.Context, env *cmdEnv, o *runOptions, e *engine, errc <-chan error, start time.Time) (runErr error, stopped, complete bool) {
	showProgress := o.progress == "on" || (o.progress == "auto" && isTerminal(env.stderr))
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	var check <-chan time.Time
	if o.once {
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		check = t.C
	}
	done := e.doneChecker(o.idleSettle)
loop:
	for {
		select {
		case runErr = <-errc:
			stopped = true
			break loop
		case <-ctx.Done():
			break loop
		case now := <-tick.C:
			if showProgress {
				fmt.Fprintf(env.stderr, "\r\033[K%s", e.progressLine(now.Sub(start)))
			}
		case now := <-check:
			if complete = done.Check(ctx, now); complete {
				if done.Fallback() {
					e.log.Warn("crawl idle for --idle-settle with messages unaccounted for (a connection lost?): taken as complete", "idle_settle", o.idleSettle.String())
				}
				break loop
			}
		}
	}
	if showProgress {
		fmt.Fprint(env.stderr, "\r\033[K")
	}
	return runErr, stopped, complete
}

// startDemo starts the synthetic web in this process, its files under
// the data directory, and points o at its hosts file and configuration.
func startDemo(ctx context.Context, env *cmdEnv, o *runOptions) (*webfarm.Farm, []string, error) {
	d, err := webfarm.StartDemo(ctx, filepath.Join(o.data, "demo"), webfarm.DefaultConfig(o.demoSeed, o.demoHosts, o.demoPages))
	if err != nil {
		return nil, nil, err
	}
	o.hostsFile, o.configs = d.HostsFile, repeated{d.ConfigFile}
	fmt.Fprintf(env.stderr, "trawl run: crawling the synthetic web: %d sites, %d pages each, port %d (config %s)\n",
		o.demoHosts, o.demoPages, d.Farm.Port(), d.ConfigFile)
	return d.Farm, d.Expect, nil
}

// engine is the three roles of a single-machine crawl wired together, and
// the HTTP interface on the base port.
type engine struct {
	mns *multinode.Server
	ds  *dupserver.Server
	ns  *nodesched.Driver
	log *slog.Logger

	// listen is the HTTP interface's address ("" for none); mux holds its
	// handlers: each feature mounts its own paths in newEngine.
	listen string
	mux    *http.ServeMux
	// ln is the HTTP interface's listener, opened in newEngine so that the
	// node scheduler announces the port it really got (--listen
	// 127.0.0.1:0); lnErr is why it could not be opened.
	ln    net.Listener
	lnErr error
	// pipes are the goroutines serving in-process connections; run waits
	// for them (a bounded time) so that none logs after it returned.
	pipes sync.WaitGroup
	// httpAddr is the address the HTTP interface listens on once running.
	httpAddr chan net.Addr
	// search is the index, its feeding and the search page; chain is
	// the feeding chain behind it (nil with --index=false); searchErr is
	// why they could not be opened.
	search    *feed.Local
	chain     *chain.Chain
	searchErr error
	// admin is the MS-FSCADM API, the status page and the metrics
	// (run_admin.go).
	admin *adminHTTP
}

func newEngine(o *runOptions, specs []*multinode.CollectionSpec, log *slog.Logger) *engine {
	e := &engine{log: log, mux: http.NewServeMux(), httpAddr: make(chan net.Addr, 1)}
	e.search, e.chain, e.searchErr = openFeeding(o, log)
	e.search.Mount(e.mux, o.adm.searchAuth().Wrap)
	switch o.listen {
	case "off":
	case "":
		e.listen = fmt.Sprintf("127.0.0.1:%d", o.basePort)
	default:
		e.listen = o.listen
	}
	e.mns = &multinode.Server{
		Data:          filepath.Join(o.data, "multinode"),
		HostsFile:     o.hostsFile,
		HostsFallback: true,
		DNSServer:     o.dnsServer,
		Logger:        log.With("role", "multinode"),
		Collections:   specs,
		Disk:          o.diskGuard,
	}
	e.ds = &dupserver.Server{
		Data:   filepath.Join(o.data, "dupserver"),
		NodeID: "dupserver1",
		Logger: log.With("role", "dupserver"),
		Disk:   o.diskGuard,
	}
	host, port := nsadmin.Announced(nil, o.basePort)
	if e.listen != "" {
		e.ln, e.lnErr = net.Listen("tcp", e.listen)
		if e.lnErr == nil {
			host, port = nsadmin.Announced(e.ln.Addr(), o.basePort)
			e.ln = o.adm.tls.Listener(e.ln, nil)
		}
	}
	e.ns = nodesched.New(nodesched.Config{
		NodeID:    o.nodeID,
		AdminHost: host,
		AdminPort: port,
		DataDir:   filepath.Join(o.data, "node"),
		MNS:       e.pipeTo("multinode", e.mns.Attach),
		DS:        []nodesched.DialFunc{e.pipeTo("dupserver", e.ds.Serve)},
		Workers:   o.workers,
		Key:       o.key,
		Logger:    log.With("role", "nodesched"),
		Feed:      feedConfig(e.search),
		Observe:   func(c string, oc *crawlpipe.Outcome) { e.admin.observe(c, oc) },
		WARC:      nodesched.WARCConfig{Dir: o.warcDir, Software: "trawl/" + version},
		Disk:      o.diskGuard,
	})
	e.admin = newRunAdmin(e, o, specs)
	return e
}

// pipeTo returns a dialer that connects the node scheduler to a role in
// this process over an in-memory MS-FSCMT connection; serve takes the far
// end (multinode Attach, dupserver Serve).
func (e *engine) pipeTo(name string, serve func(context.Context, *cmt.Conn) error) nodesched.DialFunc {
	return func(ctx context.Context) (*cmt.Conn, error) {
		near, far := cmt.Pipe(cmt.ConnConfig{Name: name, Logger: e.log}, cmt.ConnConfig{Name: "nodesched", Logger: e.log})
		e.pipes.Add(1)
		go func() {
			defer e.pipes.Done()
			if err := serve(ctx, far); err != nil && ctx.Err() == nil {
				e.log.Warn("in-process connection ended", "peer", name, "err", err)
			}
		}()
		return near, nil
	}
}

// run runs the three roles and the HTTP interface until ctx ends or one
// fails.
func (e *engine) run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	errs := make([]error, 5)
	for i, r := range []func(context.Context) error{e.mns.Run, e.ds.Run, e.ns.Run, e.serveHTTP, e.admin.Backend.Run} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := r(ctx); err != nil && ctx.Err() == nil {
				errs[i] = err
				cancel()
			}
		}()
	}
	wg.Wait()
	done := make(chan struct{})
	go func() { e.pipes.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		e.log.Warn("in-process connections still open after the roles stopped")
	}
	return errors.Join(errs...)
}

// serveHTTP serves the HTTP interface (e.mux) on e.listen until ctx ends.
func (e *engine) serveHTTP(ctx context.Context) error {
	if e.listen == "" {
		return nil
	}
	if e.lnErr != nil {
		return fmt.Errorf("HTTP interface: %w (choose another with --listen or --base-port, or --listen off)", e.lnErr)
	}
	e.httpAddr <- e.ln.Addr()
	return admin.Serve(ctx, e.ln, e.mux)
}

// httpHost is the host:port of the HTTP interface to show in URLs ("" when
// it is off), with a wildcard address replaced by 127.0.0.1.
func (e *engine) httpHost() string {
	if e.ln == nil {
		return ""
	}
	a := e.ln.Addr().String()
	if strings.HasPrefix(a, "[::]:") || strings.HasPrefix(a, "0.0.0.0:") {
		a = "127.0.0.1" + a[strings.LastIndex(a, ":"):]
	}
	return a
}

// doneChecker tells when the crawl is complete (--once): the three roles'
// loops balanced and idle, or, as the fallback, idle for settle.
func (e *engine) doneChecker(settle time.Duration) *crawldone.Checker {
	return &crawldone.Checker{Loops: []func() (loop.Stats, bool){e.mns.LoopStats, e.ds.LoopStats, e.ns.LoopStats},
		Idle: e.idle, Settle: settle}
}

// idle reports whether nothing is queued anywhere: the node scheduler has no
// work, its feeding outbox is empty and the multinode scheduler holds no
// entry to forward.
func (e *engine) idle(ctx context.Context) bool {
	if !e.ns.Idle() || e.ns.FeedPending() > 0 {
		return false
	}
	qctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	infos, err := e.mns.CollectionInfos(qctx)
	if err != nil {
		return false
	}
	for _, c := range infos {
		if c.Queued > 0 || c.Waiting > 0 || c.Rebuilding {
			return false
		}
	}
	return true
}

// totals sums the node scheduler's counters over its collections.
func (e *engine) totals() nodesched.Counters {
	t := nodesched.Counters{}
	for _, c := range e.ns.RunStats() { // this run: a resumed crawl's restored counters are not counted again
		for k, v := range c {
			t[k] += v
		}
	}
	return t
}

func (e *engine) progressLine(elapsed time.Duration) string {
	return crawlsummary.ProgressLine(e.totals(), elapsed)
}

func (e *engine) printSummary(w io.Writer, elapsed time.Duration, farm *webfarm.Farm, expect []string) {
	var requested []string
	if farm != nil {
		for _, r := range farm.Requests() {
			requested = append(requested, r.URL)
		}
	}
	crawlsummary.Write(w, e.totals(), elapsed, farm != nil, requested, expect)
	if ws := e.ns.WARCStats(); ws.Files > 0 {
		fmt.Fprintf(w, "  %-22s %d responses, %d revisits (%d identical payloads, %d not modified), %d requests, %d metadata records in %d files; %d write errors\n",
			"WARC", ws.Responses, ws.Revisits, ws.Identical, ws.NotModified, ws.Requests, ws.Metadata, ws.Files, ws.Errors)
	}
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// feedConfig is the node scheduler's feeding configuration into the
// local index (nil without one).
func feedConfig(s *feed.Local) *nodesched.FeedConfig {
	if s.Dialer() == nil {
		return nil
	}
	return &nodesched.FeedConfig{Dial: s.Dialer(), Feeder: s.FeederOptions()}
}
