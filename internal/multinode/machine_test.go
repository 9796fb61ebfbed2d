package multinode

import (
	"fmt"
	"log/slog"
	"net/netip"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/marshal"
)

func TestInitFirstMessageRule(t *testing.T) {
	spec := testSpec(t, "c1", "")
	tests := []struct {
		name  string
		first cmt.Message
		close bool
	}{
		{"keepalive first", &cmt.UMKeepalive{}, true},
		{"uri first", &cmt.UMURI{Collection: "c1", Entry: entry(t, "http://www.a.com/")}, true},
		{"dns request first", &cmt.UMDNSRequest{Collection: "c1", Site: "www.a.com"}, true},
		{"init without node id", &cmt.UMInit{}, true},
		{"init", &cmt.UMInit{NodeID: "n1", AdminHost: "h", AdminPort: 10000}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := New(Config{})
			if _, err := m.AddCollection(spec, t0); err != nil {
				t.Fatal(err)
			}
			m.Connect(7, t0)
			acts := m.Receive(7, tc.first, t0)
			closes := actionsOf[CloseConn](acts)
			if tc.close {
				if len(closes) != 1 || closes[0].Conn != 7 {
					t.Fatalf("want the connection closed, got %v", acts)
				}
				if len(sent(acts, 7)) != 0 {
					t.Errorf("a message was answered: %v", sent(acts, 7))
				}
				// Whatever follows on the closing connection is ignored,
				// even an INIT.
				if acts := m.Receive(7, &cmt.UMInit{NodeID: "late"}, t0); len(acts) != 0 {
					t.Errorf("message after close handled: %v", acts)
				}
				if len(m.Nodes()) != 0 {
					t.Errorf("nodes registered: %v", m.Nodes())
				}
				return
			}
			if len(closes) != 0 {
				t.Fatalf("connection closed: %v", closes)
			}
			got := codes(sent(acts, 7))
			want := []cmt.Command{cmt.CmdAdmConfAdd, cmt.CmdUMAskRoute}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("messages (-want +got):\n%s", diff)
			}
			add := sent(acts, 7)[0].(*cmt.AdmConfAdd)
			if add.Collection != "c1" || len(add.Config.Collections) != 1 || add.Config.Collections[0].Name != "c1" || add.Epoch != 1 {
				t.Errorf("CONF_ADD = %+v", add)
			}
			nodes := m.Nodes()
			if len(nodes) != 1 || nodes[0].NodeID != "n1" || nodes[0].AdminHost != "h" || nodes[0].AdminPort != 10000 {
				t.Errorf("nodes = %+v", nodes)
			}
		})
	}
}

func TestDuplicateInit(t *testing.T) {
	h := newHarness(t, Config{}, testSpec(t, "c1", ""), testSpec(t, "c2", ""))
	acts := h.join("n1", true)
	if got := codes(sent(acts, h.conn["n1"])); !cmp.Equal(got, []cmt.Command{cmt.CmdAdmConfAdd, cmt.CmdUMAskRoute, cmt.CmdAdmConfAdd, cmt.CmdUMAskRoute}) {
		t.Fatalf("registration messages = %v", got)
	}
	n1 := h.conn["n1"]
	// The same id on another connection: ignored, that connection closed.
	acts = h.join("n1", true)
	dup := h.conn["n1"]
	if c := actionsOf[CloseConn](acts); len(c) != 1 || c[0].Conn != dup {
		t.Fatalf("duplicate: %v", acts)
	}
	if len(sent(acts, dup)) != 0 {
		t.Errorf("duplicate got messages %v", sent(acts, dup))
	}
	h.m.Disconnect(dup, h.now)
	if nodes := h.m.Nodes(); len(nodes) != 1 || nodes[0].Conn != n1 {
		t.Fatalf("original registration lost: %+v", nodes)
	}
	// A second INIT on the registered connection: the id is registered,
	// so it is ignored and the connection closed.
	acts = h.m.Receive(n1, &cmt.UMInit{NodeID: "n1"}, h.now)
	if c := actionsOf[CloseConn](acts); len(c) != 1 || c[0].Conn != n1 {
		t.Fatalf("second INIT: %v", acts)
	}
	h.m.Disconnect(n1, h.now)
	if len(h.m.Nodes()) != 0 {
		t.Fatal("node still registered after disconnect")
	}
	// Registering again after the disconnect works; no second ASK_ROUTE.
	acts = h.join("n1", true)
	if got := codes(sent(acts, h.conn["n1"])); !cmp.Equal(got, []cmt.Command{cmt.CmdAdmConfAdd, cmt.CmdAdmConfAdd}) {
		t.Fatalf("re-registration messages = %v", got)
	}
	adds := sent(acts, h.conn["n1"])
	if e := adds[1].(*cmt.AdmConfAdd).Epoch; e != 2 {
		t.Errorf("epoch of c2's second CONF_ADD = %d, want 2", e)
	}
}

func TestKeepAlive(t *testing.T) {
	h := newHarness(t, Config{})
	h.join("n1", true)
	h.join("n2", true)
	// A keep-alive from a node is answered.
	if got := sent(h.recv("n1", &cmt.UMKeepalive{}), h.conn["n1"]); !cmp.Equal(codes(got), []cmt.Command{cmt.CmdUMKeepaliveAck}) {
		t.Fatalf("keep-alive answer = %v", codes(got))
	}
	h.now = t0.Add(119 * time.Second)
	if acts := h.m.Tick(h.now); len(acts) != 0 {
		t.Fatalf("timer fired early: %v", acts)
	}
	h.now = t0.Add(120 * time.Second)
	acts := h.m.Tick(h.now)
	for _, n := range []string{"n1", "n2"} {
		if got := codes(sent(acts, h.conn[n])); !cmp.Equal(got, []cmt.Command{cmt.CmdUMKeepalive}) {
			t.Errorf("%s got %v", n, got)
		}
	}
	if hasLog(acts, slog.LevelWarn, "multinode: node scheduler did not answer the last keep-alive") {
		t.Error("unanswered keep-alive logged on the first timeout")
	}
	h.recv("n1", &cmt.UMKeepaliveAck{})
	h.now = t0.Add(240 * time.Second)
	acts = h.m.Tick(h.now)
	var unanswered []any
	for _, l := range actionsOf[LogLine](acts) {
		if l.Msg == "multinode: node scheduler did not answer the last keep-alive" {
			unanswered = append(unanswered, l.Args[1])
		}
	}
	if !cmp.Equal(unanswered, []any{"n2"}) {
		t.Errorf("logged unanswered nodes %v, want [n2]", unanswered)
	}
}

