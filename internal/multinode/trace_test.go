package multinode

import (
	"errors"
	"fmt"
	"net/netip"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/loop"
	"github.com/trawl/trawl/internal/loop/looptest"
)

// TestTraces runs the scenario traces of testdata/*.trace: each is one
// sequence of MS-FSCMT section 3.2, events in, batches out.
//
//	new [skip-ask-route] [wait-nodes=N] [wait-nodes-timeout=D] [node-timeout=D]
//	    [keepalive=D] [rebuild-timeout=D] [max-missed=N]
//	add-collection name=C [start=U,U...] [domain-clustering] [xml=ATTRIBS]
//	remove-collection name=C | suspend name=C | resume name=C
//	reroute node=ID
//	connect peer=N | close peer=N | busy peer=N | unbusy peer=N
//	recv peer=N           one message a line: VERB key=value ...
//	dns host=H [addrs=A,A...] [err=TEXT]   the result of the lookup of H
//	route coll=C host=H   where H is routed (looks, does not step)
//	nodes                 the registered node schedulers
//
// Message verbs: init node [admin]; keepalive; keepalive-ack; uri coll url;
// uri-urg coll url; dns-request site; start-ip coll ip site; stop-ip coll ip
// site; last-route coll; delete-ok coll; conf-state coll.
func TestTraces(t *testing.T) {
	looptest.Run[cmt.Message](t, "testdata/*.trace", &traceHarness{})
}

type traceHarness struct {
	m    *MNS
	jobs map[string]uint64 // lookups asked for, by host
}

func (h *traceHarness) New(t *testing.T, d *datadriven.TestData) loop.Machine[cmt.Message] {
	var cfg Config
	cfg.SkipAskRoute = d.HasArg("skip-ask-route")
	for _, a := range d.CmdArgs {
		if len(a.Vals) == 0 {
			continue
		}
		v := a.Vals[0]
		dur := func() time.Duration {
			x, err := time.ParseDuration(v)
			if err != nil {
				d.Fatalf(t, "%s: %v", a.Key, err)
			}
			return x
		}
		var n int
		fmt.Sscan(v, &n)
		switch a.Key {
		case "wait-nodes":
			cfg.WaitNodes = n
		case "wait-nodes-timeout":
			cfg.WaitNodesTimeout = dur()
		case "node-timeout":
			cfg.NodeTimeout = dur()
		case "keepalive":
			cfg.KeepAlive = dur()
		case "rebuild-timeout":
			cfg.RebuildTimeout = dur()
		case "max-missed":
			cfg.MaxMissedKeepAlives = n
		}
	}
	h.m = New(cfg)
	h.jobs = map[string]uint64{}
	return h.m
}

func (h *traceHarness) Events(t *testing.T, d *datadriven.TestData) ([]loop.Event[cmt.Message], error) {
	arg := func(key string) string {
		var s string
		if d.HasArg(key) {
			d.ScanArgs(t, key, &s)
		}
		return s
	}
	peer := func() loop.Peer {
		var n int
		d.ScanArgs(t, "peer", &n)
		return loop.Peer(n)
	}
	one := func(ev loop.Event[cmt.Message]) ([]loop.Event[cmt.Message], error) {
		return []loop.Event[cmt.Message]{ev}, nil
	}
	op := func(f Op) ([]loop.Event[cmt.Message], error) {
		return one(loop.Event[cmt.Message]{Kind: loop.Input, Result: f})
	}
	switch d.Cmd {
	case "connect":
		return one(loop.Event[cmt.Message]{Kind: loop.Connected, Peer: peer(), Tag: "node"})
	case "close":
		return one(loop.Event[cmt.Message]{Kind: loop.Closed, Peer: peer()})
	case "busy":
		return one(loop.Event[cmt.Message]{Kind: loop.Blocked, Peer: peer()})
	case "unbusy":
		return one(loop.Event[cmt.Message]{Kind: loop.Unblocked, Peer: peer()})
	case "tick":
		return one(loop.Event[cmt.Message]{Kind: loop.Tick})
	case "dns":
		host := arg("host")
		id, ok := h.jobs[host]
		if !ok {
			return nil, fmt.Errorf("no lookup of %s was asked for", host)
		}
		delete(h.jobs, host)
		ev := loop.Event[cmt.Message]{Kind: loop.Result, Job: id}
		var addrs []netip.Addr
		for _, a := range strings.Split(arg("addrs"), ",") {
			if a != "" {
				addrs = append(addrs, netip.MustParseAddr(a))
			}
		}
		ev.Result = addrs
		if e := arg("err"); e != "" {
			ev.Err = errors.New(e)
		}
		return one(ev)
	case "recv":
		p := peer()
		var evs []loop.Event[cmt.Message]
		for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
			if line = strings.TrimSpace(line); line == "" {
				continue
			}
			m, err := parseMessage(t, line)
			if err != nil {
				return nil, err
			}
			evs = append(evs, loop.Event[cmt.Message]{Kind: loop.Received, Peer: p, Msg: m})
		}
		return evs, nil
	case "add-collection":
		body := ""
		if s := arg("start"); s != "" {
			body += startURIs(strings.Split(s, ",")...)
		}
		if d.HasArg("domain-clustering") {
			body += `<attrib name="domain_clustering" type="boolean">yes</attrib>`
		}
		body += strings.TrimSpace(d.Input)
		spec := testSpec(t, arg("name"), body)
		return op(func(m *MNS, now time.Time) ([]Action, error) { return m.AddCollection(spec, now) })
	case "remove-collection":
		name := arg("name")
		return op(func(m *MNS, now time.Time) ([]Action, error) { return m.RemoveCollection(name, now) })
	case "suspend":
		name := arg("name")
		return op(func(m *MNS, now time.Time) ([]Action, error) {
			return m.SuspendCollection(name, cmt.StateSuspendedUser)
		})
	case "resume":
		name := arg("name")
		return op(func(m *MNS, now time.Time) ([]Action, error) { return m.ResumeCollection(name) })
	case "reroute":
		node := arg("node")
		return op(func(m *MNS, now time.Time) ([]Action, error) {
			acts, n, err := m.RerouteNode(node, now)
			if err == nil {
				acts = append(acts, LogLine{Msg: "trace: rerouted", Args: []any{"attributes", n}})
			}
			return acts, err
		})
	}
	return nil, fmt.Errorf("unknown command %s", d.Cmd)
}

