package dmake

import (
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/loop"
)

// TestMasterWaitsForWorkerDisk steps a master with one worker that is short
// of disk: it refuses the target's shell 30 times (#error "free disk ...
// below the limit", more than the 20 task errors that fail a build) and
// aborts it once (finish aborted); the master puts the target back each
// time without counting it, keeps the worker out of new assignments for
// diskCooldown, and runs the target when the worker takes it: the build
// does not fail.
func TestMasterWaitsForWorkerDisk(t *testing.T) {
	b, err := ParseBuild(strings.NewReader("target a\n  out a.out\n  run jsort2.exe -o a.out\n"), 1)
	if err != nil {
		t.Fatal(err)
	}
	m := NewMaster(MasterConfig{Seed: 1, Workers: []string{"10.0.0.1:13310"}, Build: b})
	now := time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)
	step := func(ev loop.Event[Message]) loop.Batch[Message] {
		ev.Now = now
		m.Step(ev)
		out := m.Ready()
		m.Advance()
		for _, j := range out.Work {
			if d, ok := j.Spec.(BuildDone); ok && d.Err != nil {
				t.Fatalf("build failed: %v", d.Err)
			}
		}
		return out
	}
	shell := func(out loop.Batch[Message]) string {
		for _, e := range out.Out {
			if e.Msg.Name == CmdShell {
				return string(e.Msg.Args[0])
			}
		}
		return ""
	}
	recv := func(msg *Message) loop.Batch[Message] {
		return step(loop.Event[Message]{Kind: loop.Received, Peer: 1, Msg: *msg})
	}
	step(loop.Event[Message]{Kind: loop.Input})
	id := shell(step(loop.Event[Message]{Kind: loop.Connected, Tag: "0", Peer: 1}))
	for i := range 31 {
		if id == "" {
			t.Fatalf("round %d: the target was not sent again", i)
		}
		if i < 30 {
			recv(New(CmdError, id, "free disk 50 MB below the limit 100 MB"))
		} else {
			recv(New(CmdSlot, TypeShell, id, "99"))
			recv(New(CmdFinish, id, TypeShell, StatusAborted))
		}
		now = now.Add(diskCooldown / 2)
		if got := shell(step(loop.Event[Message]{Kind: loop.Tick})); got != "" {
			t.Fatalf("round %d: task %s sent within the cooldown", i, got)
		}
		now = now.Add(diskCooldown)
		id = shell(step(loop.Event[Message]{Kind: loop.Tick}))
	}
	recv(New(CmdSlot, TypeShell, id, "100"))
	recv(New(CmdFinish, id, TypeShell, StatusCompleted, "0"))
	if m.targets[0].state != tDone {
		t.Fatalf("target a is %v after its run, want done", m.targets[0].state)
	}
}
