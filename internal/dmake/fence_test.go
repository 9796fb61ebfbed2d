package dmake_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTwoMastersOneDirectory: two trawl dmake run processes with the same
// build directory against one trawl dmake worker process. The worker pins
// the directory to the first master's build id (sent with cd): the second
// master's tasks get #error while the first master is connected, so its
// target waits; once the first master has finished and closed its
// connection the second one's target runs and its build completes. The
// first build sees no error at all.
func TestTwoMastersOneDirectory(t *testing.T) {
	dir := t.TempDir()
	w := startWorker(t, dir, "--allow-shell")
	build := filepath.Join(t.TempDir(), "build.dmk")
	if err := os.WriteFile(build, []byte("dir shared\ntarget slow\n  out slow.out\n  run sh slow.sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "shared"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "shared", "slow.sh"), []byte("sleep 4\necho done > slow.out\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	workers := []*proc{w}
	m1 := startMaster(t, build, workers)
	waitLog(t, m1, time.Minute, "starting target")
	m2 := startMaster(t, build, workers)
	waitLog(t, m2, time.Minute, "is in use by build")
	select {
	case err := <-m1.done:
		t.Fatalf("the first master ended (%v) before the second was refused", err)
	default:
	}
	if err := m1.wait(t, 2*time.Minute); err != nil {
		t.Fatalf("first master: %v", err)
	}
	first := time.Now()
	if err := m2.wait(t, 2*time.Minute); err != nil {
		t.Fatalf("second master: %v", err)
	}
	if l := m1.log.String(); strings.Contains(l, "task error") || !strings.Contains(l, "build complete") {
		t.Errorf("first master's log:\n%s", tail(l, 3000))
	}
	// The second master's target ran after the first master left: the
	// whole sleep lies after it.
	if d := time.Since(first); d < 3*time.Second {
		t.Errorf("second master ended %v after the first: its target cannot have waited", d)
	}
	if l := m2.log.String(); !strings.Contains(l, "build complete") {
		t.Errorf("second master's log:\n%s", tail(l, 3000))
	}
}