func parseMessage(t *testing.T, line string) (cmt.Message, error) {
	f := strings.Fields(line)
	kv := map[string]string{}
	for _, a := range f[1:] {
		k, v, ok := strings.Cut(a, "=")
		if !ok {
			return nil, fmt.Errorf("%q: want key=value", a)
		}
		kv[k] = v
	}
	switch f[0] {
	case "init":
		host, port := kv["node"]+".example", int32(10000)
		if a := kv["admin"]; a != "" {
			h, p, _ := strings.Cut(a, ":")
			host = h
			fmt.Sscan(p, &port)
		}
		return &cmt.UMInit{NodeID: kv["node"], AdminHost: host, AdminPort: port}, nil
	case "keepalive":
		return &cmt.UMKeepalive{}, nil
	case "keepalive-ack":
		return &cmt.UMKeepaliveAck{}, nil
	case "uri":
		return &cmt.UMURI{Collection: kv["coll"], Entry: entry(t, kv["url"])}, nil
	case "uri-urg":
		return &cmt.UMURIUrg{Collection: kv["coll"], Entry: entry(t, kv["url"])}, nil
	case "dns-request":
		return &cmt.UMDNSRequest{Site: kv["site"]}, nil
	case "start-ip":
		return &cmt.UMStartCrawlIP{Collection: kv["coll"], IP: kv["ip"], Site: kv["site"]}, nil
	case "stop-ip":
		return &cmt.UMStopCrawlIP{Collection: kv["coll"], IP: kv["ip"], Site: kv["site"]}, nil
	case "last-route":
		return &cmt.UMLastRoute{Collection: kv["coll"]}, nil
	case "delete-ok":
		return &cmt.UMDeleteOK{Collection: kv["coll"]}, nil
	case "conf-state":
		return &cmt.UMConfStateRequest{Collection: kv["coll"]}, nil
	}
	return nil, fmt.Errorf("unknown message %s", f[0])
}

func (h *traceHarness) Format(b loop.Batch[cmt.Message]) string {
	var sb strings.Builder
	for _, r := range b.Persist {
		fmt.Fprintf(&sb, "persist %s\n", strings.TrimPrefix(fmt.Sprintf("%T%+v", r, r), "multinode."))
	}
	for _, j := range b.Work {
		if l, ok := j.Spec.(Lookup); ok {
			h.jobs[l.Host] = j.ID
		}
	}
	b.Persist = nil
	sb.WriteString(looptest.FormatCommon(b, func(m cmt.Message) string {
		return looptest.CMT(m, nil, traceField)
	}))
	return sb.String()
}

// traceField prints the fields of MS-FSCMT messages a trace shows short.
func traceField(name string, v any) (string, bool) {
	switch x := v.(type) {
	case cmt.CrawlConfig:
		names := make([]string, len(x.Collections))
		for i, c := range x.Collections {
			names[i] = c.Name
		}
		return "[" + strings.Join(names, " ") + "]", true
	case cmt.Entry:
		return x.URI.URI, true
	case []cmt.AddrInfo:
		ips := make([]string, len(x))
		for i, a := range x {
			ips[i] = a.IP
		}
		return strings.Join(ips, ","), true
	}
	return "", false
}

// Inspect answers "route" and "nodes".
func (h *traceHarness) Inspect(t *testing.T, d *datadriven.TestData, m loop.Machine[cmt.Message]) (string, bool) {
	switch d.Cmd {
	case "route":
		var coll, host string
		d.ScanArgs(t, "coll", &coll)
		d.ScanArgs(t, "host", &host)
		node, attr, ok := h.m.Route(coll, host)
		if !ok {
			return "not routed", true
		}
		return fmt.Sprintf("%s -> %s (attribute %s)", host, node, attr), true
	case "nodes":
		var out []string
		for _, n := range h.m.Nodes() {
			out = append(out, fmt.Sprintf("%s conn=%d admin=%s:%d", n.NodeID, n.Conn, n.AdminHost, n.AdminPort))
		}
		sort.Strings(out)
		if len(out) == 0 {
			return "none", true
		}
		return strings.Join(out, "\n"), true
	}
	return "", false
}
