package testproc_test

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/testenv"
	"github.com/trawl/trawl/internal/testenv/testproc"
)

// TestStartWaitStop: a process's stdout and stderr lines reach the log,
// WaitLine returns the submatches of the first match, Stop ends a process
// that exits on SIGTERM and one that ignores it (SIGKILL after the grace
// period), and Err then holds the signal.
func TestStartWaitStop(t *testing.T) {
	sh := testenv.Tool(t, "apt-get install dash", "sh")
	p := testproc.Start(t, sh, 0, "-c", `echo "out ready on 127.0.0.1:7"; echo "err line" >&2; exec sleep 60`)
	if m := p.WaitLine(regexp.MustCompile(`ready on (\S+)`), 30*time.Second); m[1] != "127.0.0.1:7" {
		t.Fatalf("submatches %q", m)
	}
	p.WaitLine(regexp.MustCompile(`err line`), 30*time.Second)
	if p.Exited() {
		t.Fatal("exited while sleeping")
	}
	start := time.Now()
	p.Stop(30 * time.Second)
	if !p.Exited() || p.Err() == nil || !strings.Contains(p.Err().Error(), "terminated") {
		t.Fatalf("after Stop: exited %v, err %v", p.Exited(), p.Err())
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("Stop took %v for a process that ends on SIGTERM", d)
	}

	stubborn := testproc.Start(t, sh, 0, "-c", `trap "" TERM; echo trapped; while :; do sleep 1; done`)
	stubborn.WaitLine(regexp.MustCompile(`trapped`), 30*time.Second)
	stubborn.Stop(200 * time.Millisecond)
	select {
	case <-stubborn.Done():
	default:
		t.Fatal("Done not closed after Stop")
	}
	if err := stubborn.Err(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("a process ignoring SIGTERM: err %v, want killed", err)
	}
	stubborn.Kill() // a no-op once it has exited
}

// TestCleanupKills: a process still running when its test ends is killed
// by the test's cleanup.
func TestCleanupKills(t *testing.T) {
	sh := testenv.Tool(t, "apt-get install dash", "sh")
	var p *testproc.Proc
	t.Run("inner", func(t *testing.T) {
		p = testproc.Start(t, sh, 0, "-c", "echo up; exec sleep 60")
		p.WaitLine(regexp.MustCompile(`up`), 30*time.Second)
	})
	if !p.Exited() {
		t.Fatal("the process outlived its test")
	}
}
