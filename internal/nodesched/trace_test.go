package nodesched

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/config"
	"github.com/trawl/trawl/internal/crawllog"
	"github.com/trawl/trawl/internal/loop"
	"github.com/trawl/trawl/internal/loop/looptest"
	"github.com/trawl/trawl/internal/nodesched/crawlpipe"
	"github.com/trawl/trawl/internal/store"
)

// TestTraces runs the scenario traces of testdata/*.trace against the node
// scheduler on the contract (runner over a Machine with a real crawl store
// in a temporary directory and collection c1 of testXML, one duplicate
// server): each is one sequence of MS-FSCMT section 3.1, events in,
// batches out. The machine's store writes show as "persist store
// writes=N" (N Pebble operations, committed by the harness as the driver
// would, before the batch's messages).
//
//	new [delay=SECONDS]   (c1's delay, 0 when not given)
//	connect peer=N tag=multinode|dupserver_0
//	close peer=N | dial-failed tag=multinode|dupserver_0
//	recv peer=N        one message a line: VERB key=value ...
//	done job=N [status=S]  fetch N (a "fetch N:" line before) finished
//	                   with HTTP status S (404 when not given)
//
// Message verbs: keepalive; keepalive-ack; ppdup-keepalive-ack; add-route
// coll site node; uri coll url; dns-reply host ip; start-ip-reply coll ip
// site allowed=yes|no; preempt coll site requeue=yes|no; quarantine coll
// site secs requeue=yes|no; conf-state coll state.
func TestTraces(t *testing.T) {
	looptest.Run[cmt.Message](t, "testdata/*.trace", &traceHarness{})
}

// traceHarness keeps the crawl store of the trace being run and the
// fetches it printed, for "done".
type traceHarness struct {
	st   *store.Store
	jobs map[uint64]*crawlpipe.Job
}

