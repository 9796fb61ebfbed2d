package diskspace_test

import (
	"crypto/rand"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble"

	"github.com/trawl/trawl/internal/diskspace/disktest"
)

// TestPebbleExitsOnFullDisk is why the roles pause at a low-water mark
// instead of waiting for ENOSPC (docs/decisions/diskspace.md): a child
// process writes synced 64 KiB values into Pebble on a 12 MiB tmpfs until
// the file system is full, and Pebble ends the process itself ("pebble:
// fatal commit error ... no space left on device") instead of returning an
// error to the caller. Should a Pebble upgrade change that, this test says
// so.
func TestPebbleExitsOnFullDisk(t *testing.T) {
	if dir := os.Getenv("TRAWL_PEBBLE_FULL_DIR"); dir != "" {
		fillPebble(dir)
		return
	}
	dir := disktest.Mount(t, 12<<20)
	cmd := exec.Command(os.Args[0], "-test.run=^TestPebbleExitsOnFullDisk$", "-test.count=1")
	cmd.Env = append(os.Environ(), "TRAWL_PEBBLE_FULL_DIR="+dir)
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the child survived a full disk:\n%s", out)
	}
	if !strings.Contains(string(out), "pebble: fatal commit error") || !strings.Contains(string(out), "no space left on device") {
		t.Fatalf("the child failed otherwise (%v):\n%s", err, out)
	}
	if strings.Contains(string(out), "returned: ") {
		t.Errorf("Pebble returned the error instead of ending the process:\n%s", out)
	}
}

// fillPebble writes until Pebble fails; it prints what a returned error
// said (a Pebble that returns it) and exits 0 only if none came.
func fillPebble(dir string) {
	db, err := pebble.Open(dir+"/db", &pebble.Options{})
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(2)
	}
	v := make([]byte, 64<<10)
	for i := 0; i < 1000; i++ {
		rand.Read(v)
		if err := db.Set(fmt.Appendf(nil, "k%d", i), v, pebble.Sync); err != nil {
			fmt.Println("returned:", err)
			os.Exit(3)
		}
	}
	fmt.Println("no error after 64 MiB on a 12 MiB file system")
	db.Close()
}
