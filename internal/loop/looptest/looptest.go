// Package looptest runs data-driven scenario traces against a loop.Machine,
// in the style of etcd raft's interaction tests and pebble's datadriven
// tests: each trace file under a role's testdata/ lists events in and the
// batch each one produced, and the test fails when a batch differs (run
// with -rewrite to regenerate the expected output after a deliberate change).
//
// A role supplies a Harness: how to build its machine from a directive's
// arguments, how to turn a directive into events, and how to print a batch.
// The commands common to every role are handled here:
//
//	new <args>          build a fresh machine (Harness.New)
//	<cmd> <args>        any other command: Harness.Events turns it into
//	                    events, which are stepped in order; the output is
//	                    the batch they produced, printed by Harness.Format
//	                    (or "ok" for an empty batch), then Advance is called
//
// A Harness that also implements Inspector may answer commands of its own
// that step nothing (print the store, the machine's status): Inspect is
// asked first, and its output used when it reports the command handled.
//
// Time is the trace's own clock: it starts at Start and moves only with
// "advance <duration>", which also steps a Tick.
package looptest

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/trawl/trawl/internal/loop"
)

// Start is the time every trace begins at.
var Start = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Harness adapts a role's machine to traces.
type Harness[M any] interface {
	// New builds a machine for the "new" directive.
	New(t *testing.T, d *datadriven.TestData) loop.Machine[M]
	// Events turns any other directive into events (Now is filled in).
	Events(t *testing.T, d *datadriven.TestData) ([]loop.Event[M], error)
	// Format prints a batch, one action a line.
	Format(b loop.Batch[M]) string
}

// Inspector is an optional part of a Harness: commands that look at the
// machine or its surroundings without stepping it.
type Inspector[M any] interface {
	// Inspect answers d, or reports false to let Events have it.
	Inspect(t *testing.T, d *datadriven.TestData, m loop.Machine[M]) (string, bool)
}

// Run runs every trace file matching glob (e.g. "testdata/*.trace").
func Run[M any](t *testing.T, glob string, h Harness[M]) {
	paths, err := filepath.Glob(glob)
	if err != nil || len(paths) == 0 {
		t.Fatalf("looptest: no trace matches %s (%v)", glob, err)
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) { runFile(t, path, h) })
	}
}

func runFile[M any](t *testing.T, path string, h Harness[M]) {
	{
		var m loop.Machine[M]
		now := Start
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			switch d.Cmd {
			case "new":
				m = h.New(t, d)
				now = Start
				return step(m, h, nil)
			case "advance":
				var s string
				d.ScanArgs(t, "by", &s)
				dur, err := time.ParseDuration(s)
				if err != nil {
					d.Fatalf(t, "advance: %v", err)
				}
				now = now.Add(dur)
				return step(m, h, []loop.Event[M]{{Kind: loop.Tick, Now: now}})
			}
			if m == nil {
				d.Fatalf(t, "%s before new", d.Cmd)
			}
			if in, ok := h.(Inspector[M]); ok {
				if out, ok := in.Inspect(t, d, m); ok {
					if !strings.HasSuffix(out, "\n") {
						out += "\n"
					}
					return out
				}
			}
			evs, err := h.Events(t, d)
			if err != nil {
				return "error: " + err.Error()
			}
			for i := range evs {
				if evs[i].Now.IsZero() {
					evs[i].Now = now
				}
			}
			return step(m, h, evs)
		})
	}
}

func step[M any](m loop.Machine[M], h Harness[M], evs []loop.Event[M]) string {
	for _, ev := range evs {
		m.Step(ev)
	}
	b := m.Ready()
	m.Advance()
	if b.Empty() {
		return "ok\n"
	}
	s := h.Format(b)
	if !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return s
}

// FormatCommon prints the parts of a batch that are the same for every
// role, with msg printing one message; roles may use it as their Format.
func FormatCommon[M any](b loop.Batch[M], msg func(M) string) string {
	var sb strings.Builder
	for _, r := range b.Persist {
		fmt.Fprintf(&sb, "persist %v\n", r)
	}
	for _, e := range b.Out {
		if e.Close {
			fmt.Fprintf(&sb, "close %d: %s\n", e.To, e.Reason)
			continue
		}
		fmt.Fprintf(&sb, "send %d: %s\n", e.To, msg(e.Msg))
	}
	for _, r := range b.Dial {
		fmt.Fprintf(&sb, "dial %s %s\n", r.Tag, r.Addr)
	}
	for _, j := range b.Work {
		fmt.Fprintf(&sb, "job %d: %v\n", j.ID, j.Spec)
	}
	for _, l := range b.Logs {
		fmt.Fprintf(&sb, "log %s %s %v\n", l.Level, l.Msg, l.Args)
	}
	if !b.Wake.IsZero() {
		fmt.Fprintf(&sb, "wake %s\n", b.Wake.Sub(Start))
	}
	return sb.String()
}
