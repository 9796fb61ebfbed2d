package dmake

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/trawl/trawl/internal/loop"
	"github.com/trawl/trawl/internal/loop/looptest"
)

// workerHarness drives a Worker machine from traces under testdata/:
//
//	new [shell]            a worker in /data (FASTSEARCH=/data/fast), --allow-shell with "shell"
//	connect peer=N         a master connects
//	close peer=N           its connection closes
//	recv peer=N            the input's lines arrive, as bytes on the wire
//	result job=N           the job's result: "pid P", "exit CODE [OUT [ERR [FREEMB]]]", "port P",
//	                       "sink BYTES", "mismatch", "size N", "sent N", "progress N", "data TEXT",
//	                       "free MB", "facts DISKMB [TMPBYTES TMPFILES]", "ok", "err TEXT"
type workerHarness struct{}

func (workerHarness) New(t *testing.T, d *datadriven.TestData) loop.Machine[Message] {
	return NewWorker(WorkerConfig{Root: "/data", Env: []string{"FASTSEARCH=/data/fast", "PATH=/bin"}, PID: 4242,
		AllowShell: d.HasArg("shell"), Version: "test"})
}

func (workerHarness) Events(t *testing.T, d *datadriven.TestData) ([]loop.Event[Message], error) {
	var peer, job int
	switch d.Cmd {
	case "connect", "close":
		d.ScanArgs(t, "peer", &peer)
		k := loop.Connected
		if d.Cmd == "close" {
			k = loop.Closed
		}
		return []loop.Event[Message]{{Kind: k, Peer: loop.Peer(peer), Addr: "127.0.0.1:5000"}}, nil
	case "recv":
		d.ScanArgs(t, "peer", &peer)
		r := bufio.NewReader(strings.NewReader(strings.ReplaceAll(d.Input, `\n`, "\n") + "\n"))
		var evs []loop.Event[Message]
		for {
			m, err := Codec{}.Decode(r)
			if errors.Is(err, io.EOF) {
				return evs, nil
			}
			if err != nil {
				return nil, err
			}
			evs = append(evs, loop.Event[Message]{Kind: loop.Received, Peer: loop.Peer(peer), Msg: m})
		}
	case "result":
		d.ScanArgs(t, "job", &job)
		ev := loop.Event[Message]{Kind: loop.Result, Job: uint64(job)}
		f := strings.Fields(d.Input)
		n := func(i int) int64 {
			if i >= len(f) {
				return 0
			}
			v, _ := strconv.ParseInt(f[i], 10, 64)
			return v
		}
		s := func(i int) string {
			if i >= len(f) {
				return ""
			}
			return strings.ReplaceAll(f[i], "_", " ")
		}
		switch f[0] {
		case "pid", "port":
			ev.Result = int(n(1))
		case "exit":
			x := ShellExit{Code: int(n(1)), Stdout: []byte(s(2)), Stderr: []byte(s(3))}
			if len(f) > 4 {
				x.FreeMB, x.Measured = n(4), true
			}
			ev.Result = x
		case "sink":
			ev.Result = SinkDone{Bytes: n(1)}
		case "mismatch":
			ev.Result = SinkDone{Mismatch: true}
		case "size", "sent", "progress":
			ev.Result = n(1)
		case "free":
			ev.Result = n(1) << 20
		case "data":
			ev.Result = []byte(strings.ReplaceAll(strings.TrimPrefix(d.Input, "data "), `\n`, "\n"))
		case "facts":
			ev.Result = HeartbeatFacts{DiskMB: n(1), TmpBytes: n(2), TmpFiles: n(3)}
		case "ok":
		case "err":
			ev.Err = errors.New(strings.TrimPrefix(d.Input, "err "))
		default:
			return nil, fmt.Errorf("unknown result %q", f[0])
		}
		return []loop.Event[Message]{ev}, nil
	}
	return nil, fmt.Errorf("unknown directive %s", d.Cmd)
}

func (workerHarness) Format(b loop.Batch[Message]) string {
	work := b.Work
	b.Work = nil
	s := looptest.FormatCommon(b, func(m Message) string {
		return strings.ReplaceAll(strings.TrimSuffix(string(AppendLine(nil, &m)), "\n"), "\n", `\n`)
	})
	for _, j := range work {
		s += fmt.Sprintf("job %d: %s%+v\n", j.ID, strings.TrimPrefix(fmt.Sprintf("%T", j.Spec), "dmake."), j.Spec)
	}
	return s
}

func TestWorkerTraces(t *testing.T) {
	looptest.Run[Message](t, "testdata/worker_*.trace", workerHarness{})
}
