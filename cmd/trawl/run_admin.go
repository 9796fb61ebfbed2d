package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/trawl/trawl/internal/admin"
	"github.com/trawl/trawl/internal/config"
	"github.com/trawl/trawl/internal/multinode"
	"github.com/trawl/trawl/internal/nodesched"
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
	level *adminLevel
}

func (f *adminFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.token, "admin-token", "", "require this token (Authorization: Bearer, or as a basic-auth password) on the HTTP interface's admin API, status page and metrics")
	fs.StringVar(&f.user, "admin-user", "", "require basic authentication with this user (and --admin-password)")
	fs.StringVar(&f.password, "admin-password", "", "password for --admin-user")
	fs.BoolVar(&f.insecureListen, "insecure-listen", false, "allow the HTTP interface on a non-loopback address without --admin-token or --admin-user (anyone who reaches it may administer the crawler)")
	fs.StringVar(&f.files, "admin-files", "", "directory AddURIFile and CollectionDeleteURIFile may read URI files from (default: none, they are refused)")
}

func (f *adminFlags) auth() admin.Auth {
	return admin.Auth{Token: f.token, User: f.user, Password: f.password}
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

// adminLevel is a process's log level: the MS-FSCADM bitmask
// (GetLogLevel/SetLogLevel) mapped onto an slog.LevelVar.
type adminLevel struct {
	mu   sync.Mutex
	mask int
	v    *slog.LevelVar
}

func newAdminLevel(l slog.Level) *adminLevel {
	a := &adminLevel{v: new(slog.LevelVar)}
	a.v.Set(l)
	switch {
	case l <= slog.LevelDebug:
		a.mask = admin.LogDebug | admin.LogInfo | admin.LogWarning | admin.LogError | admin.LogCritical
	case l <= slog.LevelInfo:
		a.mask = admin.LogInfo | admin.LogWarning | admin.LogError | admin.LogCritical
	case l <= slog.LevelWarn:
		a.mask = admin.LogWarning | admin.LogError | admin.LogCritical
	default:
		a.mask = admin.LogError | admin.LogCritical
	}
	return a
}

// Mask returns the bitmask.
func (a *adminLevel) Mask() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.mask
}

// SetMask sets the bitmask; the slog level becomes the most verbose level
// it asks for.
func (a *adminLevel) SetMask(m int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.mask = m
	switch {
	case m&(admin.LogDebug|admin.LogVerbose) != 0:
		a.v.Set(slog.LevelDebug)
	case m&admin.LogInfo != 0:
		a.v.Set(slog.LevelInfo)
	case m&admin.LogWarning != 0:
		a.v.Set(slog.LevelWarn)
	default:
		a.v.Set(slog.LevelError)
	}
}

// newLevelLogger is newLogger with a level the admin API can change.
func newLevelLogger(w io.Writer, level string) (*slog.Logger, *adminLevel, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(level)); err != nil {
		return nil, nil, fmt.Errorf("bad --log-level %q (want debug, info, warn or error)", level)
	}
	al := newAdminLevel(lvl)
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: al.v})), al, nil
}

// adminHTTP is the administration side of a process's HTTP interface:
// the MS-FSCADM API at /RPC2, the status page at /status (and / when
// nothing else serves it), its data at /status.json and the Prometheus
// metrics at /metrics.
type adminHTTP struct {
	backend *crawlAdmin
	metrics *admin.Metrics
	reg     *prometheus.Registry
	auth    admin.Auth
}

func newAdminHTTP(b *crawlAdmin, f adminFlags) *adminHTTP {
	b.files = admin.URIFiles{Dir: f.files}
	h := &adminHTTP{backend: b, reg: prometheus.NewRegistry(), auth: f.auth()}
	// A new registry holds nothing yet, so registering cannot collide.
	h.metrics, _ = admin.NewMetrics(h.reg, b.Counters)
	return h
}

// observe is the node scheduler's Observe hook.
func (h *adminHTTP) observe(coll string, o *nodesched.Outcome) { h.backend.observe(h.metrics)(coll, o) }

// mount adds the handlers to mux.
func (h *adminHTTP) mount(mux *http.ServeMux) {
	rpc := admin.NewServer(h.backend, admin.ServerOptions{Logger: h.backend.log})
	status := admin.StatusHandler(h.backend.status)
	mux.Handle(admin.Path, h.auth.Wrap(rpc))
	mux.Handle("/status", h.auth.Wrap(status))
	mux.Handle("/status.json", h.auth.Wrap(status))
	mux.Handle("/metrics", h.auth.Wrap(admin.MetricsHandler(h.reg)))
	if _, pat := mux.Handler(httptest.NewRequest(http.MethodGet, "/", nil)); pat == "" {
		mux.Handle("/{$}", h.auth.Wrap(status))
	}
}