func TestDNSCache(t *testing.T) {
	h := newHarness(t, Config{DNSTTL: 100 * time.Second, DNSNegativeTTL: 10 * time.Second})
	h.join("n1", true)
	h.join("n2", true)
	req := &cmt.UMDNSRequest{Collection: "example", Site: "www.contoso.com"}
	acts := h.recv("n1", req)
	if got := actionsOf[Lookup](acts); !cmp.Equal(got, []Lookup{{Host: "www.contoso.com"}}) {
		t.Fatalf("lookups = %v", got)
	}
	if acts := h.recv("n2", &cmt.UMDNSRequest{Collection: "example", Site: "WWW.Contoso.com"}); len(actionsOf[Lookup](acts)) != 0 {
		t.Fatalf("second lookup started for a name in flight: %v", acts)
	}
	h.now = t0.Add(time.Second)
	acts = h.m.DNSResult("www.contoso.com", addrs("207.46.197.32", "207.46.232.182"), nil, h.now)
	want := &cmt.UMDNSReply{Collection: "", Host: "www.contoso.com", Addrs: []cmt.AddrInfo{
		{Family: 2, SockType: 1, IP: "207.46.197.32"}, {Family: 2, SockType: 1, IP: "207.46.232.182"},
	}, Time: t0.Unix() + 1, TTL: 100}
	for _, n := range []string{"n1", "n2"} {
		got := sent(acts, h.conn[n])
		if len(got) != 1 {
			t.Fatalf("%s got %v", n, got)
		}
		if diff := cmp.Diff(want, got[0]); diff != "" {
			t.Errorf("%s reply (-want +got):\n%s", n, diff)
		}
	}
	// From the cache while fresh: the same resolution time, the time it
	// has left to live.
	h.now = t0.Add(61 * time.Second)
	acts = h.recv("n1", req)
	if len(actionsOf[Lookup](acts)) != 0 {
		t.Fatal("fresh entry resolved again")
	}
	cached := *want
	cached.TTL = 40
	if diff := cmp.Diff([]cmt.Message{&cached}, sent(acts, h.conn["n1"])); diff != "" {
		t.Errorf("cached reply (-want +got):\n%s", diff)
	}
	// Expired: resolved again.
	h.now = t0.Add(101 * time.Second)
	acts = h.recv("n1", req)
	if got := actionsOf[Lookup](acts); len(got) != 1 {
		t.Fatalf("expired entry not resolved again: %v", acts)
	}
	acts = h.m.DNSResult("www.contoso.com", nil, ErrNotFound, h.now)
	failed := &cmt.UMDNSReply{Host: "www.contoso.com", Time: h.now.Unix(), TTL: 10}
	if diff := cmp.Diff([]cmt.Message{failed}, sent(acts, h.conn["n1"])); diff != "" {
		t.Errorf("failed lookup reply (-want +got):\n%s", diff)
	}
	// An IP literal needs no lookup.
	acts = h.recv("n2", &cmt.UMDNSRequest{Site: "127.1.2.3"})
	if len(actionsOf[Lookup](acts)) != 0 || len(sent(acts, h.conn["n2"])) != 1 {
		t.Fatalf("IP literal: %v", acts)
	}
	if r := sent(acts, h.conn["n2"])[0].(*cmt.UMDNSReply); len(r.Addrs) != 1 || r.Addrs[0].IP != "127.1.2.3" {
		t.Errorf("IP literal reply %+v", r)
	}
	// A node that left does not get the reply.
	h.recv("n1", &cmt.UMDNSRequest{Site: "gone.example"})
	h.m.Disconnect(h.conn["n1"], h.now)
	if acts := h.m.DNSResult("gone.example", addrs("10.0.0.1"), nil, h.now); len(actionsOf[Send](acts)) != 0 {
		t.Errorf("reply sent to a gone node: %v", acts)
	}
}

func TestDNSCacheBounded(t *testing.T) {
	m := New(Config{DNSCacheSize: 4})
	for i := range 20 {
		m.DNSResult(fmt.Sprintf("h%d.example", i), addrs("10.0.0.1"), nil, t0)
	}
	if len(m.dns) != 4 {
		t.Fatalf("cache holds %d entries, want 4", len(m.dns))
	}
	if _, ok := m.dns["h19.example"]; !ok {
		t.Error("newest entry evicted")
	}
}

func TestRoutingBroadcastAndForward(t *testing.T) {
	h := newHarness(t, Config{}, testSpec(t, "c", ""))
	h.join("n1", true)
	h.join("n2", true)
	h.join("n3", true)
	e := entry(t, "http://www.contoso.com/a")
	acts := h.recv("n1", &cmt.UMURI{Collection: "c", Entry: e})
	if got := actionsOf[Lookup](acts); !cmp.Equal(got, []Lookup{{Host: "www.contoso.com"}}) {
		t.Fatalf("resolve before routing: %v", acts)
	}
	if len(actionsOf[Send](acts)) != 0 {
		t.Fatalf("sent before DNS: %v", acts)
	}
	acts = h.m.DNSResult("www.contoso.com", addrs("207.46.232.182", "207.46.197.32"), nil, h.now)
	pr := actionsOf[PersistRoute](acts)
	if len(pr) != 1 || pr[0].Attr != "www.contoso.com" || pr[0].Site != "www.contoso.com" || pr[0].Collection != "c" {
		t.Fatalf("persist = %v", pr)
	}
	owner := pr[0].NodeID
	// Persisting comes before any message.
	if _, first := acts[0].(PersistRoute); !first {
		t.Errorf("first action %T, want PersistRoute", acts[0])
	}
	wantRoute := &cmt.UMAddRoute{Collection: "c", NodeID: owner, RouteAttr: "www.contoso.com", Site: "www.contoso.com",
		Addrs: []cmt.AddrInfo{{Family: 2, SockType: 1, IP: "207.46.232.182"}, {Family: 2, SockType: 1, IP: "207.46.197.32"}}, TTL: 86400}
	for _, n := range []string{"n1", "n2", "n3"} {
		msgs := sent(acts, h.conn[n])
		want := []cmt.Message{wantRoute}
		if n == owner {
			want = append(want, &cmt.UMURI{Collection: "c", Entry: e})
		}
		if diff := cmp.Diff(want, msgs); diff != "" {
			t.Errorf("%s (-want +got):\n%s", n, diff)
		}
	}
	// The site is routed now: the next entry is only forwarded.
	e2 := entry(t, "http://www.contoso.com/b")
	acts = h.recv("n2", &cmt.UMURI{Collection: "c", Entry: e2})
	if len(actionsOf[PersistRoute](acts)) != 0 || len(actionsOf[Lookup](acts)) != 0 {
		t.Errorf("routed again: %v", acts)
	}
	if diff := cmp.Diff([]cmt.Message{&cmt.UMURI{Collection: "c", Entry: e2}}, sent(acts, h.conn[owner])); diff != "" {
		t.Errorf("forward (-want +got):\n%s", diff)
	}
	if node, attr, ok := h.m.Route("c", "www.contoso.com"); !ok || node != owner || attr != "www.contoso.com" {
		t.Errorf("Route = %s %s %v", node, attr, ok)
	}
	// A failed lookup still routes, without addresses.
	acts = h.resolveAll(h.recv("n1", &cmt.UMURI{Collection: "c", Entry: entry(t, "http://nowhere.example/")}), nil)
	routes := actionsOf[Send](acts)
	if len(routes) != 4 {
		t.Fatalf("failed lookup: %v", acts)
	}
	if r := routes[0].Message.(*cmt.UMAddRoute); r.Addrs != nil || r.TTL != int64(DefaultDNSNegativeTTL/time.Second) {
		t.Errorf("route after failed lookup = %+v", r)
	}
}

