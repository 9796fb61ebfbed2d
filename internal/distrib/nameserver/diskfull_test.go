package nameserver

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/diskspace"
	"github.com/trawl/trawl/internal/diskspace/disktest"
	"github.com/trawl/trawl/internal/distrib/wire"
	"github.com/trawl/trawl/internal/testenv"
)

// TestServerHoldsBindingsOnFullDisk runs a name server with its store on a
// 32 MiB tmpfs. Filled to 1 MiB free (under the 4 MiB mark) it pauses (log
// line, DiskStatus): a bind and an unbind are answered and resolve sees
// them, but bindings.log does not grow. Removing the filler resumes it:
// the held records are appended, and the store, reopened, holds exactly
// the bindings of the end.
func TestServerHoldsBindingsOnFullDisk(t *testing.T) {
	fs := disktest.Mount(t, 32<<20)
	dir := filepath.Join(fs, "ns")
	var logs testenv.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	s, err := NewServer(ServerConfig{Listen: "127.0.0.1:0", Dir: dir, PingInterval: -1, Logger: log,
		Disk: diskspace.NewGuard(diskspace.Config{Dir: fs, Low: 4 << 20, High: 8 << 20, Interval: 20 * time.Millisecond, Logger: log, Role: "nameserver"})})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	stop := func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
	defer func() {
		if ctx.Err() == nil {
			stop()
		}
	}()
	c := NewClient(s.Addr(), &wire.Client{Timeout: 5 * time.Second})
	aor := func(name string) wire.AOR {
		return wire.AOR{Name: name, ObjectID: name, Host: "127.0.0.1", Port: 1, Type: Object, Version: "5.1"}
	}
	size := func() int64 {
		fi, err := os.Stat(filepath.Join(dir, "bindings.log"))
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	if err := c.Bind(ctx, aor("one")); err != nil {
		t.Fatal(err)
	}
	before := size()

	filler := disktest.Fill(t, fs, 1<<20)
	waitFor(t, "the pause", func() bool { return s.DiskStatus().Paused })
	waitFor(t, "the machine's pause", func() bool {
		full := false
		if err := s.drv.Do(ctx, func(time.Time) { full = s.m.disk.full }); err != nil {
			t.Fatal(err)
		}
		return full
	})
	if !strings.Contains(logs.String(), "nameserver: disk full: paused") {
		t.Fatalf("no pause line:\n%s", logs.String())
	}
	if err := c.Bind(ctx, aor("two")); err != nil {
		t.Fatal(err)
	}
	if err := c.Unbind(ctx, "one", Object, "5.1"); err != nil {
		t.Fatalf("unbind while the disk is full: %v", err)
	}
	if a, err := c.Resolve(ctx, "two", Object, "5.1"); err != nil || a != aor("two") {
		t.Fatalf("resolve while the disk is full: %+v %v", a, err)
	}
	if got := size(); got != before {
		t.Errorf("bindings.log grew from %d to %d bytes while the disk was full", before, got)
	}

	filler.Remove(t)
	waitFor(t, "the held records written", func() bool { return size() > before })
	if !strings.Contains(logs.String(), "nameserver: disk space back: resumed") {
		t.Errorf("no resume line:\n%s", logs.String())
	}
	stop()
	st, got, err := OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	if len(got) != 1 || got[0] != aor("two") {
		t.Errorf("bindings after reopening: %+v, want only two", got)
	}
}
