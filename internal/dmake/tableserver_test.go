package dmake_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/dmake"
)

// gone reports whether process pid has ended (and been waited for).
func gone(pid int) bool { return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) }

func waitGone(t *testing.T, pid int) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); !gone(pid); {
		if time.Now().After(end) {
			t.Fatalf("process %d still runs", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestExecutorTableServer runs table programs through the executor as the
// worker does, with the real trawl binary: they share one server process
// (the task's pid), a failing program fails its task with its error on
// stderr and exit code 1 while the server goes on, an abort kills the
// server of a running program (the next task gets a new one), and Close
// ends the idle servers.
func TestExecutorTableServer(t *testing.T) {
	ex := &dmake.Executor{Self: trawl.Path(t)}
	ctx := context.Background()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "in"), []byte("b\na\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(id string, argv ...string) (int, dmake.ShellExit) {
		t.Helper()
		key := dmake.TaskKey{1, id}
		pid, err := ex.Do(ctx, dmake.JobShellStart{Key: key, Dir: dir, Argv: argv})
		if err != nil {
			t.Fatal(err)
		}
		x, err := ex.Do(ctx, dmake.JobShellWait{Key: key})
		if err != nil {
			t.Fatal(err)
		}
		ex.Do(ctx, dmake.JobRelease{Key: key})
		return pid.(int), x.(dmake.ShellExit)
	}
	pid1, x := run("1", "table", "sort", "in", "-o", "out")
	if x.Code != 0 || len(x.Stderr) > 0 {
		t.Fatalf("sort: %+v", x)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "out")); string(b) != "a\nb\n" {
		t.Errorf("out = %q", b)
	}
	pid2, x := run("2", "table", "sort", "missing", "-o", "out2")
	if x.Code != 1 || !bytes.Contains(x.Stderr, []byte("missing")) || !x.Measured {
		t.Errorf("sort of a missing file: %+v", x)
	}
	pid3, x := run("3", "table", "sort", "-u", "in", "in", "-o", "out3")
	if b, _ := os.ReadFile(filepath.Join(dir, "out3")); x.Code != 0 || string(b) != "a\nb\n" {
		t.Errorf("sort -u after the failure: %+v, out3 = %q", x, b)
	}
	if pid1 != pid2 || pid2 != pid3 {
		t.Errorf("the tasks ran in processes %d, %d, %d: want one server", pid1, pid2, pid3)
	}

	// A long sort, aborted while it runs.
	var big strings.Builder
	for i := 0; i < 3_000_000; i++ {
		fmt.Fprintf(&big, "%08x %d\n", (i*2654435761)&0xffffffff, i)
	}
	if err := os.WriteFile(filepath.Join(dir, "big"), []byte(big.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	key := dmake.TaskKey{1, "4"}
	pid, err := ex.Do(ctx, dmake.JobShellStart{Key: key, Dir: dir, Argv: []string{"table", "sort", "-k1,1", "big", "-o", "big.s"}})
	if err != nil {
		t.Fatal(err)
	}
	if pid.(int) != pid1 {
		t.Errorf("the long sort ran in %d, not the idle server %d", pid, pid1)
	}
	time.Sleep(50 * time.Millisecond)
	ex.Do(ctx, dmake.JobAbort{Key: key})
	r, err := ex.Do(ctx, dmake.JobShellWait{Key: key})
	if err != nil {
		t.Fatal(err)
	}
	if r.(dmake.ShellExit).Code == 0 {
		t.Errorf("an aborted sort exited 0: %+v", r)
	}
	ex.Do(ctx, dmake.JobRelease{Key: key})
	waitGone(t, pid1)

	pid5, x := run("5", "table", "sort", "in", "-o", "out5")
	if x.Code != 0 || pid5 == pid1 {
		t.Errorf("after the abort: pid %d (killed: %d), %+v", pid5, pid1, x)
	}
	ex.Close()
	waitGone(t, pid5)
}