func TestSitesSpreadOverNodes(t *testing.T) {
	h := newHarness(t, Config{}, testSpec(t, "c", ""))
	for i := range 4 {
		h.join(fmt.Sprintf("n%d", i), true)
	}
	table := map[string][]netip.Addr{}
	count := map[string]int{}
	for i := range 200 {
		host := fmt.Sprintf("site%d.example", i)
		table[host] = addrs("127.0.0.1")
		acts := h.resolveAll(h.recv("n0", &cmt.UMURI{Collection: "c", Entry: entry(t, "http://"+host+"/")}), table)
		for _, p := range actionsOf[PersistRoute](acts) {
			count[p.NodeID]++
		}
	}
	for i := range 4 {
		if n := count[fmt.Sprintf("n%d", i)]; n < 25 {
			t.Errorf("node n%d got %d of 200 sites: %v", i, n, count)
		}
	}
}

func TestURIUrgGoesFirst(t *testing.T) {
	h := newHarness(t, Config{}, testSpec(t, "c", ""))
	h.join("n1", true)
	// Entries waiting for the same host's DNS: the urgent one is forwarded
	// first, and as CMD_UM_URI_URG.
	a, b, c := entry(t, "http://x.example/a"), entry(t, "http://x.example/b"), entry(t, "http://x.example/c")
	h.recv("n1", &cmt.UMURI{Collection: "c", Entry: a})
	h.recv("n1", &cmt.UMURI{Collection: "c", Entry: b})
	h.recv("n1", &cmt.UMURIUrg{Collection: "c", Entry: c})
	acts := h.m.DNSResult("x.example", addrs("127.0.0.1"), nil, h.now)
	want := []cmt.Message{
		&cmt.UMURIUrg{Collection: "c", Entry: c},
		&cmt.UMURI{Collection: "c", Entry: a},
		&cmt.UMURI{Collection: "c", Entry: b},
	}
	got := sent(acts, h.conn["n1"])[1:] // after the ADD_ROUTE
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
	// Entries for a node that is away wait for it; urgent first again.
	h.m.RestoreRoute("c", "y.example", "n2", "y.example")
	d, e := entry(t, "http://y.example/d"), entry(t, "http://y.example/e")
	h.recv("n1", &cmt.UMURI{Collection: "c", Entry: d})
	h.recv("n1", &cmt.UMURIUrg{Collection: "c", Entry: e})
	if ci, _ := h.m.Collection("c"); ci.Waiting != 2 {
		t.Fatalf("waiting = %d", ci.Waiting)
	}
	acts = h.join("n2", true)
	var uris []cmt.Message
	for _, msg := range sent(acts, h.conn["n2"]) {
		switch msg.(type) {
		case *cmt.UMURI, *cmt.UMURIUrg:
			uris = append(uris, msg)
		}
	}
	want = []cmt.Message{&cmt.UMURIUrg{Collection: "c", Entry: e}, &cmt.UMURI{Collection: "c", Entry: d}}
	if diff := cmp.Diff(want, uris); diff != "" {
		t.Errorf("after registration (-want +got):\n%s", diff)
	}
}

func TestStartURIsQueuedUntilANodeRegisters(t *testing.T) {
	spec := testSpec(t, "c", startURIs("http://www.a.com/", "http://www.b.com/x"))
	m := New(Config{SkipAskRoute: true})
	acts, err := m.AddCollection(spec, t0)
	if err != nil {
		t.Fatal(err)
	}
	if len(acts) == 0 {
		t.Error("no action")
	}
	if _, err := StartEntry("mailto:x@y"); err == nil {
		t.Error("StartEntry accepted mailto:")
	}
	if ci, _ := m.Collection("c"); ci.Queued != 2 || ci.Counts.StartURIs != 2 {
		t.Fatalf("queued = %+v", ci)
	}
	h := &harness{t: t, m: m, now: t0, conn: map[string]ConnID{}}
	acts = h.join("n1", false)
	if got := actionsOf[Lookup](acts); !cmp.Equal(got, []Lookup{{"www.a.com"}, {"www.b.com"}}) {
		t.Fatalf("lookups = %v", got)
	}
	acts = h.resolveAll(acts, map[string][]netip.Addr{"www.a.com": addrs("127.0.0.2"), "www.b.com": addrs("127.0.0.3")})
	var got []string
	for _, msg := range sent(acts, h.conn["n1"]) {
		if u, ok := msg.(*cmt.UMURI); ok {
			got = append(got, u.Entry.URI.URI)
			if u.Entry.Flags&cmt.URIFStartURI == 0 {
				t.Errorf("%s lacks URIF_STARTURI", u.Entry.URI.URI)
			}
		}
	}
	if !cmp.Equal(got, []string{"http://www.a.com/", "http://www.b.com/x"}) {
		t.Errorf("forwarded %v", got)
	}
}

