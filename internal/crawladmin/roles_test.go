package crawladmin_test

// The backends of the multinode scheduler (mnsadmin) and of a node
// scheduler (nsadmin), each built in this process over a real crawl: a
// synthetic web on 127.x addresses, a multinode scheduler and a node
// scheduler joined by an in-memory MS-FSCMT connection, their stores in
// t.TempDir(). Every MS-FSCADM method is called over XML-RPC (suite_test.go).
// Test files may wire roles together; non-test packages may not
// (internal/lint).

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/admin"
	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/config"
	"github.com/trawl/trawl/internal/crawladmin"
	"github.com/trawl/trawl/internal/multinode"
	"github.com/trawl/trawl/internal/multinode/mnsadmin"
	"github.com/trawl/trawl/internal/nodesched"
	"github.com/trawl/trawl/internal/nodesched/crawlpipe"
	"github.com/trawl/trawl/internal/nodesched/nsadmin"
	"github.com/trawl/trawl/internal/webfarm"
)

// cluster is a multinode scheduler and one node scheduler crawling a
// synthetic web, with the node scheduler's admin API served on loopback.
type cluster struct {
	farm     *webfarm.Farm
	mns      *multinode.Server
	ns       *nodesched.Driver
	node     *crawladmin.Backend
	nodeURL  string
	dir      string
	files    string // the --admin-files directory, holding uris.txt
	xml      func(name string) string
	site     string // host:port of a site of the farm
	uri      string // its start page
	log      *slog.Logger
	ctx      context.Context
	wg       sync.WaitGroup
	configFn string // a configuration file of collection "web"
}

func newCluster(t *testing.T) *cluster {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	c := &cluster{dir: t.TempDir(), ctx: ctx, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if testing.Verbose() {
		c.log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	fc := webfarm.DefaultConfig(3, 2, 6)
	fc.Port = 0
	farm, err := webfarm.New(fc)
	if err != nil {
		t.Fatal(err)
	}
	if err := farm.Start(ctx); err != nil {
		t.Fatal(err)
	}
	c.farm = farm
	hosts := filepath.Join(c.dir, "hosts")
	must(t, os.WriteFile(hosts, farm.HostsFile(), 0o644))
	c.site = farm.Hosts()[0].Name + ":" + strconv.Itoa(farm.Port())
	c.uri = "http://" + c.site + "/"
	c.xml = func(name string) string {
		var x bytes.Buffer
		must(t, webfarm.WriteCrawlXML(&x, farm.DefaultCrawl(), webfarm.XMLOptions{Collection: name, FetchTimeout: 10}))
		return x.String()
	}
	c.configFn = filepath.Join(c.dir, "web.xml")
	must(t, os.WriteFile(c.configFn, []byte(c.xml("web")), 0o644))
	c.files = filepath.Join(c.dir, "files")
	must(t, os.MkdirAll(c.files, 0o755))
	must(t, os.WriteFile(filepath.Join(c.files, "uris.txt"), []byte(c.uri+"\n"), 0o644))

	specs, err := multinode.SpecsFromFiles([]string{c.configFn})
	must(t, err)
	c.mns = &multinode.Server{Data: filepath.Join(c.dir, "multinode"), HostsFile: hosts, Logger: c.log, Collections: specs}

	// The node scheduler's admin API listens before the node scheduler
	// starts, so that it announces its address in CMD_UM_INIT.
	var handler atomic.Pointer[http.Handler]
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h := handler.Load(); h != nil {
			(*h).ServeHTTP(w, r)
			return
		}
		http.Error(w, "starting", http.StatusServiceUnavailable)
	}))
	c.nodeURL = srv.URL
	host, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	p, _ := strconv.Atoi(port)
	var observe atomic.Pointer[func(string, *crawlpipe.Outcome)]
	c.ns = nodesched.New(nodesched.Config{NodeID: "node1", AdminHost: host, AdminPort: int32(p),
		DataDir: filepath.Join(c.dir, "node"), Workers: 4, Logger: c.log,
		MNS: func(ctx context.Context) (*cmt.Conn, error) {
			near, far := cmt.Pipe(cmt.ConnConfig{Name: "multinode", Logger: c.log}, cmt.ConnConfig{Name: "nodesched", Logger: c.log})
			c.wg.Add(1)
			go func() { defer c.wg.Done(); _ = c.mns.Attach(ctx, far) }()
			return near, nil
		},
		Observe: func(coll string, o *crawlpipe.Outcome) {
			if f := observe.Load(); f != nil {
				(*f)(coll, o)
			}
		},
	})
	c.node = nsadmin.New(c.ns, crawladmin.Options{Files: admin.URIFiles{Dir: c.files}, Logger: c.log})
	obs := nsadmin.Observe(c.node, nil)
	observe.Store(&obs)
	var h http.Handler = admin.NewServer(c.node, admin.ServerOptions{Logger: c.log})
	handler.Store(&h)
	for _, run := range []func(context.Context) error{c.mns.Run, c.ns.Run, c.node.Run} {
		c.wg.Add(1)
		go func() { defer c.wg.Done(); _ = run(ctx) }()
	}
	t.Cleanup(func() {
		cancel()
		c.wg.Wait()
		srv.Close()
		farm.Close()
	})
	// Wait until the node scheduler registered and crawled the start page.
	c.waitFor(t, "the node scheduler crawls", func() bool {
		st := c.ns.Stats()["web"]
		return st["fetched"] > 0
	})
	return c
}

func (c *cluster) waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// serve serves b's XML-RPC API on loopback and returns a client of it.
func serve(t *testing.T, b *crawladmin.Backend) *admin.Client {
	srv := httptest.NewServer(admin.NewServer(b, admin.ServerOptions{}))
	t.Cleanup(srv.Close)
	return admin.NewClient(srv.Listener.Addr().String(), nil)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestNodeSchedulerBackend(t *testing.T) {
	c := newCluster(t)
	runSuite(t, suite{c: c, cl: admin.NewClient(c.nodeURL[len("http://"):], nil), role: admin.NodeScheduler, b: c.node})
}

func TestMultinodeSchedulerBackend(t *testing.T) {
	c := newCluster(t)
	cols := []*config.Collection{}
	cfg, err := config.ParseFile(c.configFn, nil)
	must(t, err)
	cols = append(cols, cfg.Collections...)
	b := mnsadmin.New(&mnsadmin.Engine{MNS: c.mns}, cols, crawladmin.Options{
		Files: admin.URIFiles{Dir: c.files}, Configs: []string{c.configFn}, Logger: c.log})
	go func() { _ = b.Run(c.ctx) }()
	runSuite(t, suite{c: c, cl: serve(t, b), role: admin.MultinodeScheduler, b: b})
}

// refreshOnly reports whether the node scheduler's machine has coll in
// refresh-only mode.
func (c *cluster) refreshOnly(t *testing.T, coll string) bool {
	var on bool
	must(t, c.ns.Exec(c.ctx, func(m *nodesched.Machine, _ time.Time) error { on = m.RefreshOnly(coll); return nil }))
	return on
}
