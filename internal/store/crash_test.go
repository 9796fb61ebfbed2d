package store

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/vfs"
)

const keysPerBatch = 20

// writeCrashBatch commits batch i: keysPerBatch raw keys, a URI record and a
// document, all in one batch.
func writeCrashBatch(s *Store, i int, sync bool) error {
	b := s.NewBatch()
	for j := 0; j < keysPerBatch; j++ {
		if err := b.SetRaw(SpaceQueue, []byte(fmt.Sprintf("b%06d/%02d", i, j)), []byte(strconv.Itoa(i))); err != nil {
			return err
		}
	}
	uri := fmt.Sprintf("http://s/%06d", i)
	if err := b.PutURI("c", &URIRecord{URI: uri, Site: "s", Status: StatusFetched, FetchCount: i}); err != nil {
		return err
	}
	if err := b.PutDocument("c", uri, []byte(fmt.Sprintf("body of %d", i))); err != nil {
		return err
	}
	if sync {
		return b.CommitSync()
	}
	return b.Commit()
}

// checkBatches returns how many batches are complete, failing the test on a
// partial batch or a gap (batches are applied in commit order).
func checkBatches(t *testing.T, s *Store) int {
	t.Helper()
	counts := map[int]int{}
	err := s.IterRaw(SpaceQueue, []byte("b"), func(k, v []byte) error {
		var i, j int
		if _, err := fmt.Sscanf(string(k), "b%06d/%02d", &i, &j); err != nil {
			return err
		}
		counts[i]++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for ; counts[n] > 0; n++ {
		if counts[n] != keysPerBatch {
			t.Fatalf("batch %d is partial: %d of %d keys", n, counts[n], keysPerBatch)
		}
		uri := fmt.Sprintf("http://s/%06d", n)
		if r, ok, err := s.URI("c", uri); err != nil || !ok || r.FetchCount != n {
			t.Fatalf("batch %d: record %+v %v %v", n, r, ok, err)
		}
		if d, ok, err := s.Document("c", uri); err != nil || !ok || string(d) != fmt.Sprintf("body of %d", n) {
			t.Fatalf("batch %d: document %q %v %v", n, d, ok, err)
		}
	}
	if len(counts) != n {
		t.Fatalf("batches present beyond a gap at %d: %d batches in all", n, len(counts))
	}
	if c, _ := s.CountURIs("c"); c != n {
		t.Fatalf("%d records for %d batches", c, n)
	}
	return n
}

// TestCrashStrictMem simulates a machine crash: whatever was not fsynced is
// discarded. Synced commits all survive; unsynced ones survive whole or not
// at all.
func TestCrashStrictMem(t *testing.T) {
	for _, tc := range []struct {
		name     string
		syncOpt  bool
		wantKept int
	}{
		{"nosync default: synced commits survive", false, 50},
		{"sync option: every commit survives", true, 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := vfs.NewStrictMem()
			s, err := Open("", Options{FS: fs, Sync: tc.syncOpt})
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 100; i++ {
				// The first 50 batches wait for fsync explicitly.
				if err := writeCrashBatch(s, i, i < 50); err != nil {
					t.Fatal(err)
				}
			}
			fs.SetIgnoreSyncs(true)
			s.Close()
			fs.ResetToSyncedState()
			fs.SetIgnoreSyncs(false)
			s, err = Open("", Options{FS: fs})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			n := checkBatches(t, s)
			if n < tc.wantKept {
				t.Errorf("%d batches survived, want at least %d", n, tc.wantKept)
			}
		})
	}
}

const crashChildEnv = "TRAWL_STORE_CRASH_CHILD"

// TestCrashKill9 runs its own test binary as a child that commits batches
// and reports on stdout which of them are durable; the parent kills it with
// SIGKILL mid-way, reopens the store and checks that every acknowledged
// batch is there whole, that no batch is partial and that there is no gap.
//
// Both durability settings acknowledge every commit as it returns:
// Options.Sync (fsync per commit) and the default (the commit returns once
// its record reached the kernel, internal/pebblefs), which a killed
// process must not lose either.
func TestCrashKill9(t *testing.T) {
	if v := os.Getenv(crashChildEnv); v != "" {
		mode, dir, _ := strings.Cut(v, ":")
		crashChild(mode, dir)
		return
	}
	for _, mode := range []string{"sync", "default"} {
		t.Run(mode, func(t *testing.T) { runKill9(t, mode) })
	}
}

func runKill9(t *testing.T, mode string) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashKill9$")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+mode+":"+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	last := -1
	deadline := time.Now().Add(60 * time.Second)
	for sc.Scan() {
		n, err := strconv.Atoi(sc.Text())
		if err != nil {
			continue // test framework chatter
		}
		last = n
		if n >= 300 || time.Now().After(deadline) {
			break
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// Drain so the child is not blocked on a full pipe, then reap it.
	go func() {
		for sc.Scan() {
		}
	}()
	err = cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("child did not die of SIGKILL: %v", err)
	}
	if last < 0 {
		t.Fatal("child acknowledged no batch")
	}
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	n := checkBatches(t, s)
	if n < last+1 {
		t.Fatalf("acknowledged batch %d lost: only %d batches survived", last, n)
	}
	t.Logf("child acknowledged %d batches as durable, %d survived the kill", last+1, n)
}

func crashChild(mode, dir string) {
	s, err := Open(dir, Options{Sync: mode == "sync"})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	w := bufio.NewWriter(os.Stdout)
	for i := 0; i < 1_000_000; i++ {
		if err := writeCrashBatch(s, i, false); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		fmt.Fprintln(w, i)
		w.Flush()
	}
	os.Exit(3) // never reached in practice: the parent kills us first
}
