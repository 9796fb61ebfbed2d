package multinode

import (
	"log/slog"
	"net/netip"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/trawl/trawl/internal/cmt"
)

// uris lists the URIs of the CMD_UM_URI messages in msgs.
func uris(msgs []cmt.Message) []string {
	var out []string
	for _, m := range msgs {
		if u, ok := m.(*cmt.UMURI); ok {
			out = append(out, u.Entry.URI.URI)
		}
	}
	return out
}

var failoverHosts = map[string][]netip.Addr{
	"a.test": addrs("10.0.0.1"), "b.test": addrs("10.0.0.2"), "c.test": addrs("10.0.0.3"),
	"d.test": addrs("10.0.0.4"), "e.test": addrs("10.0.0.5"), "f.test": addrs("10.0.0.6"),
}

func TestWaitNodes(t *testing.T) {
	spec := testSpec(t, "c", startURIs("http://a.test/", "http://b.test/", "http://c.test/", "http://d.test/"))
	h := newHarness(t, Config{WaitNodes: 2, WaitNodesTimeout: time.Minute}, spec)
	acts := h.resolveAll(h.join("n1", true), failoverHosts)
	if got := uris(sent(acts, h.conn["n1"])); len(got) != 0 {
		t.Fatalf("routing before the second node scheduler: %v", got)
	}
	acts = h.resolveAll(h.join("n2", true), failoverHosts)
	n := len(uris(sent(acts, h.conn["n1"]))) + len(uris(sent(acts, h.conn["n2"])))
	if n != 4 || !hasLog(acts, slog.LevelInfo, "multinode: routing starts") {
		t.Errorf("after the second registration %d start URIs forwarded, want 4", n)
	}

	t.Run("timeout", func(t *testing.T) {
		h := newHarness(t, Config{WaitNodes: 3, WaitNodesTimeout: time.Minute}, spec)
		acts := h.resolveAll(h.join("n1", true), failoverHosts)
		if got := uris(sent(acts, h.conn["n1"])); len(got) != 0 {
			t.Fatalf("routing before the timeout: %v", got)
		}
		h.now = h.now.Add(time.Minute)
		acts = h.resolveAll(h.m.Tick(h.now), failoverHosts)
		if got := uris(sent(acts, h.conn["n1"])); len(got) != 4 {
			t.Errorf("after the timeout %d start URIs forwarded, want 4", len(got))
		}
	})
}

// routed returns the node each host of the machine's collection c goes to.
func routed(t *testing.T, m *MNS, hosts ...string) map[string]string {
	out := map[string]string{}
	for _, h := range hosts {
		node, _, ok := m.Route("c", h)
		if !ok {
			t.Fatalf("%s not routed", h)
		}
		out[h] = node
	}
	return out
}

func TestRerouteNode(t *testing.T) {
	hosts := []string{"a.test", "b.test", "c.test", "d.test", "e.test", "f.test"}
	var starts []string
	for _, h := range hosts {
		starts = append(starts, "http://"+h+"/")
	}
	spec := testSpec(t, "c", startURIs(starts...))
	h := newHarness(t, Config{WaitNodes: 3}, spec)
	h.resolveAll(h.join("n1", true), failoverHosts)
	h.resolveAll(h.join("n2", true), failoverHosts)
	h.resolveAll(h.join("n3", true), failoverHosts)
	before := routed(t, h.m, hosts...)
	victim := before["b.test"]
	var lost []string
	var others []string
	for host, n := range before {
		if n == victim {
			lost = append(lost, host)
		}
	}
	for _, n := range []string{"n1", "n2", "n3"} {
		if n != victim {
			others = append(others, n)
		}
	}
	// The victim got an entry of one of its sites, then goes away.
	h.resolveAll(h.recv(others[0], &cmt.UMURI{Collection: "c", Entry: entry(t, "http://"+lost[0]+"/deep.html")}), failoverHosts)
	h.m.Disconnect(h.conn[victim], h.now)

	if _, _, err := h.m.RerouteNode(others[0], h.now); err == nil {
		t.Error("rerouting a connected node scheduler: no error")
	}
	acts, moved, err := h.m.RerouteNode(victim, h.now)
	if err != nil || moved == 0 {
		t.Fatalf("RerouteNode: %d, %v", moved, err)
	}
	after := routed(t, h.m, hosts...)
	for host, n := range after {
		if n == victim {
			t.Errorf("%s still routed to %s", host, victim)
		}
		if before[host] != victim && n != before[host] {
			t.Errorf("%s moved from %s to %s: only %s's sites may move", host, before[host], n, victim)
		}
	}
	// The new routes are persisted and announced, and the moved sites'
	// start URIs and the entry n2 got go to their new node schedulers.
	if len(actionsOf[PersistRoute](acts)) < len(lost) {
		t.Errorf("%d routes persisted, want at least %d", len(actionsOf[PersistRoute](acts)), len(lost))
	}
	var got []string
	for _, n := range others {
		got = append(got, uris(sent(acts, h.conn[n]))...)
		for _, msg := range sent(acts, h.conn[n]) {
			if r, ok := msg.(*cmt.UMAddRoute); ok && r.NodeID == victim {
				t.Errorf("route announced to %s: %+v", victim, r)
			}
		}
	}
	want := map[string]bool{"http://" + lost[0] + "/deep.html": true}
	for _, host := range lost {
		want["http://"+host+"/"] = true
	}
	gotSet := map[string]bool{}
	for _, u := range got {
		gotSet[u] = true
	}
	if diff := cmp.Diff(want, gotSet); diff != "" {
		t.Errorf("entries forwarded after the reroute (-want +got):\n%s", diff)
	}
	// The victim may not come back under its identifier.
	acts = h.join(victim, false)
	if len(actionsOf[CloseConn](acts)) != 1 {
		t.Errorf("a rerouted node identifier registered again: %v", acts)
	}
}

