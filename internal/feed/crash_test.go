package feed

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

const crashEnv = "TRAWL_FEED_CRASH_DIR"

// crashScenario is what the child feeds before it is killed.
var crashScenario = scenario{n: 400}

// withholding is a session that applies every batch to the index but
// never answers the first two batches: their operations are in the index
// and still in the outbox, as after a lost callback.
type withholding struct {
	Session
	count *atomic.Int64
}

func (w *withholding) Submit(ctx context.Context, batch []Operation, cb Callback) error {
	if w.count.Add(1) <= 2 {
		return w.Session.Submit(ctx, batch, func(uint64, error) {})
	}
	return w.Session.Submit(ctx, batch, cb)
}

// TestCrashChild is the child process of TestFeederKill9: it does nothing
// unless started by it.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv(crashEnv)
	if dir == "" {
		return
	}
	ob, err := OpenOutbox(filepath.Join(dir, "outbox"), OutboxOptions{})
	if err != nil {
		fmt.Println("ERROR", err)
		os.Exit(3)
	}
	idx := newIndex(t, filepath.Join(dir, "index"))
	var submitted atomic.Int64
	inner := IndexDialer(idx)
	dial := func(ctx context.Context, tg Target) (Session, error) {
		s, err := inner(ctx, tg)
		return &withholding{Session: s, count: &submitted}, err
	}
	var acked atomic.Int64
	f, err := NewFeeder(ob, []Target{{Name: "main", Collection: "web", Primary: true}}, dial,
		FeederOptions{BatchOps: 5, Window: 4, OnResult: func(Result) {
			if acked.Add(1)%20 == 0 {
				fmt.Println("ACKED", acked.Load())
			}
		}})
	if err != nil {
		fmt.Println("ERROR", err)
		os.Exit(3)
	}
	for _, chunk := range crashScenario.ops() {
		if err := f.Feed(context.Background(), chunk...); err != nil {
			fmt.Println("ERROR", err)
			os.Exit(3)
		}
	}
	fmt.Println("FED")
	_ = f.Run(context.Background()) // until killed
}

// TestFeederKill9 feeds from a child process, kills it with SIGKILL in the
// middle of feeding, restarts the feeder on the same outbox and index, and
// checks that the index ends with exactly the live documents: nothing lost
// (operations never acknowledged, including the ones whose callback never
// came, are resent) and nothing doubled.
func TestFeederKill9(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashEnv+"="+dir)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 100)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default:
			}
		}
		close(lines)
	}()
	deadline := time.After(60 * time.Second)
	fed := false
wait:
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("child exited early")
			}
			if strings.HasPrefix(l, "ERROR") {
				t.Fatalf("child: %s", l)
			}
			fed = fed || l == "FED"
			var n int
			if _, err := fmt.Sscanf(l, "ACKED %d", &n); err == nil && fed && n >= 100 {
				break wait
			}
		case <-deadline:
			_ = cmd.Process.Kill()
			t.Fatal("child made no progress")
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	wg.Wait()

	ob, err := OpenOutbox(filepath.Join(dir, "outbox"), OutboxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer ob.Close()
	left := ob.Pending("main")
	if left == 0 {
		t.Fatal("the child finished before it was killed; nothing to resend")
	}
	idx := newIndex(t, filepath.Join(dir, "index"))
	defer idx.Close()
	f, err := NewFeeder(ob, []Target{{Name: "main", Collection: "web", Primary: true}}, IndexDialer(idx), FeederOptions{})
	if err != nil {
		t.Fatal(err)
	}
	runFeeder(t, f)
	waitFor(t, "outbox to drain after restart", func() bool { return ob.Pending("main") == 0 })
	crashScenario.check(t, idx, "web")
	if n, _ := idx.Count(); n != uint64(crashScenario.live()) {
		t.Errorf("index has %d documents, want %d", n, crashScenario.live())
	}
	t.Logf("%d operations were left in the outbox at the kill", left)
}
