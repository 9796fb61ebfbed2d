package multinode

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/marshal"
)

const waitTimeout = 15 * time.Second

// fakeNode is a node scheduler for tests: it registers, records every
// message and answers CMD_UM_ASK_ROUTE with its routes and
// CMD_UM_LAST_ROUTE.
type fakeNode struct {
	t      testing.TB
	id     string
	conn   *cmt.Conn
	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	msgs   []cmt.Message
	notify chan struct{}
	routes []cmt.Route
}

func newFakeNode(t testing.TB, c *cmt.Conn, id string, routes []cmt.Route) *fakeNode {
	ctx, cancel := context.WithCancel(context.Background())
	n := &fakeNode{t: t, id: id, conn: c, cancel: cancel, done: make(chan struct{}), notify: make(chan struct{}), routes: routes}
	go c.Run(ctx)
	go func() {
		defer close(n.done)
		for f := range c.Incoming() {
			if ar, ok := f.Message.(*cmt.UMAskRoute); ok {
				if len(n.routes) > 0 {
					n.send(&cmt.UMAddRouteReply{Collection: ar.Collection, Routes: n.routes})
				}
				n.send(&cmt.UMLastRoute{Collection: ar.Collection})
			}
			n.mu.Lock()
			n.msgs = append(n.msgs, f.Message)
			close(n.notify)
			n.notify = make(chan struct{})
			n.mu.Unlock()
		}
	}()
	t.Cleanup(n.close)
	n.send(&cmt.UMInit{NodeID: id, AdminHost: id + ".test", AdminPort: 10000})
	return n
}

func dialFakeNode(t testing.TB, addr, id string, routes []cmt.Route) *fakeNode {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	return newFakeNode(t, cmt.NewConn(nc, cmt.ConnConfig{Name: id}), id, routes)
}

func (n *fakeNode) close() {
	n.cancel()
	<-n.done
}

func (n *fakeNode) send(m cmt.Message) {
	if err := n.conn.Send(context.Background(), m, cmt.DefaultPriority(m.Code())); err != nil {
		n.t.Errorf("%s: send %s: %v", n.id, m.Code(), err)
	}
}

// wait returns the first message matching pred, waiting until it arrives.
func (n *fakeNode) wait(desc string, pred func(cmt.Message) bool) cmt.Message {
	n.t.Helper()
	deadline := time.NewTimer(waitTimeout)
	defer deadline.Stop()
	for {
		n.mu.Lock()
		for _, m := range n.msgs {
			if pred(m) {
				n.mu.Unlock()
				return m
			}
		}
		ch := n.notify
		n.mu.Unlock()
		select {
		case <-ch:
		case <-n.done:
			n.t.Fatalf("%s: connection ended while waiting for %s", n.id, desc)
		case <-deadline.C:
			n.t.Fatalf("%s: timed out waiting for %s; got %d messages", n.id, desc, len(n.all(func(cmt.Message) bool { return true })))
		}
	}
}

func (n *fakeNode) all(pred func(cmt.Message) bool) []cmt.Message {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []cmt.Message
	for _, m := range n.msgs {
		if pred(m) {
			out = append(out, m)
		}
	}
	return out
}

func isConfAdd(coll string) func(cmt.Message) bool {
	return func(m cmt.Message) bool {
		a, ok := m.(*cmt.AdmConfAdd)
		return ok && a.Collection == coll
	}
}

func isRoute(site string) func(cmt.Message) bool {
	return func(m cmt.Message) bool {
		r, ok := m.(*cmt.UMAddRoute)
		return ok && r.Site == site
	}
}

func isURI(uri string) func(cmt.Message) bool {
	return func(m cmt.Message) bool {
		u, ok := m.(*cmt.UMURI)
		return ok && u.Entry.URI.URI == uri
	}
}

func uriSite(m cmt.Message) string {
	if u, ok := m.(*cmt.UMURI); ok {
		return u.Entry.URI.Host
	}
	return ""
}