func TestAddCollectionRelaysToAllNodes(t *testing.T) {
	h := newHarness(t, Config{})
	h.join("n1", true)
	h.join("n2", true)
	spec := testSpec(t, "new", startURIs("http://www.a.com/"))
	acts, err := h.m.AddCollection(spec, h.now)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"n1", "n2"} {
		got := sent(acts, h.conn[n])
		if len(got) != 1 {
			t.Fatalf("%s got %v", n, codes(got))
		}
		add := got[0].(*cmt.AdmConfAdd)
		if diff := cmp.Diff(cmt.CrawlConfig{Collections: []cmt.Collection{spec.Dict}}, add.Config); diff != "" {
			t.Errorf("dspec (-want +got):\n%s", diff)
		}
	}
	if _, err := h.m.AddCollection(spec, h.now); err == nil {
		t.Error("adding a collection twice succeeded")
	}
	if got := actionsOf[Lookup](acts); len(got) != 1 {
		t.Errorf("start URI not queued: %v", acts)
	}
	// Update: CONF_UPDATE to all with a new epoch.
	acts, err = h.m.UpdateCollection(spec, h.now)
	if err != nil {
		t.Fatal(err)
	}
	if got := sent(acts, h.conn["n2"]); len(got) != 1 || got[0].(*cmt.AdmConfUpdate).Epoch != 4 {
		t.Errorf("update = %v", got)
	}
}

func TestCrawlIP(t *testing.T) {
	h := newHarness(t, Config{}, testSpec(t, "c", ""))
	h.join("n1", true)
	h.join("n2", true)
	ask := func(node, ip, site string) bool {
		t.Helper()
		acts := h.recv(node, &cmt.UMStartCrawlIP{Collection: "c", IP: ip, Site: site, StoreID: 3})
		msgs := sent(acts, h.conn[node])
		if len(msgs) != 1 {
			t.Fatalf("answer = %v", msgs)
		}
		r := msgs[0].(*cmt.UMStartCrawlIPReply)
		want := &cmt.UMStartCrawlIPReply{Collection: "c", IP: ip, Site: site, StoreID: 3, Allowed: r.Allowed}
		if diff := cmp.Diff(want, r); diff != "" {
			t.Errorf("reply does not echo the request (-want +got):\n%s", diff)
		}
		return r.Allowed
	}
	steps := []struct {
		node, op, ip, site string
		allowed            bool
	}{
		{"n1", "start", "10.0.0.1", "a.example", true},
		{"n2", "start", "10.0.0.1", "b.example", false},
		{"n1", "start", "10.0.0.1", "c.example", true},
		{"n1", "start", "10.0.0.1", "a.example", true},
		{"n2", "start", "10.0.0.2", "d.example", true},
		{"n2", "stop", "10.0.0.1", "b.example", false}, // not its record: ignored
		{"n1", "stop", "10.0.0.1", "a.example", false},
		{"n2", "start", "10.0.0.1", "b.example", false}, // c.example still crawls it
		{"n1", "stop", "10.0.0.1", "c.example", false},
		{"n2", "start", "10.0.0.1", "b.example", true},
		{"n1", "start", "10.0.0.1", "a.example", false},
	}
	for i, s := range steps {
		if s.op == "stop" {
			if acts := h.recv(s.node, &cmt.UMStopCrawlIP{Collection: "c", IP: s.ip, Site: s.site}); len(actionsOf[Send](acts)) != 0 {
				t.Errorf("step %d: stop answered", i)
			}
			continue
		}
		if got := ask(s.node, s.ip, s.site); got != s.allowed {
			t.Errorf("step %d: %s start %s %s = %v, want %v", i, s.node, s.ip, s.site, got, s.allowed)
		}
	}
	// A node that disconnects releases its addresses.
	h.m.Disconnect(h.conn["n2"], h.now)
	if !ask("n1", "10.0.0.1", "a.example") || !ask("n1", "10.0.0.2", "e.example") {
		t.Error("addresses of a disconnected node not released")
	}
}

func TestDomainClustering(t *testing.T) {
	for _, clustering := range []bool{true, false} {
		t.Run(fmt.Sprint("domain_clustering=", clustering), func(t *testing.T) {
			v := "no"
			if clustering {
				v = "yes"
			}
			h := newHarness(t, Config{}, testSpec(t, "c", `<attrib name="domain_clustering" type="boolean">`+v+`</attrib>`))
			for i := range 5 {
				h.join(fmt.Sprintf("n%d", i), true)
			}
			split := 0
			for i := range 30 {
				owner := map[string]string{}
				for _, host := range []string{"www", "b", "x.y"} {
					site := fmt.Sprintf("%s.d%d.co.uk", host, i)
					acts := h.resolveAll(h.recv("n0", &cmt.UMURI{Collection: "c", Entry: entry(t, "http://"+site+"/")}), map[string][]netip.Addr{site: addrs("127.0.0.1")})
					pr := actionsOf[PersistRoute](acts)
					if len(pr) != 1 {
						t.Fatalf("%s: %v", site, pr)
					}
					wantAttr := site
					if clustering {
						wantAttr = fmt.Sprintf("d%d.co.uk", i)
					}
					if pr[0].Attr != wantAttr {
						t.Errorf("%s: attr %q, want %q", site, pr[0].Attr, wantAttr)
					}
					owner[pr[0].NodeID] = site
				}
				if len(owner) > 1 {
					split++
				}
			}
			if clustering && split != 0 {
				t.Errorf("%d domains split over nodes", split)
			}
			if !clustering && split == 0 {
				t.Error("without clustering no domain was split: routing ignores the host")
			}
		})
	}
}

func TestSiteClusters(t *testing.T) {
	spec := testSpec(t, "c", `<section name="site_clusters">
		<attrib name="mycluster" type="list-string"><member> site1.contoso.com </member><member>site2.fabrikam.com</member><member>example.org</member></attrib>
	</section>`)
	h := newHarness(t, Config{}, spec)
	for i := range 6 {
		h.join(fmt.Sprintf("n%d", i), true)
	}
	owners := map[string]bool{}
	for _, site := range []string{"site2.fabrikam.com", "site1.contoso.com", "www.example.org", "deep.www.example.org"} {
		acts := h.resolveAll(h.recv("n0", &cmt.UMURI{Collection: "c", Entry: entry(t, "http://"+site+"/")}), map[string][]netip.Addr{site: addrs("127.0.0.1")})
		pr := actionsOf[PersistRoute](acts)
		if len(pr) != 1 || pr[0].Attr != "site1.contoso.com" {
			t.Fatalf("%s: %v", site, pr)
		}
		owners[pr[0].NodeID] = true
	}
	if len(owners) != 1 {
		t.Errorf("cluster split over %v", owners)
	}
}

