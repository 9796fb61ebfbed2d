package nodesched

import (
	"context"
	"net"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/cmt/cmtconfig"
	"github.com/trawl/trawl/internal/config"
	"github.com/trawl/trawl/internal/webfarm"
)

// fakeMNS is a multinode scheduler for tests: it answers DNS from the farm,
// grants every crawl IP, routes every site to one node and sends the
// collection in CMD_ADM_CONF_ADD after CMD_UM_INIT.
type fakeMNS struct {
	t      testing.TB
	farm   *webfarm.Farm
	node   string
	conf   cmt.CrawlConfig
	name   string
	mu     sync.Mutex
	routed map[string]bool
	conns  chan *cmt.Conn
	inits  int
	last   *cmt.Conn
	stats  []*cmt.UMStat
	logs   []*cmt.UMLog
}

func newFakeMNS(t testing.TB, farm *webfarm.Farm, node string, col *config.Collection) *fakeMNS {
	cc := cmt.CrawlConfig{Collections: []cmt.Collection{cmtconfig.CrawlConfig(col)}}
	return &fakeMNS{t: t, farm: farm, node: node, conf: cc, name: col.Name, routed: map[string]bool{}, conns: make(chan *cmt.Conn, 4)}
}

// dialer is the node's DialFunc: each call makes a new in-memory connection.
func (f *fakeMNS) dialer(ctx context.Context) DialFunc {
	return func(dctx context.Context) (*cmt.Conn, error) {
		a, b := cmt.Pipe(cmt.ConnConfig{Name: "node->mns", SendQueue: 1 << 16, RecvQueue: 1 << 14}, cmt.ConnConfig{Name: "mns->node", SendQueue: 1 << 16, RecvQueue: 1 << 14})
		go f.serve(ctx, b)
		return a, nil
	}
}

// serveListener accepts TCP connections (the `trawl node` tests).
func (f *fakeMNS) serveListener(ctx context.Context, ln net.Listener) {
	for {
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		go f.serve(ctx, cmt.NewConn(nc, cmt.ConnConfig{Name: "mns", SendQueue: 1 << 16}))
	}
}

func (f *fakeMNS) serve(ctx context.Context, c *cmt.Conn) {
	go func() { _ = c.Run(ctx) }()
	f.mu.Lock()
	f.last = c
	f.mu.Unlock()
	send := func(m cmt.Message) { _ = c.Send(ctx, m, cmt.DefaultPriority(m.Code())) }
	for fr := range c.Incoming() {
		switch x := fr.Message.(type) {
		case *cmt.UMInit:
			f.mu.Lock()
			f.inits++
			f.mu.Unlock()
			send(&cmt.AdmConfAdd{Collection: f.name, Config: f.conf})
		case *cmt.UMKeepalive:
			send(&cmt.UMKeepaliveAck{})
		case *cmt.UMDNSRequest:
			r := &cmt.UMDNSReply{Host: x.Site, Time: time.Now().Unix(), TTL: 86400}
			if a, ok := f.farm.Lookup(x.Site); ok {
				r.Addrs = []cmt.AddrInfo{{Family: 2, SockType: 1, IP: a.String()}}
			}
			send(r)
		case *cmt.UMStartCrawlIP:
			send(&cmt.UMStartCrawlIPReply{Collection: x.Collection, IP: x.IP, Site: x.Site, Allowed: true})
		case *cmt.UMURI:
			host := strings.ToLower(x.Entry.URI.Host)
			f.mu.Lock()
			first := !f.routed[host]
			f.routed[host] = true
			f.mu.Unlock()
			if first {
				send(&cmt.UMAddRoute{Collection: x.Collection, NodeID: f.node, RouteAttr: host, Site: host, TTL: 86400})
			}
			send(&cmt.UMURI{Collection: x.Collection, Entry: x.Entry})
		case *cmt.UMStat:
			f.mu.Lock()
			f.stats = append(f.stats, x)
			f.mu.Unlock()
		case *cmt.UMLog:
			f.mu.Lock()
			f.logs = append(f.logs, x)
			f.mu.Unlock()
		}
	}
}

func (f *fakeMNS) send(ctx context.Context, m cmt.Message) {
	f.mu.Lock()
	c := f.last
	f.mu.Unlock()
	if err := c.Send(ctx, m, cmt.DefaultPriority(m.Code())); err != nil {
		f.t.Fatal(err)
	}
}

// farmCollection parses the farm's crawl configuration.
func farmCollection(t testing.TB, farm *webfarm.Farm, crawl webfarm.Crawl, opt webfarm.XMLOptions) *config.Collection {
	var b strings.Builder
	if err := webfarm.WriteCrawlXML(&b, crawl, opt); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse("farm.xml", []byte(b.String()), nil)
	if err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	return cfg.Collections[0]
}

// waitIdle polls until the driver has been idle for a while.
func waitIdle(t testing.TB, d *Driver, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	var since time.Time
	for time.Now().Before(deadline) {
		if d.Idle() {
			if since.IsZero() {
				since = time.Now()
			} else if time.Since(since) > 500*time.Millisecond {
				return
			}
		} else {
			since = time.Time{}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("crawl not finished after %v: %v", limit, d.Stats())
}

func requestedURLs(farm *webfarm.Farm, cycle int) []string {
	set := map[string]bool{}
	for _, r := range farm.Requests() {
		if r.Cycle == cycle {
			set[r.URL] = true
		}
	}
	out := make([]string, 0, len(set))
	for u := range set {
		out = append(out, u)
	}
	sort.Strings(out)
	return out
}

func diffSets(want, got []string) (missing, extra []string) {
	w, g := map[string]bool{}, map[string]bool{}
	for _, u := range want {
		w[u] = true
	}
	for _, u := range got {
		g[u] = true
		if !w[u] {
			extra = append(extra, u)
		}
	}
	for _, u := range want {
		if !g[u] {
			missing = append(missing, u)
		}
	}
	return
}

// XMLOpts are the crawl configuration options of the tests.
func XMLOpts(delay float64, timeout int) webfarm.XMLOptions {
	return webfarm.XMLOptions{Collection: "farm", Delay: delay, FetchTimeout: timeout}
}