// runServer starts s and returns a function that stops it and checks
// that Run returned nil.
func runServer(t testing.TB, s *Server) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- s.Run(ctx) }()
	select {
	case <-s.Ready():
	case err := <-errc:
		cancel()
		t.Fatalf("server: %v", err)
	case <-time.After(waitTimeout):
		cancel()
		t.Fatal("server not ready")
	}
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-errc:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(waitTimeout):
			t.Error("server did not stop")
		}
	}
	t.Cleanup(stop)
	return stop
}

func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func writeHosts(t testing.TB, dir string, n int) string {
	var b strings.Builder
	b.WriteString("# test web\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "127.1.0.%d site%d.farm.test\n", i, i)
	}
	path := filepath.Join(dir, "hosts")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func newTestServer(t testing.TB, data, hosts string, specs ...*CollectionSpec) (*Server, func()) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{Listener: ln, Data: data, HostsFile: hosts, Logger: testLogger(t), Collections: specs, Tick: 20 * time.Millisecond}
	return s, runServer(t, s)
}

func TestServerOverTCP(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	hosts := writeHosts(t, dir, 30)
	spec := testSpec(t, "web", startURIs("http://site1.farm.test/"))
	srv, stop := newTestServer(t, data, hosts, spec)
	addr := srv.Addr().String()

	n1 := dialFakeNode(t, addr, "node-1", nil)
	n2 := dialFakeNode(t, addr, "node-2", nil)
	nodes := map[string]*fakeNode{"node-1": n1, "node-2": n2}
	for _, n := range nodes {
		add := n.wait("CONF_ADD", isConfAdd("web")).(*cmt.AdmConfAdd)
		if c, ok := add.Config.Collection("web"); !ok || len(c.Attribs) == 0 {
			t.Fatalf("CONF_ADD without the collection's configuration: %+v", add)
		}
	}

	// DNS through the hosts file.
	n1.send(&cmt.UMDNSRequest{Collection: "web", Site: "site2.farm.test"})
	r := n1.wait("DNS_REPLY", func(m cmt.Message) bool { _, ok := m.(*cmt.UMDNSReply); return ok }).(*cmt.UMDNSReply)
	if r.Collection != "" || r.Host != "site2.farm.test" || len(r.Addrs) != 1 || r.Addrs[0] != (cmt.AddrInfo{Family: 2, SockType: 1, IP: "127.1.0.2"}) || r.TTL != 86400 {
		t.Errorf("DNS reply = %+v", r)
	}

	// URIs for sites 2..20, from both nodes.
	for i := 2; i <= 20; i++ {
		from := n1
		if i%2 == 0 {
			from = n2
		}
		from.send(&cmt.UMURI{Collection: "web", Entry: entry(t, fmt.Sprintf("http://site%d.farm.test/p%d", i, i))})
	}
	owner := map[string]string{}
	// The start URI was routed when the first node registered, maybe
	// before the other one did: only the owner surely heard of it.
	ctx := context.Background()
	deadline := time.Now().Add(waitTimeout)
	for {
		node, _, ok, err := srv.Route(ctx, "web", "site1.farm.test")
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			owner["site1.farm.test"] = node
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("start URI not routed")
		}
		n1.send(&cmt.UMKeepalive{})
		n1.wait("ack", func(m cmt.Message) bool { _, ok := m.(*cmt.UMKeepaliveAck); return ok })
	}
	nodes[owner["site1.farm.test"]].wait("start URI", isURI("http://site1.farm.test/"))
	for i := 2; i <= 20; i++ {
		site := fmt.Sprintf("site%d.farm.test", i)
		var first string
		for id, n := range nodes {
			route := n.wait("ADD_ROUTE "+site, isRoute(site)).(*cmt.UMAddRoute)
			if len(route.Addrs) != 1 || route.Addrs[0].IP != fmt.Sprintf("127.1.0.%d", i) {
				t.Errorf("%s: route addresses %+v", id, route.Addrs)
			}
			if first == "" {
				first = route.NodeID
			} else if first != route.NodeID {
				t.Errorf("%s: nodes disagree on the route: %s, %s", site, first, route.NodeID)
			}
		}
		owner[site] = first
		uri := fmt.Sprintf("http://site%d.farm.test/p%d", i, i)
		nodes[first].wait("URI "+uri, isURI(uri))
	}
	// Sync each connection: the route of one more site is sent after every
	// earlier normal-priority message.
	nodes["node-1"].send(&cmt.UMURI{Collection: "web", Entry: entry(t, "http://site30.farm.test/")})
	for _, n := range nodes {
		n.wait("sync route", isRoute("site30.farm.test"))
	}
	counts := map[string]int{}
	for id, n := range nodes {
		for _, m := range n.all(func(m cmt.Message) bool { return uriSite(m) != "" && uriSite(m) != "site30.farm.test" }) {
			if o := owner[uriSite(m)]; o != id {
				t.Errorf("%s got an entry for %s, routed to %s", id, uriSite(m), o)
			}
			counts[id]++
		}
	}
	if counts["node-1"] == 0 || counts["node-2"] == 0 {
		t.Errorf("sites not spread over both nodes: %v", counts)
	}

	// Administrative operations from another goroutine.
	if err := srv.SuspendCollection(ctx, "web", cmt.StateSuspendedUser); err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		n.wait("CONF_SUSPEND", func(m cmt.Message) bool { s, ok := m.(*cmt.AdmConfSuspend); return ok && s.State == 4 })
	}
	n1.send(&cmt.UMStat{Collection: "web", Stats: marshal.Dict{{Key: marshal.Str("Downloaded"), Value: marshal.Int(5)}}})
	n2.send(&cmt.UMStat{Collection: "web", Stats: marshal.Dict{{Key: marshal.Str("Downloaded"), Value: marshal.Int(7)}}})
	n1.send(&cmt.UMLog{Collection: "web", File: cmt.LogFetch, Text: "200 http://site2.farm.test/p2"})
	deadline = time.Now().Add(waitTimeout)
	for {
		st, err := srv.Stats(ctx, "web")
		if err != nil {
			t.Fatal(err)
		}
		if v, ok := st.Get("Downloaded"); ok && v == marshal.Int(12) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("stats = %s", marshal.FormatPython(st))
		}
		n1.send(&cmt.UMKeepalive{})
		n1.wait("ack", func(m cmt.Message) bool { _, ok := m.(*cmt.UMKeepaliveAck); return ok })
	}
	logPath, _ := LogFilePath(data, "web", cmt.LogFetch)
	for {
		b, _ := os.ReadFile(logPath)
		if string(b) == "200 http://site2.farm.test/p2\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("log file holds %q", b)
		}
		if _, err := srv.Nodes(ctx); err != nil {
			t.Fatal(err)
		}
	}
	infos, err := srv.CollectionInfos(ctx)
	if err != nil || len(infos) != 1 || infos[0].Sites != 21 {
		t.Errorf("collections = %+v, %v", infos, err)
	}

	// Restart with the same data: the routes survive.
	stop()
	srv2, _ := newTestServer(t, data, hosts, spec)
	addr2 := srv2.Addr().String()
	m1 := dialFakeNode(t, addr2, "node-1", nil)
	m2 := dialFakeNode(t, addr2, "node-2", nil)
	again := map[string]*fakeNode{"node-1": m1, "node-2": m2}
	for _, n := range again {
		n.wait("CONF_ADD after restart", isConfAdd("web"))
		n.wait("ASK_ROUTE after restart", func(m cmt.Message) bool { _, ok := m.(*cmt.UMAskRoute); return ok })
	}
	for i := 2; i <= 20; i += 3 {
		site := fmt.Sprintf("site%d.farm.test", i)
		node, _, ok, err := srv2.Route(ctx, "web", site)
		if err != nil || !ok || node != owner[site] {
			t.Errorf("after restart %s routes to %q (%v, %v), want %s", site, node, ok, err, owner[site])
		}
		uri := fmt.Sprintf("http://%s/after", site)
		m1.send(&cmt.UMURI{Collection: "web", Entry: entry(t, uri)})
		again[owner[site]].wait("URI after restart "+uri, isURI(uri))
	}
	for _, n := range again {
		if rs := n.all(func(m cmt.Message) bool { r, ok := m.(*cmt.UMAddRoute); return ok && r.Site != "site1.farm.test" }); len(rs) != 0 {
			t.Errorf("routed sites announced again after the restart: %d", len(rs))
		}
	}
}

