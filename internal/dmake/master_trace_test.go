package dmake

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/trawl/trawl/internal/loop"
	"github.com/trawl/trawl/internal/loop/looptest"
)

// masterHarness drives a Master machine from traces under testdata/:
//
//	new workers=N [timeout=D] [period=D] [slots=N] [build=ID]   the input is the build file
//	start                  the first event (the driver's kick)
//	connect w=I peer=P     the dial of worker I succeeded as peer P
//	dialfail w=I           the dial of worker I failed
//	close peer=P           the connection closed
//	recv peer=P            the input's lines arrive from that worker
type masterHarness struct{}

func (masterHarness) New(t *testing.T, d *datadriven.TestData) loop.Machine[Message] {
	var n int
	d.ScanArgs(t, "workers", &n)
	cfg := MasterConfig{Seed: 1}
	for i := 0; i < n; i++ {
		cfg.Workers = append(cfg.Workers, fmt.Sprintf("10.0.0.%d:13310", i+1))
	}
	if d.HasArg("timeout") {
		var s string
		d.ScanArgs(t, "timeout", &s)
		cfg.HeartbeatTimeout = mustDuration(t, s)
	}
	if d.HasArg("period") {
		var s string
		d.ScanArgs(t, "period", &s)
		cfg.HeartbeatPeriod = mustDuration(t, s)
	}
	if d.HasArg("slots") {
		d.ScanArgs(t, "slots", &cfg.Slots)
	}
	if d.HasArg("build") {
		d.ScanArgs(t, "build", &cfg.BuildID)
	}
	b, err := ParseBuild(strings.NewReader(d.Input), n)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Build = b
	return NewMaster(cfg)
}

func (masterHarness) Events(t *testing.T, d *datadriven.TestData) ([]loop.Event[Message], error) {
	var peer, w int
	switch d.Cmd {
	case "start":
		return []loop.Event[Message]{{Kind: loop.Input}}, nil
	case "connect":
		d.ScanArgs(t, "w", &w)
		d.ScanArgs(t, "peer", &peer)
		return []loop.Event[Message]{{Kind: loop.Connected, Tag: strconv.Itoa(w), Peer: loop.Peer(peer)}}, nil
	case "dialfail":
		d.ScanArgs(t, "w", &w)
		return []loop.Event[Message]{{Kind: loop.DialFailed, Tag: strconv.Itoa(w), Err: errors.New("refused")}}, nil
	case "close":
		d.ScanArgs(t, "peer", &peer)
		return []loop.Event[Message]{{Kind: loop.Closed, Peer: loop.Peer(peer)}}, nil
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
	}
	return nil, fmt.Errorf("unknown directive %s", d.Cmd)
}

// Format prints lines with their base64 decoded (in «») for reading.
func (masterHarness) Format(b loop.Batch[Message]) string {
	var logs []loop.LogLine
	for _, l := range b.Logs {
		if l.Level >= 0 { // INFO and above
			logs = append(logs, l)
		}
	}
	b.Logs = logs
	return looptest.FormatCommon(b, func(m Message) string {
		var sb strings.Builder
		sb.WriteString("#" + m.Name)
		for _, n := range m.Named {
			sb.WriteString(" #" + n.Name + "=" + string(n.Value))
		}
		for _, a := range m.Args {
			if plainSafe(a) {
				sb.WriteString(" " + string(a))
			} else {
				sb.WriteString(" «" + string(a) + "»")
			}
		}
		return sb.String()
	})
}

func mustDuration(t *testing.T, s string) time.Duration {
	d, err := time.ParseDuration(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestMasterTraces(t *testing.T) {
	looptest.Run[Message](t, "testdata/master_*.trace", masterHarness{})
}
