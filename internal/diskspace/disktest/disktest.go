// Package disktest gives tests a small file system of their own: a
// size-limited tmpfs mounted in a temporary directory (Mount), and a filler
// file that takes its free space away and gives it back (Fill). Mounting
// needs root; without it the test skips, or fails under CI=true
// (internal/testenv). Only tests import this package.
package disktest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/trawl/trawl/internal/diskspace"
	"github.com/trawl/trawl/internal/testenv"
)

// Mount mounts a tmpfs of size bytes on a new temporary directory and
// returns it; it is unmounted when the test ends.
func Mount(t testing.TB, size uint64) string {
	t.Helper()
	if runtime.GOOS != "linux" {
		testenv.Missing(t, "disktest: a tmpfs needs Linux")
	}
	if os.Geteuid() != 0 {
		testenv.Missing(t, "disktest: mounting a tmpfs needs root")
	}
	mnt, err := exec.LookPath("mount")
	if err != nil {
		testenv.Missing(t, "disktest: no mount(8) (apt-get install mount)")
	}
	dir := filepath.Join(t.TempDir(), "fs")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(mnt, "-t", "tmpfs", "-o", fmt.Sprintf("size=%d", size), "tmpfs", dir).CombinedOutput()
	if err != nil {
		testenv.Missing(t, "disktest: cannot mount a tmpfs: %v: %s", err, bytes.TrimSpace(out))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			// A process of the test may still hold a file: lazily.
			if out2, err2 := exec.Command("umount", "-l", dir).CombinedOutput(); err2 != nil {
				t.Errorf("disktest: umount %s: %v: %s / %s", dir, err, out, out2)
			}
		}
	})
	return dir
}

// Filler is a file that holds a file system's free space.
type Filler struct {
	path string
}

// Fill writes a filler file in dir until the free space of its file system
// is at most leave bytes.
func Fill(t testing.TB, dir string, leave uint64) *Filler {
	t.Helper()
	f := &Filler{path: filepath.Join(dir, "disktest-filler")}
	fh, err := os.OpenFile(f.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	chunk := make([]byte, 1<<20)
	for {
		free, _, err := diskspace.Read(dir)
		if err != nil {
			t.Fatal(err)
		}
		if free <= leave {
			return f
		}
		n := min(uint64(len(chunk)), free-leave)
		if _, err := fh.Write(chunk[:n]); err != nil {
			if diskspace.IsFull(err) {
				return f
			}
			t.Fatal(err)
		}
	}
}

// Remove deletes the filler: its space is free again.
func (f *Filler) Remove(t testing.TB) {
	t.Helper()
	if err := os.Remove(f.path); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
}