func TestServerRebuildsRoutesFromNodes(t *testing.T) {
	// A multinode scheduler whose routing database is gone learns the
	// routes back from the node schedulers (ASK_ROUTE / ADD_ROUTE /
	// LAST_ROUTE) and routes the sites as before.
	dir := t.TempDir()
	hosts := writeHosts(t, dir, 5)
	spec := testSpec(t, "web", `<attrib name="domain_clustering" type="boolean">yes</attrib>`)
	srv, _ := newTestServer(t, filepath.Join(dir, "fresh"), hosts, spec)
	addr := srv.Addr().String()
	n1 := dialFakeNode(t, addr, "node-1", []cmt.Route{{Attr: "farm.test", NodeID: "node-2"}})
	n2 := dialFakeNode(t, addr, "node-2", []cmt.Route{{Attr: "farm.test", NodeID: "node-2"}})
	n1.wait("CONF_ADD", isConfAdd("web"))
	n2.wait("CONF_ADD", isConfAdd("web"))
	n1.send(&cmt.UMURI{Collection: "web", Entry: entry(t, "http://site3.farm.test/x")})
	n2.wait("URI for the rebuilt route", isURI("http://site3.farm.test/x"))
	route := n1.wait("ADD_ROUTE", isRoute("site3.farm.test")).(*cmt.UMAddRoute)
	if route.NodeID != "node-2" || route.RouteAttr != "farm.test" {
		t.Errorf("route = %+v", route)
	}
}