// status builds the status page's report.
func (a *crawlAdmin) status(ctx context.Context) (*admin.StatusReport, error) {
	all, err := a.collections(ctx)
	if err != nil {
		return nil, err
	}
	now := a.now()
	rep := &admin.StatusReport{Role: a.role.String(), Time: unix(now), Started: unix(a.started),
		Rates: a.rates.Rates(), Errors: a.errs.Recent()}
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, c := range all {
		cnt := a.counters[c.name]
		cs := admin.CollectionStatus{Name: c.name, Status: statusOf(c.state).Code(), Feeding: true,
			Downloaded: cnt["fetched"], Stored: cnt["stored"], Modified: cnt["modified"], Deleted: cnt["deleted"],
			Errors: errorTotal(cnt), Bytes: cnt["bytes"], Queued: cnt["queued"], InFlight: cnt["in_flight"],
			ActiveSites: cnt["active_sites"], ScreenTimeouts: cnt["screen_timeouts"], Idle: c.idle && cnt["queued"] == 0 && cnt["in_flight"] == 0}
		if ac := a.colls[c.name]; ac != nil {
			cs.Feeding = !ac.feedingOff[""]
			cs.RefreshOnly = ac.refreshOnly
			if ac.refreshOnly {
				cs.CrawlMode = "Refreshing(limit=user)"
			}
		}
		if s := a.tracker.Collection(c.name); s != nil {
			ds := a.dspec(c.name)
			cur := s.Current()
			f := statsFlatten(cur, unix(now), float64(ds.Refresh), ds.RefreshMode)
			cs.Cycle, cs.ProgressPercent, cs.ProgressText = f.Epoch, f.ProgressPercent, f.ProgressText
		}
		sites := a.sites[c.name]
		names := make([]string, 0, len(sites))
		for s := range sites {
			names = append(names, s)
		}
		sort.Strings(names)
		for _, s := range names {
			sc := sites[s]
			cs.Sites = append(cs.Sites, admin.SiteStatus{Site: s, Downloaded: sc["fetched"], Stored: sc["stored"],
				Modified: sc["modified"], Deleted: sc["deleted"], Errors: errorTotal(sc), Bytes: sc["bytes"]})
		}
		rep.Collections = append(rep.Collections, cs)
	}
	return rep, nil
}

// listenMessage is the line a process prints once its HTTP interface
// listens.
func listenMessage(cmd, addr string) string {
	return fmt.Sprintf("trawl %s: HTTP interface on %s (admin API /RPC2, status /status, metrics /metrics)\n", cmd, admin.ListenURL(addr))
}

// newRunAdmin builds the administration side of trawl run: the backend in
// the standalone role over the engine's multinode and node schedulers,
// mounted on the engine's HTTP interface.
func newRunAdmin(e *engine, o *runOptions, specs []*multinode.CollectionSpec) *adminHTTP {
	level := o.adm.level
	if level == nil {
		level = newAdminLevel(slog.LevelWarn)
	}
	// The collections added over the API before a restart join those of
	// --config (the saved copy wins; docs/decisions.md). The multinode
	// scheduler has not started yet, so its Collections may change here.
	dir := collectionsDir(o.data)
	specs = withSavedCollections(specs, dir, e.log)
	e.mns.Collections = specs
	b := newCrawlAdmin(admin.Standalone, e.mns, e.ns, level, e.log.With("role", "admin"))
	b.configs = o.configs
	b.collDir = dir
	cols := make([]*config.Collection, 0, len(specs))
	for _, s := range specs {
		cols = append(cols, s.Config)
	}
	b.known(cols)
	h := newAdminHTTP(b, o.adm)
	h.metrics.SetFeedBacklog(e.ns.FeedPending)
	h.mount(e.mux)
	return h
}

// announcedAdmin is the host and port a node scheduler announces for its
// admin interface (PKT_XMLRPCRT of CMD_UM_INIT), which
// CollectionGetSiteRoutingAddress and GetNodeSchedulerXmlRpcPorts report
// and the multinode scheduler calls: the listener's address when it is
// bound to one IP (a client can reach it there and nowhere else), the
// machine's host name when it listens on every address, and the host name
// with the base port when there is no listener.
func announcedAdmin(addr net.Addr, basePort int) (string, int32) {
	host, _ := os.Hostname()
	ta, ok := addr.(*net.TCPAddr)
	if !ok {
		return host, int32(basePort)
	}
	if ta.IP != nil && !ta.IP.IsUnspecified() {
		host = ta.IP.String()
	}
	return host, int32(ta.Port)
}

