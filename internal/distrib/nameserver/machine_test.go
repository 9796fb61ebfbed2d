package nameserver

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/trawl/trawl/internal/distrib/wire"
	"github.com/trawl/trawl/internal/loop"
	"github.com/trawl/trawl/internal/loop/looptest"
)

type harness struct{ next uint64 }

func (h *harness) New(t *testing.T, d *datadriven.TestData) loop.Machine[*wire.Frame] {
	h.next = 0
	return New(Config{PingInterval: 5e9})
}

// Events: "call peer=N" with one call a line: method args... (an AOR as
// name,object_id,host,port,type,version); "pinged job=N [err=...]".
func (h *harness) Events(t *testing.T, d *datadriven.TestData) ([]loop.Event[*wire.Frame], error) {
	switch d.Cmd {
	case "call":
		var peer int
		d.ScanArgs(t, "peer", &peer)
		var evs []loop.Event[*wire.Frame]
		for _, l := range strings.Split(strings.TrimSpace(d.Input), "\n") {
			fs := strings.Fields(l)
			var args []wire.Value
			for _, a := range fs[1:] {
				if p := strings.Split(a, ","); len(p) == 6 {
					port, _ := strconv.Atoi(p[3])
					args = append(args, wire.AOR{Name: p[0], ObjectID: p[1], Host: p[2], Port: port, Type: p[4], Version: p[5]}.Value())
					continue
				}
				args = append(args, wire.Str(a))
			}
			h.next++
			evs = append(evs, loop.Event[*wire.Frame]{Kind: loop.Received, Peer: loop.Peer(peer), Msg: wire.Call(h.next, Object, fs[0], args...)})
		}
		return evs, nil
	case "pinged":
		var job uint64
		d.ScanArgs(t, "job", &job)
		ev := loop.Event[*wire.Frame]{Kind: loop.Result, Job: job}
		if d.HasArg("err") {
			var s string
			d.ScanArgs(t, "err", &s)
			ev.Err = errors.New(s)
		}
		return []loop.Event[*wire.Frame]{ev}, nil
	}
	return nil, fmt.Errorf("unknown command %s", d.Cmd)
}

func (h *harness) Format(b loop.Batch[*wire.Frame]) string {
	return looptest.FormatCommon(b, func(f *wire.Frame) string { return f.String() })
}

func TestTraces(t *testing.T) { looptest.Run[*wire.Frame](t, "testdata/*.trace", &harness{}) }