func TestNodeElementRestrictsRouting(t *testing.T) {
	spec := testSpec(t, "c", `<Node name="n1"><section name="include_domains"><attrib name="suffix" type="list-string"><member>.a.com</member></attrib></section></Node>`)
	h := newHarness(t, Config{}, spec)
	h.join("n1", true)
	h.join("n2", true)
	got := map[string]int{}
	for i := range 40 {
		for _, dom := range []string{"a.com", "b.com"} {
			site := fmt.Sprintf("h%d.%s", i, dom)
			acts := h.resolveAll(h.recv("n1", &cmt.UMURI{Collection: "c", Entry: entry(t, "http://"+site+"/")}), map[string][]netip.Addr{site: addrs("127.0.0.1")})
			for _, p := range actionsOf[PersistRoute](acts) {
				got[dom+" "+p.NodeID]++
			}
		}
	}
	if got["b.com n1"] != 0 || got["b.com n2"] != 40 {
		t.Errorf("b.com sites reached n1, whose Node element excludes them: %v", got)
	}
	if got["a.com n1"] == 0 || got["a.com n2"] == 0 {
		t.Errorf("a.com sites not spread over both nodes: %v", got)
	}
}

func TestConfState(t *testing.T) {
	h := newHarness(t, Config{}, testSpec(t, "c", ""))
	h.join("n1", true)
	state := func(coll string) cmt.CollectionState {
		msgs := sent(h.recv("n1", &cmt.UMConfStateRequest{Collection: coll}), h.conn["n1"])
		if len(msgs) != 1 {
			t.Fatalf("answer %v", msgs)
		}
		r := msgs[0].(*cmt.UMConfState)
		if r.Collection != coll {
			t.Errorf("answer for %q", r.Collection)
		}
		return r.State
	}
	if s := state("c"); s != cmt.StateActive {
		t.Errorf("state = %v", s)
	}
	acts, err := h.m.SuspendCollection("c", cmt.StateSuspendedUser)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]cmt.Message{&cmt.AdmConfSuspend{Collection: "c", State: 4}}, sent(acts, h.conn["n1"])); diff != "" {
		t.Errorf("suspend (-want +got):\n%s", diff)
	}
	if s := state("c"); s != cmt.StateSuspendedUser {
		t.Errorf("state = %v", s)
	}
	if _, err := h.m.SuspendCollection("c", cmt.StateActive); err == nil {
		t.Error("suspend to state 1 accepted")
	}
	// A node registering now hears that the collection is suspended.
	acts = h.join("n2", true)
	if got := codes(sent(acts, h.conn["n2"])); !cmp.Equal(got[:2], []cmt.Command{cmt.CmdAdmConfAdd, cmt.CmdAdmConfSuspend}) {
		t.Errorf("registration = %v", got)
	}
	if _, err := h.m.ResumeCollection("c"); err != nil {
		t.Fatal(err)
	}
	if s := state("c"); s != cmt.StateActive {
		t.Errorf("state = %v", s)
	}
	if s := state("unknown"); s != cmt.StateRemoving {
		t.Errorf("unknown collection state = %v", s)
	}
}

func TestAskRouteRebuild(t *testing.T) {
	h := newHarness(t, Config{RebuildTimeout: 30 * time.Second}, testSpec(t, "c", ""))
	acts := h.join("n1", false)
	if got := codes(sent(acts, h.conn["n1"])); !cmp.Equal(got, []cmt.Command{cmt.CmdAdmConfAdd, cmt.CmdUMAskRoute}) {
		t.Fatalf("registration = %v", got)
	}
	if ci, _ := h.m.Collection("c"); !ci.Rebuilding {
		t.Fatal("not rebuilding")
	}
	// An unrouted site waits for the routes: no lookup, nothing sent.
	eNew := entry(t, "http://new.example/")
	if acts := h.recv("n1", &cmt.UMURI{Collection: "c", Entry: eNew}); len(acts) != 0 {
		t.Fatalf("unrouted site handled while rebuilding: %v", acts)
	}
	// Routes arrive: adopted and persisted.
	acts = h.recv("n1", &cmt.UMAddRouteReply{Collection: "c", Routes: []cmt.Route{{Attr: "known.example", NodeID: "n1"}, {Attr: "other.example", NodeID: "n2"}}})
	want := []PersistRoute{{Collection: "c", Attr: "known.example", NodeID: "n1", Site: "known.example"}, {Collection: "c", Attr: "other.example", NodeID: "n2", Site: "other.example"}}
	if diff := cmp.Diff(want, actionsOf[PersistRoute](acts)); diff != "" {
		t.Errorf("persist (-want +got):\n%s", diff)
	}
	// A contradicting route keeps the database's.
	acts = h.recv("n1", &cmt.UMAddRouteReply{Collection: "c", Routes: []cmt.Route{{Attr: "known.example", NodeID: "n9"}}})
	if len(actionsOf[PersistRoute](acts)) != 0 || !hasLog(acts, slog.LevelWarn, "multinode: node scheduler reports a route that differs from the routing database; keeping the database's") {
		t.Errorf("conflict: %v", acts)
	}
	// A reported site is routed while rebuilding, without a new
	// announcement.
	eKnown := entry(t, "http://known.example/")
	acts = h.recv("n1", &cmt.UMURI{Collection: "c", Entry: eKnown})
	if diff := cmp.Diff([]cmt.Message{&cmt.UMURI{Collection: "c", Entry: eKnown}}, sent(acts, h.conn["n1"])); diff != "" {
		t.Fatalf("known site (-want +got):\n%s", diff)
	}
	// LAST_ROUTE resumes normal routing: the waiting site is resolved.
	acts = h.recv("n1", &cmt.UMLastRoute{Collection: "c"})
	if got := actionsOf[Lookup](acts); !cmp.Equal(got, []Lookup{{"new.example"}}) {
		t.Fatalf("after LAST_ROUTE: %v", acts)
	}
	acts = h.resolveAll(acts, map[string][]netip.Addr{"new.example": addrs("127.0.0.6")})
	if msgs := sent(acts, h.conn["n1"]); len(msgs) != 2 {
		t.Errorf("new site after LAST_ROUTE: %v", codes(msgs))
	}

	// A node that never answers: the wait ends at the deadline.
	h2 := newHarness(t, Config{RebuildTimeout: 30 * time.Second}, testSpec(t, "c", ""))
	h2.join("n1", false)
	h2.recv("n1", &cmt.UMURI{Collection: "c", Entry: eNew})
	h2.now = t0.Add(29 * time.Second)
	if acts := h2.m.Tick(h2.now); len(actionsOf[Lookup](acts)) != 0 {
		t.Fatal("wait ended early")
	}
	h2.now = t0.Add(30 * time.Second)
	if acts := h2.m.Tick(h2.now); !cmp.Equal(actionsOf[Lookup](acts), []Lookup{{"new.example"}}) {
		t.Fatalf("wait did not end at the deadline: %v", acts)
	}
	// A node that disconnects while awaited stops the wait as well.
	h3 := newHarness(t, Config{}, testSpec(t, "c", ""))
	h3.join("n1", true)
	h3.join("n2", false)
	h3.recv("n1", &cmt.UMURI{Collection: "c", Entry: eNew})
	if acts := h3.m.Disconnect(h3.conn["n2"], h3.now); !cmp.Equal(actionsOf[Lookup](acts), []Lookup{{"new.example"}}) {
		t.Fatalf("disconnect did not end the wait: %v", acts)
	}
}