func TestServerAttachInMemory(t *testing.T) {
	spec := testSpec(t, "mem", startURIs("http://127.0.0.1/"))
	s := &Server{Logger: testLogger(t), Collections: []*CollectionSpec{spec}}
	runServer(t, s)
	a, b := cmt.Pipe(cmt.ConnConfig{Name: "mns side"}, cmt.ConnConfig{Name: "node side"})
	if err := s.Attach(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	n := newFakeNode(t, b, "mem-node", nil)
	n.wait("CONF_ADD", isConfAdd("mem"))
	u := n.wait("start URI", isURI("http://127.0.0.1/")).(*cmt.UMURI)
	if u.Entry.Flags&cmt.URIFStartURI == 0 {
		t.Errorf("flags = %v", u.Entry.Flags)
	}
	nodes, err := s.Nodes(context.Background())
	if err != nil || len(nodes) != 1 || nodes[0].NodeID != "mem-node" {
		t.Errorf("nodes = %+v, %v", nodes, err)
	}
}

func TestServerFirstMessageRuleClosesConnection(t *testing.T) {
	s, _ := newTestServer(t, "", "", testSpec(t, "c", ""))
	nc, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	frame, err := cmt.EncodeFrame(&cmt.UMKeepalive{}, cmt.PriorityHigh)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := nc.Write(frame); err != nil {
		t.Fatal(err)
	}
	nc.SetReadDeadline(time.Now().Add(waitTimeout))
	buf := make([]byte, 64)
	n, err := nc.Read(buf)
	if err == nil {
		t.Fatalf("connection still open, read %d bytes", n)
	}
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("connection not closed")
	}
}

func TestServerStopsWhenNotRunning(t *testing.T) {
	s := &Server{}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := s.SuspendCollection(ctx, "x", 4); err == nil {
		t.Error("operation on a server that never ran succeeded")
	}
}
