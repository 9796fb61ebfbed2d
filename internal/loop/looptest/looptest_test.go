package looptest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/loop"
)

// counter is a toy machine: "add N" from a peer persists the new total and
// answers it; a tick past its deadline says "late".
type counter struct {
	loop.Base[string]
	total int
	seen  bool
}

func (c *counter) Step(ev loop.Event[string]) {
	switch ev.Kind {
	case loop.Received:
		var n int
		fmt.Sscanf(ev.Msg, "add %d", &n)
		c.total += n
		c.Pending.Persist = append(c.Pending.Persist, fmt.Sprintf("total=%d", c.total))
		c.Pending.Send(ev.Peer, fmt.Sprintf("total %d", c.total), 0)
		c.Pending.WakeAt(ev.Now.Add(5e9))
		c.seen = true
	case loop.Tick:
		if c.seen {
			c.Pending.Log(0, "late")
			c.seen = false
		}
	}
}

type counterHarness struct{}

func (counterHarness) New(t *testing.T, d *datadriven.TestData) loop.Machine[string] {
	return &counter{}
}

func (counterHarness) Events(t *testing.T, d *datadriven.TestData) ([]loop.Event[string], error) {
	if d.Cmd != "recv" {
		return nil, fmt.Errorf("unknown command %s", d.Cmd)
	}
	var peer int
	d.ScanArgs(t, "peer", &peer)
	var evs []loop.Event[string]
	for _, l := range strings.Split(strings.TrimSpace(d.Input), "\n") {
		evs = append(evs, loop.Event[string]{Kind: loop.Received, Peer: loop.Peer(peer), Msg: l})
	}
	return evs, nil
}

func (counterHarness) Format(b loop.Batch[string]) string {
	return FormatCommon(b, func(s string) string { return s })
}

// Inspect answers "total" without stepping the machine.
func (counterHarness) Inspect(t *testing.T, d *datadriven.TestData, m loop.Machine[string]) (string, bool) {
	if d.Cmd != "total" {
		return "", false
	}
	return fmt.Sprintf("total=%d", m.(*counter).total), true
}

func TestTraces(t *testing.T) { Run[string](t, "testdata/*.trace", counterHarness{}) }

func TestCMT(t *testing.T) {
	cs := cmt.Checksum{1}
	got := CMT(&cmt.PPDUPAddOK{Collection: "web", URI: "http://a/ b", OwnerURI: "x", Checksum: cs},
		func(c cmt.Checksum) string {
			if c == cs {
				return "doc"
			}
			return ""
		}, nil)
	if want := `PPDUP_ADD_OK Collection=web URI="http://a/ b" OwnerURI=x Checksum=doc`; got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	got = CMT(&cmt.PPDUPSetConfig{Collection: "web", VClock: 3}, nil, func(name string, v any) (string, bool) {
		return "<" + name + ">", name == "VClock"
	})
	if want := "PPDUP_SET_CONFIG Collection=web VClock=<VClock>"; got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if got := CMT(&cmt.PPDUPKeepalive{}, nil, nil); got != "PPDUP_KEEPALIVE" {
		t.Fatalf("got %s", got)
	}
}
