package indexer

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/trawl/trawl/internal/distrib/wire"
	"github.com/trawl/trawl/internal/feed"
	"github.com/trawl/trawl/internal/index"
	"github.com/trawl/trawl/internal/loop"
	"github.com/trawl/trawl/internal/loop/looptest"
)

type harness struct{ next uint64 }

func (h *harness) New(t *testing.T, d *datadriven.TestData) loop.Machine[*wire.Frame] {
	h.next = 0
	return New(Config{Partition: 1, Partitions: 2, Host: "127.0.0.1", Port: 13400})
}

// call peer=N: "object method args" a line; an arg "op:SEQ:URI" is an
// encoded add operation (URI "-" for none), "i:N" an integer.
// result job=N [seqs=N,N...] [count=N] [url=U version=N] [err=TEXT]: the
// job's end (process: its sequence numbers; count: the documents; lookup:
// the stored document).
func (h *harness) Events(t *testing.T, d *datadriven.TestData) ([]loop.Event[*wire.Frame], error) {
	switch d.Cmd {
	case "call":
		var peer int
		d.ScanArgs(t, "peer", &peer)
		var evs []loop.Event[*wire.Frame]
		for _, l := range strings.Split(strings.TrimSpace(d.Input), "\n") {
			fs := strings.Fields(l)
			var args []wire.Value
			var ops []wire.Value
			for _, a := range fs[2:] {
				switch {
				case strings.HasPrefix(a, "op:"):
					p := strings.SplitN(a, ":", 3)
					var seq uint64
					fmt.Sscan(p[1], &seq)
					uri := p[2]
					if uri == "-" {
						uri = ""
					}
					b, _ := (&feed.Operation{Seq: seq, Kind: feed.Add, Collection: "web", URI: uri, Text: "x"}).MarshalBinary()
					ops = append(ops, wire.Byt(b))
				case strings.HasPrefix(a, "i:"):
					var n int64
					fmt.Sscan(a[2:], &n)
					args = append(args, wire.I64(n))
				default:
					args = append(args, wire.Str(a))
				}
			}
			if ops != nil {
				args = append(args, wire.Lst(ops...))
			}
			h.next++
			evs = append(evs, loop.Event[*wire.Frame]{Kind: loop.Received, Peer: loop.Peer(peer), Msg: wire.Call(h.next, fs[0], fs[1], args...)})
		}
		return evs, nil
	case "result":
		var job uint64
		d.ScanArgs(t, "job", &job)
		ev := loop.Event[*wire.Frame]{Kind: loop.Result, Job: job}
		if d.HasArg("seqs") {
			var s string
			d.ScanArgs(t, "seqs", &s)
			var seqs []uint64
			for _, x := range strings.Split(s, ",") {
				var n uint64
				fmt.Sscan(x, &n)
				seqs = append(seqs, n)
			}
			ev.Result = seqs
		}
		if d.HasArg("count") {
			var n uint64
			d.ScanArgs(t, "count", &n)
			ev.Result = n
		}
		if d.HasArg("version") {
			st := index.Stored{Found: true}
			d.ScanArgs(t, "version", &st.Version)
			d.ScanArgs(t, "url", &st.URL)
			ev.Result = st
		}
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
