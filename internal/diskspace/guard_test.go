package diskspace_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/diskspace"
	"github.com/trawl/trawl/internal/diskspace/disktest"
	"github.com/trawl/trawl/internal/testenv"
)

// TestGuardMarks drives a guard with an injected free space: it pauses
// below the low-water mark, stays paused between the marks, resumes at the
// high-water mark, logs one line each way and reads at most once per
// interval.
func TestGuardMarks(t *testing.T) {
	free, reads := uint64(100), 0
	var log testenv.Buffer
	g := diskspace.NewGuard(diskspace.Config{Dir: "/data", Low: 10, High: 30, Interval: time.Second, Role: "test",
		Logger: slog.New(slog.NewTextHandler(&log, nil)),
		Read:   func(string) (uint64, uint64, error) { reads++; return free, 1000, nil }})
	t0 := time.Unix(1000, 0)
	steps := []struct {
		free   uint64
		at     time.Duration
		paused bool
	}{{100, 0, false}, {5, time.Second, true}, {20, 2 * time.Second, true}, {20, 2500 * time.Millisecond, true},
		{30, 3 * time.Second, false}, {9, 4 * time.Second, true}}
	for i, s := range steps {
		free = s.free
		if got := g.Check(t0.Add(s.at)); got != s.paused {
			t.Fatalf("step %d (free %d): paused %v, want %v", i, s.free, got, s.paused)
		}
	}
	if reads != 5 {
		t.Errorf("%d reads, want 5 (once per interval)", reads)
	}
	st := g.Status()
	if !st.Paused || st.Pauses != 2 || st.Low != 10 || st.High != 30 || st.Free != 9 {
		t.Errorf("status %+v", st)
	}
	out := log.String()
	if n := strings.Count(out, "disk full: paused"); n != 2 {
		t.Errorf("%d pause lines, want 2:\n%s", n, out)
	}
	if n := strings.Count(out, "disk space back: resumed"); n != 1 {
		t.Errorf("%d resume lines, want 1:\n%s", n, out)
	}
	var nilGuard *diskspace.Guard
	if nilGuard.Check(t0) || nilGuard.Paused() {
		t.Error("a nil guard is paused")
	}
}

// TestDefaultMarks: 64 MiB or 1 %, whichever is smaller; the high-water
// mark twice the low one.
func TestDefaultMarks(t *testing.T) {
	for _, c := range []struct{ total, low uint64 }{{100 << 20, 1 << 20}, {100 << 30, 64 << 20}, {0, 0}} {
		if got := diskspace.DefaultLow(c.total); got != c.low {
			t.Errorf("DefaultLow(%d) = %d, want %d", c.total, got, c.low)
		}
	}
	g := diskspace.NewGuard(diskspace.Config{Read: func(string) (uint64, uint64, error) { return 1 << 20, 1 << 30, nil }})
	g.Check(time.Now())
	if st := g.Status(); st.Low != (1<<30)/100 || st.High != 2*((1<<30)/100) {
		t.Errorf("marks %d / %d", st.Low, st.High)
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]uint64{"": 0, "0": 0, "4096": 4096, "64MiB": 64 << 20, "2 g": 2 << 30, "10KB": 10 << 10} {
		if got, err := diskspace.ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v, want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"x", "10XB", "-1", "99999999999999999999G"} {
		if _, err := diskspace.ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) accepted", in)
		}
	}
}

func TestIsFull(t *testing.T) {
	if !diskspace.IsFull(fmt.Errorf("store: %w", &os.PathError{Op: "write", Path: "x", Err: syscall.ENOSPC})) {
		t.Error("wrapped ENOSPC not full")
	}
	if !diskspace.IsFull(syscall.EDQUOT) {
		t.Error("EDQUOT not full")
	}
	if diskspace.IsFull(errors.New("no space")) || diskspace.IsFull(nil) {
		t.Error("other errors full")
	}
}

// TestGuardOnTmpfs fills a real 16 MiB tmpfs: the guard pauses, a write
// into the full file system fails with an error IsFull recognises, and the
// guard resumes by itself (Wait returns) once the filler is removed.
func TestGuardOnTmpfs(t *testing.T) {
	dir := disktest.Mount(t, 16<<20)
	g := diskspace.NewGuard(diskspace.Config{Dir: dir, Low: 4 << 20, High: 8 << 20, Interval: 10 * time.Millisecond})
	if g.Check(time.Now()) {
		t.Fatalf("paused on an empty file system: %+v", g.Status())
	}
	f := disktest.Fill(t, dir, 1<<20)
	deadline := time.Now().Add(30 * time.Second)
	for !g.Check(time.Now()) {
		if time.Now().After(deadline) {
			t.Fatalf("not paused with 1 MiB free: %+v", g.Status())
		}
		time.Sleep(5 * time.Millisecond)
	}
	err := os.WriteFile(filepath.Join(dir, "big"), make([]byte, 2<<20), 0o644)
	if !diskspace.IsFull(err) {
		t.Fatalf("writing past the end: %v, want ENOSPC", err)
	}
	os.Remove(filepath.Join(dir, "big"))
	done := make(chan error, 1)
	go func() { done <- g.Wait(t.Context()) }()
	f.Remove(t)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Wait did not return after the space came back")
	}
	if g.Paused() {
		t.Error("still paused")
	}
}

// TestGuardWatch: Watch calls back once when the pause starts and once when
// it ends, never for a reading that changes nothing, and returns when its
// callback fails or its context ends.
func TestGuardWatch(t *testing.T) {
	var mu sync.Mutex
	free := uint64(100)
	g := diskspace.NewGuard(diskspace.Config{Dir: "/data", Low: 10, High: 30, Interval: time.Millisecond,
		Read: func(string) (uint64, uint64, error) { mu.Lock(); defer mu.Unlock(); return free, 1000, nil }})
	setFree := func(n uint64) { mu.Lock(); free = n; mu.Unlock() }
	calls := make(chan bool, 16)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		g.Watch(ctx, func(full bool) error { calls <- full; return nil })
	}()
	want := func(full bool) {
		t.Helper()
		select {
		case got := <-calls:
			if got != full {
				t.Fatalf("callback full=%v, want %v", got, full)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("no callback full=%v", full)
		}
	}
	setFree(5)
	want(true)
	setFree(20) // between the marks: still paused, no call
	time.Sleep(20 * time.Millisecond)
	setFree(40)
	want(false)
	if len(calls) != 0 {
		t.Fatalf("%d extra callbacks", len(calls))
	}
	cancel()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Watch did not return after its context ended")
	}
	// A failing callback (the role's loop has stopped) ends Watch too.
	setFree(5)
	returned := make(chan struct{})
	go func() {
		defer close(returned)
		g.Watch(context.Background(), func(bool) error { return errors.New("loop stopped") })
	}()
	select {
	case <-returned:
	case <-time.After(30 * time.Second):
		t.Fatal("Watch did not return after its callback failed")
	}
}