// serveAdmin serves the administration side of a role process (trawl
// multinode, trawl node) on addr until ctx ends; ready, if not nil, gets
// the address once it listens.
func serveAdmin(ctx context.Context, env *cmdEnv, cmd, addr string, h *adminHTTP, ready chan<- string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("HTTP interface: %w", err)
	}
	mux := http.NewServeMux()
	h.mount(mux)
	fmt.Fprint(env.stderr, listenMessage(cmd, ln.Addr().String()))
	if ready != nil {
		ready <- ln.Addr().String()
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
	}()
	go func() { _ = h.backend.run(ctx) }()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// adminAddr is the HTTP interface's address from --admin-listen (or
// --listen) and the base port: 127.0.0.1:<base> by default, "" for off.
func adminAddr(flagValue string, basePort int) string {
	switch flagValue {
	case "off":
		return ""
	case "":
		return fmt.Sprintf("127.0.0.1:%d", basePort)
	}
	return flagValue
}

// runNodeWithAdmin runs a node scheduler of a multinode setup with its HTTP
// interface on addr ("" for none); the admin port announced in CMD_UM_INIT
// is the one it listens on.
func runNodeWithAdmin(ctx context.Context, env *cmdEnv, cfg nodesched.Config, addr string, adm adminFlags, level *adminLevel, log *slog.Logger) error {
	if addr == "" {
		return nodesched.New(cfg).Run(ctx)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("HTTP interface: %w (choose another with --listen or --base-port, or --listen off)", err)
	}
	cfg.AdminHost, cfg.AdminPort = announcedAdmin(ln.Addr(), int(cfg.AdminPort))
	var h *adminHTTP
	cfg.Observe = func(c string, o *nodesched.Outcome) { h.observe(c, o) }
	ns := nodesched.New(cfg)
	h = newAdminHTTP(newCrawlAdmin(admin.NodeScheduler, nil, ns, level, log.With("role", "admin")), adm)
	h.metrics.SetFeedBacklog(ns.FeedPending)
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

// collectionsDir is the directory under --data where the collections added
// or updated over the admin API are kept, one MS-FSCCFG file each.
func collectionsDir(data string) string { return filepath.Join(data, "collections") }

// collectionFile is the file of collection name in dir; names that cannot
// be a file name are refused.
func collectionFile(dir, name string) (string, error) {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\\\x00") {
		return "", fmt.Errorf("collection name %q cannot name a file", name)
	}
	return filepath.Join(dir, name+".xml"), nil
}

// saveCollection writes c's configuration to dir/<name>.xml atomically (a
// temporary file synced and renamed over the old one).
func saveCollection(dir string, c *config.Collection) error {
	path, err := collectionFile(dir, c.Name)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := config.WriteCollections(&buf, []*config.Collection{c}); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".tmp-"+c.Name+"-*")
	if err != nil {
		return err
	}
	_, err = f.Write(buf.Bytes())
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return err
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// forgetCollection removes the saved copy of collection name, if any.
func forgetCollection(dir, name string) error {
	path, err := collectionFile(dir, name)
	if err != nil {
		return err
	}
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}

// savedCollections reads the collections kept in dir; a file that no
// longer parses is reported and skipped.
func savedCollections(dir string, log *slog.Logger) []*config.Collection {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if !os.IsNotExist(err) {
			log.Error("admin: cannot read the saved collections", "dir", dir, "err", err)
		}
		return nil
	}
	var out []*config.Collection
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".xml") {
			continue
		}
		path := filepath.Join(dir, name)
		cfg, err := config.ParseFile(path, nil)
		if err != nil {
			log.Error("admin: saved collection skipped", "file", path, "err", err)
			continue
		}
		out = append(out, cfg.Collections...)
	}
	return out
}

// withSavedCollections returns specs with the collections saved in dir:
// a saved collection replaces the --config one of the same name (it was
// added or updated over the API after the process read --config) and the
// others are appended.
func withSavedCollections(specs []*multinode.CollectionSpec, dir string, log *slog.Logger) []*multinode.CollectionSpec {
	out := append([]*multinode.CollectionSpec(nil), specs...)
	for _, c := range savedCollections(dir, log) {
		sp, err := multinode.NewCollectionSpec(c, nil)
		if err != nil {
			log.Error("admin: saved collection skipped", "collection", c.Name, "err", err)
			continue
		}
		replaced := false
		for i, s := range out {
			if s.Config.Name == c.Name {
				out[i], replaced = sp, true
				log.Info("admin: the collection saved over the API replaces the --config one", "collection", c.Name)
			}
		}
		if !replaced {
			out = append(out, sp)
			log.Info("admin: collection restored from the API's saved copy", "collection", c.Name)
		}
	}
	return out
}
