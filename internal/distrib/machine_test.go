package distrib

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/trawl/trawl/internal/distrib/wire"
	"github.com/trawl/trawl/internal/feed"
	"github.com/trawl/trawl/internal/loop"
	"github.com/trawl/trawl/internal/loop/looptest"
)

// harness drives one distributor machine; the jobs it asks for are
// answered by "result" directives, as the name server, the master or an
// indexer would.
type harness struct{ next uint64 }

// new node=N [port=BASE] [collections=a,b] [lease=DURATION]
func (h *harness) New(t *testing.T, d *datadriven.TestData) loop.Machine[*wire.Frame] {
	h.next = 0
	var node int64
	d.ScanArgs(t, "node", &node)
	var lease time.Duration
	if d.HasArg("lease") {
		var s string
		d.ScanArgs(t, "lease", &s)
		var err error
		if lease, err = time.ParseDuration(s); err != nil {
			t.Fatal(err)
		}
	}
	port := 13000
	if d.HasArg("port") {
		d.ScanArgs(t, "port", &port)
	}
	var colls []string
	if d.HasArg("collections") {
		var s string
		d.ScanArgs(t, "collections", &s)
		colls = strings.Split(s, ",")
	}
	return New(Config{NodeID: node, Host: "127.0.0.1", BasePort: port, Incarnation: 1, Collections: colls, Lease: lease,
		CheckMaster: 5 * time.Second, PingMaster: 5 * time.Second})
}

func parseArg(s string) wire.Value {
	switch {
	case strings.HasPrefix(s, "i:"):
		n, _ := strconv.ParseInt(s[2:], 10, 64)
		return wire.I64(n)
	case strings.HasPrefix(s, "b:"):
		return wire.Bln(s[2:] == "true")
	case s == "gs:none":
		return wire.GuaranteeSet(-1)
	case strings.HasPrefix(s, "gs:"):
		n, _ := strconv.ParseInt(s[3:], 10, 64)
		return wire.GuaranteeSet(n)
	case strings.Count(s, ",") == 5:
		return aorArg(s).Value()
	}
	return wire.Str(s)
}

func aorArg(s string) wire.AOR {
	p := strings.Split(s, ",")
	port, _ := strconv.Atoi(p[3])
	// "_" in the object_id stands for a space.
	return wire.AOR{Name: p[0], ObjectID: strings.ReplaceAll(p[1], "_", " "), Host: p[2], Port: port, Type: p[4], Version: p[5]}
}

var excs = map[string]string{"resolve": wire.ExcResolve, "already_bound": wire.ExcAlreadyBound, "unavailable": wire.ExcUnavailable}

// result job=N [aor=...] [err=resolve|already_bound|unavailable|stale:EPOCH|TEXT]
// call peer=N (one "object method args..." a line)
func (h *harness) Events(t *testing.T, d *datadriven.TestData) ([]loop.Event[*wire.Frame], error) {
	switch d.Cmd {
	case "result":
		var job uint64
		d.ScanArgs(t, "job", &job)
		ev := loop.Event[*wire.Frame]{Kind: loop.Result, Job: job}
		if d.HasArg("aor") {
			var s string
			d.ScanArgs(t, "aor", &s)
			ev.Result = aorArg(s)
		}
		if d.HasArg("loads") {
			var s string
			d.ScanArgs(t, "loads", &s)
			loads := map[int64]int64{}
			for _, kv := range strings.Split(s, ",") {
				var id, l int64
				fmt.Sscanf(kv, "%d:%d", &id, &l)
				loads[id] = l
			}
			ev.Result = loads
		}
		if d.HasArg("indexers") {
			var s string
			d.ScanArgs(t, "indexers", &s)
			var aors []wire.AOR
			for _, a := range strings.Split(s, ";") {
				aors = append(aors, aorArg(a))
			}
			ev.Result = aors
		}
		if d.HasArg("ok") {
			var s string
			d.ScanArgs(t, "ok", &s)
			var rs []OpResult
			for _, x := range strings.Split(s, ",") {
				n, _ := strconv.ParseUint(x, 10, 64)
				rs = append(rs, OpResult{Seq: n})
			}
			ev.Result = rs
		}
		if d.HasArg("err") {
			var s string
			d.ScanArgs(t, "err", &s)
			if name, ok := excs[s]; ok {
				ev.Err = &wire.Error{Name: name, What: s}
			} else if n, ok := strings.CutPrefix(s, "stale:"); ok {
				// A dispatcher node's refusal of an older epoch.
				ev.Err = &wire.Error{Name: wire.ExcUnsupportedGuarantees, What: staleEpoch + n + " seen"}
			} else {
				ev.Err = errors.New(s)
			}
		}
		return []loop.Event[*wire.Frame]{ev}, nil
	case "call":
		var peer int
		d.ScanArgs(t, "peer", &peer)
		var evs []loop.Event[*wire.Frame]
		for _, l := range strings.Split(strings.TrimSpace(d.Input), "\n") {
			fs := strings.Fields(l)
			var args []wire.Value
			var ops []wire.Value
			for _, a := range fs[2:] {
				if strings.HasPrefix(a, "op:") {
					// op:SEQ:COLLECTION:URI, an encoded add.
					p := strings.SplitN(a, ":", 4)
					seq, _ := strconv.ParseUint(p[1], 10, 64)
					b, _ := (&feed.Operation{Seq: seq, Kind: feed.Add, Collection: p[2], URI: p[3]}).MarshalBinary()
					ops = append(ops, wire.Byt(b))
					continue
				}
				args = append(args, parseArg(a))
			}
			if ops != nil {
				args = append(args, wire.Lst(ops...))
			}
			h.next++
			evs = append(evs, loop.Event[*wire.Frame]{Kind: loop.Received, Peer: loop.Peer(peer), Msg: wire.Call(h.next, fs[0], fs[1], args...)})
		}
		return evs, nil
	}
	return nil, fmt.Errorf("unknown command %s", d.Cmd)
}

func (h *harness) Format(b loop.Batch[*wire.Frame]) string {
	return looptest.FormatCommon(b, func(f *wire.Frame) string { return f.String() })
}

func TestTraces(t *testing.T) { looptest.Run[*wire.Frame](t, "testdata/*.trace", &harness{}) }
