package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"

	"github.com/trawl/trawl/internal/admin"
	"github.com/trawl/trawl/internal/collstore"
	"github.com/trawl/trawl/internal/crawladmin"
	"github.com/trawl/trawl/internal/multinode"
	"github.com/trawl/trawl/internal/multinode/mnsadmin"
	"github.com/trawl/trawl/internal/nodesched"
	"github.com/trawl/trawl/internal/nodesched/crawlpipe"
	"github.com/trawl/trawl/internal/nodesched/nsadmin"
	"github.com/trawl/trawl/internal/stats"
	"github.com/trawl/trawl/internal/tlsconf"
)

// adminFlags are the flags of the HTTP interface's administration side,
// shared by trawl run, multinode and node.
type adminFlags struct {
	token, user, password string
	files                 string
	insecureListen        bool
	// protectSearch puts the search page and API behind the same
	// credential (trawl run --search-auth).
	protectSearch bool
	// level is the process's log level, set once the logger exists.
	level *admin.Level
	// tlsFlags are the mutual-TLS flags (registered with the others);
	// tls, once loaded by the command, serves the HTTP interface over TLS.
	tlsFlags *tlsconf.Flags
	tls      *tlsconf.Config
}

func (f *adminFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.token, "admin-token", "", "require this token (Authorization: Bearer, or as a basic-auth password) on the HTTP interface's admin API, status page and metrics")
	fs.StringVar(&f.user, "admin-user", "", "require basic authentication with this user (and --admin-password)")
	fs.StringVar(&f.password, "admin-password", "", "password for --admin-user")
	fs.BoolVar(&f.insecureListen, "insecure-listen", false, "allow the HTTP interface on a non-loopback address without --admin-token or --admin-user (anyone who reaches it may administer the crawler)")
	fs.StringVar(&f.files, "admin-files", "", "directory AddURIFile and CollectionDeleteURIFile may read URI files from (default: none, they are refused)")
	f.tlsFlags = tlsconf.Register(fs)
}

func (f *adminFlags) auth() admin.Auth {
	return admin.Auth{Token: f.token, User: f.user, Password: f.password}
}

// options are the backend options the flags give.
func (f *adminFlags) options(log *slog.Logger) crawladmin.Options {
	return crawladmin.Options{Level: f.level, Files: admin.URIFiles{Dir: f.files}, Logger: log.With("role", "admin")}
}

// searchAuth is the authentication of the search page and API.
func (f *adminFlags) searchAuth() admin.Auth {
	if !f.protectSearch {
		return admin.Auth{}
	}
	return f.auth()
}

// checkListen refuses an HTTP interface on a non-loopback addr without
// authentication, unless --insecure-listen.
func (f *adminFlags) checkListen(addr, flag string) error {
	return admin.CheckListen(addr, flag, f.auth(), f.insecureListen)
}

// adminHTTP is the administration side of a process's HTTP interface:
// the MS-FSCADM API at /RPC2, the status page at /status (and / when
// nothing else serves it), its data at /status.json and the Prometheus
// metrics at /metrics.
type adminHTTP struct {
	*crawladmin.HTTP
	// observe is the node scheduler's Observe hook (nil without one).
	observe func(coll string, o *crawlpipe.Outcome)
	tls     *tlsconf.Config
}

// newAdminHTTP serves b; ns, if not nil, is the node scheduler of the
// process, which feeds the metrics and the status page.
func newAdminHTTP(b *crawladmin.Backend, f adminFlags, ns *nodesched.Driver) *adminHTTP {
	h := &adminHTTP{HTTP: crawladmin.NewHTTP(b, f.auth()), tls: f.tls}
	if ns != nil {
		h.observe = nsadmin.Observe(b, h.Metrics)
		h.Metrics.SetFeedBacklog(ns.FeedPending)
		if g := ns.Disk(); g != nil {
			h.SetDisk(g.Status)
		}
	}
	return h
}