func TestRebuildFromHostRoutesWithDomainClustering(t *testing.T) {
	// trawl's node scheduler answers ASK_ROUTE with (host, node): the host
	// and its registered domain both follow the reported node.
	h := newHarness(t, Config{}, testSpec(t, "c", `<attrib name="domain_clustering" type="boolean">yes</attrib>`))
	h.join("n1", true)
	h.join("n2", true)
	h.join("n3", false)
	acts := h.recv("n3", &cmt.UMAddRouteReply{Collection: "c", Routes: []cmt.Route{{Attr: "www.a.com", NodeID: "n3"}}})
	want := []PersistRoute{{Collection: "c", Attr: "www.a.com", NodeID: "n3", Site: "www.a.com"}, {Collection: "c", Attr: "a.com", NodeID: "n3"}}
	if diff := cmp.Diff(want, actionsOf[PersistRoute](acts)); diff != "" {
		t.Errorf("persist (-want +got):\n%s", diff)
	}
	h.recv("n3", &cmt.UMLastRoute{Collection: "c"})
	for _, site := range []string{"www.a.com", "img.a.com"} {
		e := entry(t, "http://"+site+"/")
		acts := h.resolveAll(h.recv("n1", &cmt.UMURI{Collection: "c", Entry: e}), map[string][]netip.Addr{site: addrs("127.0.0.1")})
		if got := sent(acts, h.conn["n3"]); len(got) == 0 || !cmp.Equal(got[len(got)-1], cmt.Message(&cmt.UMURI{Collection: "c", Entry: e})) {
			t.Errorf("%s not forwarded to n3: %v", site, codes(got))
		}
	}
}

func TestRestoredRoutesAreUsed(t *testing.T) {
	m := New(Config{})
	m.RestoreRoute("c", "a.com", "n2", "")
	m.RestoreRoute("c", "a.com", "", "www.a.com")
	h := &harness{t: t, m: m, now: t0, conn: map[string]ConnID{}}
	if _, err := m.AddCollection(testSpec(t, "c", `<attrib name="domain_clustering" type="boolean">yes</attrib>`), t0); err != nil {
		t.Fatal(err)
	}
	h.join("n1", true)
	h.join("n2", true)
	e := entry(t, "http://www.a.com/x")
	acts := h.recv("n1", &cmt.UMURI{Collection: "c", Entry: e})
	if diff := cmp.Diff([]cmt.Message{&cmt.UMURI{Collection: "c", Entry: e}}, sent(acts, h.conn["n2"])); diff != "" {
		t.Errorf("restored site (-want +got):\n%s", diff)
	}
	// A new site of the restored domain goes to the same node.
	acts = h.resolveAll(h.recv("n1", &cmt.UMURI{Collection: "c", Entry: entry(t, "http://img.a.com/")}), map[string][]netip.Addr{"img.a.com": addrs("127.0.0.9")})
	if pr := actionsOf[PersistRoute](acts); len(pr) != 1 || pr[0].NodeID != "n2" || pr[0].Attr != "a.com" {
		t.Errorf("new site of a routed domain: %v", pr)
	}
}

func TestStatsSum(t *testing.T) {
	h := newHarness(t, Config{}, testSpec(t, "c", ""))
	h.join("n1", true)
	h.join("n2", true)
	s := func(k string) marshal.Value { return marshal.Str(k) }
	h.recv("n1", &cmt.UMStat{Collection: "c", Stats: marshal.Dict{
		{Key: s("ActiveSites"), Value: marshal.Int(3)},
		{Key: s("Downloaded"), Value: marshal.Float(1.5)},
		{Key: s("Mode"), Value: s("a")},
		{Key: s("Nested"), Value: marshal.Dict{{Key: marshal.Int(200), Value: marshal.Int(7)}}},
	}})
	h.recv("n2", &cmt.UMStat{Collection: "c", Stats: marshal.Dict{
		{Key: s("ActiveSites"), Value: marshal.Int(4)},
		{Key: s("Downloaded"), Value: marshal.Int(2)},
		{Key: s("Mode"), Value: s("b")},
		{Key: s("Nested"), Value: marshal.Dict{{Key: marshal.Int(200), Value: marshal.Int(1)}, {Key: marshal.Int(404), Value: marshal.Int(2)}}},
		{Key: s("Stored"), Value: marshal.Float(0.25)},
	}})
	h.recv("n1", &cmt.UMStat{Collection: "unknown", Stats: marshal.Dict{{Key: s("ActiveSites"), Value: marshal.Int(100)}}})
	got, ok := h.m.Stats("c")
	if !ok {
		t.Fatal("no stats")
	}
	want := marshal.Dict{
		{Key: s("ActiveSites"), Value: marshal.Int(7)},
		{Key: s("Downloaded"), Value: marshal.Float(3.5)},
		{Key: s("Mode"), Value: s("b")},
		{Key: s("Nested"), Value: marshal.Dict{{Key: marshal.Int(200), Value: marshal.Int(8)}, {Key: marshal.Int(404), Value: marshal.Int(2)}}},
		{Key: s("Stored"), Value: marshal.Float(0.25)},
	}
	if !marshal.Equal(want, got) {
		t.Errorf("stats = %s, want %s", marshal.FormatPython(got), marshal.FormatPython(want))
	}
	// The copy is independent of the machine.
	got[0].Value = marshal.Int(0)
	again, _ := h.m.Stats("c")
	if !marshal.Equal(want, again) {
		t.Error("Stats returned shared storage")
	}
}