func TestNodeTimeout(t *testing.T) {
	spec := testSpec(t, "c", startURIs("http://a.test/", "http://b.test/", "http://c.test/", "http://d.test/"))
	h := newHarness(t, Config{NodeTimeout: 5 * time.Minute, WaitNodes: 2}, spec)
	h.resolveAll(h.join("n1", true), failoverHosts)
	h.resolveAll(h.join("n2", true), failoverHosts)
	h.m.Disconnect(h.conn["n2"], h.now)
	h.now = h.now.Add(4 * time.Minute)
	if acts := h.m.Tick(h.now); len(actionsOf[PersistRoute](acts)) != 0 {
		t.Fatalf("rerouted before the timeout: %v", acts)
	}
	h.now = h.now.Add(time.Minute)
	acts := h.m.Tick(h.now)
	if !hasLog(acts, slog.LevelWarn, "multinode: node scheduler gone longer than the node timeout, rerouting its sites") {
		t.Fatalf("no reroute after the timeout: %v", acts)
	}
	for _, host := range []string{"a.test", "b.test", "c.test", "d.test"} {
		if n, _, _ := h.m.Route("c", host); n != "n1" {
			t.Errorf("%s routed to %s, want n1", host, n)
		}
	}
}

// TestResendOnRegister: what was forwarded to a node scheduler goes again
// when it registers again (its old connection may have lost it).
func TestResendOnRegister(t *testing.T) {
	spec := testSpec(t, "c", startURIs("http://a.test/"))
	h := newHarness(t, Config{}, spec)
	acts := h.resolveAll(h.join("n1", true), failoverHosts)
	first := uris(sent(acts, h.conn["n1"]))
	h.resolveAll(h.recv("n1", &cmt.UMURI{Collection: "c", Entry: entry(t, "http://a.test/x.html")}), failoverHosts)
	h.m.Disconnect(h.conn["n1"], h.now)
	h.now = h.now.Add(time.Minute)
	acts = h.join("n1", true)
	got := uris(sent(acts, h.conn["n1"]))
	want := append(first, "http://a.test/x.html")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("sent again (-want +got):\n%s", diff)
	}
	// Past the window, nothing.
	h.m.Disconnect(h.conn["n1"], h.now)
	h.now = h.now.Add(DefaultResendWindow + time.Second)
	if got := uris(sent(h.join("n1", true), h.conn["n1"])); len(got) != 0 {
		t.Errorf("sent again after the window: %v", got)
	}
}

func TestKeepAliveDead(t *testing.T) {
	h := newHarness(t, Config{KeepAlive: time.Second})
	h.join("n1", true)
	h.join("n2", true)
	for i := 1; i <= 2; i++ {
		h.now = t0.Add(time.Duration(i) * time.Second)
		h.m.Tick(h.now)
		h.recv("n1", &cmt.UMKeepaliveAck{})
	}
	h.now = t0.Add(3 * time.Second)
	acts := h.m.Tick(h.now)
	closes := actionsOf[CloseConn](acts)
	if len(closes) != 1 || closes[0].Conn != h.conn["n2"] {
		t.Errorf("closed %v, want n2's connection only", closes)
	}
}