// newRunAdmin builds the administration side of trawl run: the backend in
// the standalone role over the engine's multinode and node schedulers,
// mounted on the engine's HTTP interface.
func newRunAdmin(e *engine, o *runOptions, specs []*multinode.CollectionSpec) *adminHTTP {
	// The collections added over the API before a restart join those of
	// --config (the saved copy wins; docs/decisions/admin.md). The multinode scheduler has not
	// started yet, so its Collections may change here.
	store := collstore.Store{Dir: collstore.Dir(o.data)}
	specs = mnsadmin.WithSaved(specs, store, e.log)
	e.mns.Collections = specs
	opts := o.adm.options(e.log)
	opts.Role, opts.Configs, opts.Store = admin.Standalone, o.configs, store
	eng := standalone{Engine: &mnsadmin.Engine{MNS: e.mns}, ns: nsadmin.Engine{NS: e.ns}}
	h := newAdminHTTP(crawladmin.New(eng, mnsadmin.Configs(specs), opts), o.adm, e.ns)
	if e.chain != nil {
		// A fresh registry holds no chain metrics yet: no collision.
		_ = h.SetChain(e.chain.Status, e.chain.Collector())
	}
	h.Mount(e.mux)
	return h
}

// standalone is trawl run's admin engine: collection operations go
// through the in-process multinode scheduler, which relays them to the
// node scheduler in MS-FSCMT messages as in a distributed setup; what
// MS-FSCMT has no message for (refresh-only, refetching a site, refeeding),
// the counters, the modes the crawl store keeps and the configuration go
// to the node scheduler directly; the log level is the process's own.
type standalone struct {
	*mnsadmin.Engine
	ns nsadmin.Engine
}

func (s standalone) SetRefreshOnly(ctx context.Context, coll string, on bool) error {
	return s.ns.SetRefreshOnly(ctx, coll, on)
}

func (s standalone) RefetchURI(ctx context.Context, coll, uri string, o crawladmin.RefetchOptions) error {
	return s.ns.RefetchURI(ctx, coll, uri, o)
}

func (s standalone) Counters(ctx context.Context) map[string]stats.CounterReport {
	return s.ns.Counters(ctx)
}

func (s standalone) Modes(ctx context.Context) (map[string]crawladmin.Modes, bool) {
	return s.ns.Modes(ctx)
}

func (s standalone) ConfigXML(ctx context.Context, coll string) (string, error) {
	return s.ns.ConfigXML(ctx, coll)
}

func (s standalone) ForwardLogLevel(ctx context.Context, level int) error { return nil }

// serveAdmin serves the administration side of a role process (trawl
// multinode, trawl node) on addr until ctx ends; ready, if not nil, gets
// the address once it listens.
func serveAdmin(ctx context.Context, env *cmdEnv, cmd, addr string, h *adminHTTP, ready chan<- string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("HTTP interface: %w", err)
	}
	ln = h.tls.Listener(ln, nil)
	mux := http.NewServeMux()
	h.Mount(mux)
	fmt.Fprint(env.stderr, listenMessage(cmd, ln.Addr().String(), h.tls))
	if ready != nil {
		ready <- ln.Addr().String()
	}
	go func() { _ = h.Backend.Run(ctx) }()
	return admin.Serve(ctx, ln, mux)
}

// runNodeWithAdmin runs a node scheduler of a multinode setup with its HTTP
// interface on addr ("" for none); the admin port announced in CMD_UM_INIT
// is the one it listens on.
func runNodeWithAdmin(ctx context.Context, env *cmdEnv, cfg nodesched.Config, addr string, adm adminFlags, log *slog.Logger) error {
	if addr == "" {
		return nodesched.New(cfg).Run(ctx)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("HTTP interface: %w (choose another with --listen or --base-port, or --listen off)", err)
	}
	cfg.AdminHost, cfg.AdminPort = nsadmin.Announced(ln.Addr(), int(cfg.AdminPort))
	var h *adminHTTP
	cfg.Observe = func(c string, o *crawlpipe.Outcome) { h.observe(c, o) }
	ns := nodesched.New(cfg)
	h = newAdminHTTP(nsadmin.New(ns, adm.options(log)), adm, ns)
	ln.Close() // serveAdmin listens again on the same port
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- serveAdmin(ctx, env, "node", ln.Addr().String(), h, nil) }()
	err = ns.Run(ctx)
	cancel()
	if aerr := <-errc; err == nil {
		err = aerr
	}
	return err
}