func TestRemoveCollectionWaitsForDeleteOK(t *testing.T) {
	h := newHarness(t, Config{}, testSpec(t, "c", ""), testSpec(t, "keep", ""))
	h.join("n1", true)
	h.join("n2", true)
	h.m.RestoreRoute("c", "a.example", "n3", "") // a node that is away holds sites
	acts, err := h.m.RemoveCollection("c", h.now)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"n1", "n2"} {
		if diff := cmp.Diff([]cmt.Message{&cmt.AdmConfRemove{Collection: "c"}}, sent(acts, h.conn[n])); diff != "" {
			t.Errorf("%s (-want +got):\n%s", n, diff)
		}
	}
	if _, err := h.m.SuspendCollection("c", cmt.StateSuspendedUser); err == nil {
		t.Error("operation on a collection being removed accepted")
	}
	if acts := h.recv("n1", &cmt.UMDeleteOK{Collection: "c"}); len(actionsOf[DropRoutes](acts)) != 0 {
		t.Fatal("removed before every node confirmed")
	}
	if msgs := sent(h.recv("n1", &cmt.UMConfStateRequest{Collection: "c"}), h.conn["n1"]); msgs[0].(*cmt.UMConfState).State != cmt.StateRemoving {
		t.Errorf("state while removing = %v", msgs[0])
	}
	h.recv("n2", &cmt.UMDeleteOK{Collection: "c"})
	// n3 registers: it gets CONF_REMOVE instead of CONF_ADD.
	acts = h.join("n3", true)
	if got := codes(sent(acts, h.conn["n3"])); !cmp.Equal(got, []cmt.Command{cmt.CmdAdmConfRemove, cmt.CmdAdmConfAdd, cmt.CmdUMAskRoute}) {
		t.Errorf("n3 registration = %v", got)
	}
	acts = h.recv("n3", &cmt.UMDeleteOK{Collection: "c"})
	if diff := cmp.Diff([]DropRoutes{{Collection: "c"}}, actionsOf[DropRoutes](acts)); diff != "" {
		t.Errorf("drop (-want +got):\n%s", diff)
	}
	if _, ok := h.m.Collection("c"); ok {
		t.Error("collection still there")
	}
	if _, _, ok := h.m.Route("c", "a.example"); ok {
		t.Error("routes kept")
	}
	if _, ok := h.m.Collection("keep"); !ok {
		t.Error("other collection removed")
	}
}