func (h *traceHarness) New(t *testing.T, d *datadriven.TestData) loop.Machine[cmt.Message] {
	h.jobs = nil
	st, err := store.Open(t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	h.st = st
	m, err := NewMachine(MachineConfig{NodeID: "n1", DupServers: 1, Store: st, Env: crawlpipe.Env{NodeID: "n1"}}, looptest.Start)
	if err != nil {
		t.Fatal(err)
	}
	xml := testXML
	if d.HasArg("delay") {
		var delay string
		d.ScanArgs(t, "delay", &delay)
		xml = strings.Replace(xml, `<attrib name="delay" type="real">0</attrib>`, `<attrib name="delay" type="real">`+delay+`</attrib>`, 1)
	}
	cfg, err := config.Parse("t.xml", []byte(xml), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.AddCollection(cfg.Collections[0], looptest.Start); err != nil {
		t.Fatal(err)
	}
	none := DialFunc(func(context.Context) (*cmt.Conn, error) { return nil, errors.New("trace: no dialing") })
	drv := &Driver{cfg: Config{Workers: 2, Backlog: 1 << 10, MNS: none, DS: []DialFunc{none}},
		now: func() time.Time { return looptest.Start }, ips: map[string]dialIP{}}
	return newRunner(drv, m, looptest.Start)
}

func (h *traceHarness) Events(t *testing.T, d *datadriven.TestData) ([]loop.Event[cmt.Message], error) {
	arg := func(key string) string {
		var s string
		if d.HasArg(key) {
			d.ScanArgs(t, key, &s)
		}
		return strings.ReplaceAll(s, "_", " ")
	}
	peer := func() loop.Peer {
		var n int
		d.ScanArgs(t, "peer", &n)
		return loop.Peer(n)
	}
	switch d.Cmd {
	case "connect":
		return []loop.Event[cmt.Message]{{Kind: loop.Connected, Peer: peer(), Tag: arg("tag")}}, nil
	case "done":
		var id, status int
		d.ScanArgs(t, "job", &id)
		status = 404
		if d.HasArg("status") {
			d.ScanArgs(t, "status", &status)
		}
		j := h.jobs[uint64(id)]
		if j == nil {
			return nil, fmt.Errorf("no fetch %d", id)
		}
		delete(h.jobs, uint64(id))
		return []loop.Event[cmt.Message]{{Kind: loop.Result, Job: uint64(id), Result: &crawlpipe.Outcome{Job: j, Status: status}}}, nil
	case "close":
		return []loop.Event[cmt.Message]{{Kind: loop.Closed, Peer: peer(), Err: errors.New("connection reset")}}, nil
	case "dial-failed":
		return []loop.Event[cmt.Message]{{Kind: loop.DialFailed, Tag: arg("tag"), Err: errors.New("connection refused")}}, nil
	case "recv":
		p := peer()
		var evs []loop.Event[cmt.Message]
		for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
			f := strings.Fields(line)
			if len(f) == 0 {
				continue
			}
			kv := map[string]string{}
			for _, a := range f[1:] {
				k, v, _ := strings.Cut(a, "=")
				kv[k] = v
			}
			var m cmt.Message
			switch f[0] {
			case "keepalive":
				m = &cmt.UMKeepalive{}
			case "keepalive-ack":
				m = &cmt.UMKeepaliveAck{}
			case "ppdup-keepalive-ack":
				m = &cmt.PPDUPKeepaliveAck{}
			case "add-route":
				m = &cmt.UMAddRoute{Collection: kv["coll"], Site: kv["site"], RouteAttr: kv["site"], NodeID: kv["node"], TTL: 86400}
			case "uri":
				m = &cmt.UMURI{Collection: kv["coll"], Entry: cmt.Entry{URI: uriStructure(kv["url"]),
					Referrer: cmt.EmptyURIStructure(), Flags: cmt.URIFUnscreened}}
			case "start-ip-reply":
				m = &cmt.UMStartCrawlIPReply{Collection: kv["coll"], IP: kv["ip"], Site: kv["site"], Allowed: kv["allowed"] == "yes"}
			case "preempt":
				m = &cmt.AdmPreemptSite{Collection: kv["coll"], Site: kv["site"], Requeue: kv["requeue"] == "yes"}
			case "quarantine":
				secs, err := strconv.ParseInt(kv["secs"], 10, 64)
				if err != nil {
					return nil, err
				}
				if kv["requeue"] == "yes" {
					m = &cmt.UMQuarantineSiteRequeue{Collection: kv["coll"], Site: kv["site"], Seconds: secs}
				} else {
					m = &cmt.UMQuarantineSite{Collection: kv["coll"], Site: kv["site"], Seconds: secs}
				}
			case "conf-state":
				st, err := strconv.Atoi(kv["state"])
				if err != nil {
					return nil, err
				}
				m = &cmt.UMConfState{Collection: kv["coll"], State: cmt.CollectionState(st)}
			case "dns-reply":
				m = &cmt.UMDNSReply{Host: kv["host"], Addrs: []cmt.AddrInfo{{Family: 2, SockType: 1, IP: kv["ip"]}},
					Time: looptest.Start.Unix(), TTL: 86400}
			default:
				return nil, fmt.Errorf("unknown message %s", f[0])
			}
			evs = append(evs, loop.Event[cmt.Message]{Kind: loop.Received, Peer: p, Msg: m})
		}
		return evs, nil
	}
	return nil, fmt.Errorf("unknown command %s", d.Cmd)
}

func (h *traceHarness) Format(b loop.Batch[cmt.Message]) string {
	var sb strings.Builder
	for _, r := range b.Persist {
		switch x := r.(type) {
		case storeWrites:
			n := 0
			if x.b != nil {
				n = int(x.b.Pebble().Count())
			}
			fmt.Fprintf(&sb, "persist store writes=%d\n", n)
			if err := commitWrites(h.st, nil, x); err != nil {
				fmt.Fprintf(&sb, "commit failed: %v\n", err)
			}
		case syncWAL:
			sb.WriteString("persist sync-wal\n")
		case crawllog.Entry:
			fmt.Fprintf(&sb, "persist crawl-log %s %s\n", x.Kind, x.Line)
		default:
			fmt.Fprintf(&sb, "persist %T\n", r)
		}
	}
	for _, j := range b.Work {
		if job, ok := j.Spec.(*crawlpipe.Job); ok {
			if h.jobs == nil {
				h.jobs = map[uint64]*crawlpipe.Job{}
			}
			h.jobs[j.ID] = job
			fmt.Fprintf(&sb, "fetch %d: %s\n", j.ID, job.Fetch.URI)
		}
	}
	b.Persist, b.Work = nil, nil
	sb.WriteString(looptest.FormatCommon(b, func(m cmt.Message) string {
		return looptest.CMT(m, nil, func(name string, v any) (string, bool) {
			switch x := v.(type) {
			case cmt.Entry:
				return x.URI.URI, true
			case cmt.CrawlConfig:
				return fmt.Sprintf("[%d collections]", len(x.Collections)), true
			case []cmt.AddrInfo:
				ips := make([]string, len(x))
				for i, a := range x {
					ips[i] = a.IP
				}
				return strings.Join(ips, ","), true
			}
			if name == "Stats" {
				return "...", true
			}
			return "", false
		})
	}))
	return sb.String()
}