func TestSiteOperations(t *testing.T) {
	h := newHarness(t, Config{}, testSpec(t, "c", ""))
	h.join("n1", true)
	h.join("n2", true)
	h.m.RestoreRoute("c", "a.example", "n2", "a.example")
	h.m.RestoreRoute("c", "off.example", "n9", "off.example")
	tests := []struct {
		name string
		op   func() ([]Action, error)
		want map[string][]cmt.Message
		err  error
	}{
		{"preempt routed", func() ([]Action, error) { return h.m.PreemptSite("c", "a.example", true) },
			map[string][]cmt.Message{"n2": {&cmt.AdmPreemptSite{Collection: "c", Site: "a.example", Requeue: true}}}, nil},
		{"quarantine requeue", func() ([]Action, error) { return h.m.QuarantineSite("c", "a.example:8080", time.Minute, true) },
			map[string][]cmt.Message{"n2": {&cmt.UMQuarantineSiteRequeue{Collection: "c", Site: "a.example:8080", Seconds: 60}}}, nil},
		{"quarantine", func() ([]Action, error) { return h.m.QuarantineSite("c", "a.example", 5*time.Second, false) },
			map[string][]cmt.Message{"n2": {&cmt.UMQuarantineSite{Collection: "c", Site: "a.example", Seconds: 5}}}, nil},
		{"delete unrouted site goes to all", func() ([]Action, error) { return h.m.DeleteSite("c", "z.example") },
			map[string][]cmt.Message{"n1": {&cmt.UMDeleteSite{Collection: "c", Site: "z.example"}}, "n2": {&cmt.UMDeleteSite{Collection: "c", Site: "z.example"}}}, nil},
		{"reprocess", func() ([]Action, error) { return h.m.ReprocessSite("c", "a.example", "http://a.example/x", "", false) },
			map[string][]cmt.Message{"n2": {&cmt.UMReprocessSite{Collection: "c", Site: "a.example", Prefix: "http://a.example/x"}}}, nil},
		{"delete uris grouped by node", func() ([]Action, error) {
			return h.m.DeleteURIs("c", []cmt.SiteURIs{{Site: "a.example", URIs: []string{"http://a.example/1"}}, {Site: "q.example", URIs: []string{"http://q.example/2"}}})
		}, map[string][]cmt.Message{
			"n2": {&cmt.UMDeleteURIs{Collection: "c", ErrCode: "USR", Sites: []cmt.SiteURIs{{Site: "a.example", URIs: []string{"http://a.example/1"}}, {Site: "q.example", URIs: []string{"http://q.example/2"}}}}},
			"n1": {&cmt.UMDeleteURIs{Collection: "c", ErrCode: "USR", Sites: []cmt.SiteURIs{{Site: "q.example", URIs: []string{"http://q.example/2"}}}}},
		}, nil},
		{"owner offline", func() ([]Action, error) { return h.m.DeleteSite("c", "off.example") }, nil, ErrNodeOffline},
		{"unknown collection", func() ([]Action, error) { return h.m.DeleteSite("x", "a.example") }, nil, ErrUnknownCollection},
		{"refresh to all", func() ([]Action, error) { return h.m.RefreshCollection("c", "", cmt.RefreshCollection) },
			map[string][]cmt.Message{"n1": {&cmt.AdmConfRefresh{Collection: "c", Flags: cmt.RefreshCollection}}, "n2": {&cmt.AdmConfRefresh{Collection: "c", Flags: cmt.RefreshCollection}}}, nil},
		{"feeding suspend to all", func() ([]Action, error) { return h.m.SuspendFeeding("c", true, []string{"default:x"}) },
			map[string][]cmt.Message{
				"n1": {&cmt.AdmConfFeedingSuspend{Collection: "c", Suspend: true, Destinations: []string{"default:x"}}},
				"n2": {&cmt.AdmConfFeedingSuspend{Collection: "c", Suspend: true, Destinations: []string{"default:x"}}}}, nil},
		{"set state", func() ([]Action, error) { return h.m.SetState("c", cmt.StateBlocked) },
			map[string][]cmt.Message{"n1": {&cmt.UMConfState{Collection: "c", State: 2}}, "n2": {&cmt.UMConfState{Collection: "c", State: 2}}}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			acts, err := tc.op()
			if tc.err != nil {
				if err == nil || !errorsIs(err, tc.err) {
					t.Fatalf("err = %v, want %v", err, tc.err)
				}
				if len(actionsOf[Send](acts)) != 0 {
					t.Errorf("sent despite the error: %v", acts)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := map[string][]cmt.Message{}
			for _, n := range []string{"n1", "n2"} {
				if msgs := sent(acts, h.conn[n]); len(msgs) > 0 {
					got[n] = msgs
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestMufilter(t *testing.T) {
	h := newHarness(t, Config{}, testSpec(t, "c", `<attrib name="mufilter" type="integer">100000</attrib>`))
	h.join("n1", true)
	table := map[string][]netip.Addr{"a.example": addrs("127.0.0.1")}
	send := func(e cmt.Entry) int {
		acts := h.resolveAll(h.recv("n1", &cmt.UMURI{Collection: "c", Entry: e}), table)
		n := 0
		for _, msg := range sent(acts, h.conn["n1"]) {
			if _, ok := msg.(*cmt.UMURI); ok {
				n++
			}
		}
		return n
	}
	e := entry(t, "http://a.example/page")
	if send(e) != 1 {
		t.Fatal("first URI not forwarded")
	}
	if send(e) != 0 {
		t.Error("duplicate URI forwarded")
	}
	forced := e
	forced.QueueFlags = cmt.QFForce
	if send(forced) != 1 {
		t.Error("QF_FORCE entry filtered")
	}
	if _, err := h.m.RefreshCollection("c", "", cmt.RefreshCollection); err != nil {
		t.Fatal(err)
	}
	if send(e) != 1 {
		t.Error("URI filtered after a refresh")
	}
	if ci, _ := h.m.Collection("c"); ci.Counts.Filtered != 1 {
		t.Errorf("filtered = %d", ci.Counts.Filtered)
	}
	// Without mufilter nothing is filtered.
	h2 := newHarness(t, Config{}, testSpec(t, "c", ""))
	h2.join("n1", true)
	for range 2 {
		acts := h2.resolveAll(h2.recv("n1", &cmt.UMURI{Collection: "c", Entry: e}), table)
		if len(sent(acts, h2.conn["n1"])) == 0 {
			t.Error("URI filtered without mufilter")
		}
	}
}

func TestQueueLimit(t *testing.T) {
	h := newHarness(t, Config{QueueLimit: 2}, testSpec(t, "c", ""))
	h.join("n1", true)
	h.m.RestoreRoute("c", "y.example", "n2", "y.example")
	for i := range 3 {
		h.recv("n1", &cmt.UMURI{Collection: "c", Entry: entry(t, fmt.Sprintf("http://y.example/%d", i))})
	}
	ci, _ := h.m.Collection("c")
	if ci.Waiting != 2 || ci.Counts.Dropped != 1 {
		t.Errorf("waiting %d dropped %d", ci.Waiting, ci.Counts.Dropped)
	}
}

func TestLogAndUnknownMessages(t *testing.T) {
	h := newHarness(t, Config{}, testSpec(t, "c", ""))
	h.join("n1", true)
	acts := h.recv("n1", &cmt.UMLog{Collection: "c", File: cmt.LogFetch, Text: "200 http://a/"})
	if diff := cmp.Diff([]AppendLog{{Collection: "c", File: "dk", Text: "200 http://a/"}}, actionsOf[AppendLog](acts)); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
	if acts := h.recv("n1", &cmt.UMLog{Collection: "c", File: "zz", Text: "x"}); len(actionsOf[AppendLog](acts)) != 0 {
		t.Error("unknown log file accepted")
	}
	if acts := h.recv("n1", &cmt.UMLog{Collection: "nope", File: cmt.LogSite, Text: "x"}); len(actionsOf[AppendLog](acts)) != 0 {
		t.Error("log for unknown collection accepted")
	}
	for _, f := range []cmt.LogFile{"../../x", "/etc/passwd", "fetch.log", ""} {
		if acts := h.recv("n1", &cmt.UMLog{Collection: "c", File: f, Text: "x"}); len(actionsOf[AppendLog](acts)) != 0 {
			t.Errorf("log file %q accepted", f)
		}
	}
	// One message, one line: the trailing line break goes, the others
	// become spaces.
	acts = h.recv("n1", &cmt.UMLog{Collection: "c", File: cmt.LogSite, Text: "a\nb\r\tc\r\n"})
	if diff := cmp.Diff([]AppendLog{{Collection: "c", File: "si", Text: "a b  c"}}, actionsOf[AppendLog](acts)); diff != "" {
		t.Errorf("multi-line log (-want +got):\n%s", diff)
	}
	h.m.LogDropped("c")
	h.m.LogDropped("nope")
	if ci, _ := h.m.Collection("c"); ci.Counts.LogLines != 2 || ci.Counts.LogsDropped != 1 {
		t.Errorf("log lines %d, dropped %d; want 2, 1", ci.Counts.LogLines, ci.Counts.LogsDropped)
	}
	// Messages the multinode scheduler does not handle are ignored.
	if acts := h.recv("n1", &cmt.PPDUPKeepalive{}); len(actionsOf[Send](acts))+len(actionsOf[CloseConn](acts)) != 0 {
		t.Errorf("PPDUP message handled: %v", acts)
	}
}
