package dmake_test

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/distrib/nameserver"
)

// TestBuildWorkersFromNameServer: a name server, three workers that bind
// themselves in it as fdmworker/HOST:PORT, and a master that finds them
// there (no --worker): the build's output equals the reference. The
// workers answer the name server's pings on their own port (their
// bindings outlive several ping rounds), and a worker that stops cleanly
// unbinds itself.
func TestBuildWorkersFromNameServer(t *testing.T) {
	dir := t.TempDir()
	ns := startProc(t, "nameserver", "--listen", "127.0.0.1:0", "--data", filepath.Join(dir, "ns"),
		"--ping-interval", "200ms", "--log-level", "info")
	nsAddr := strings.TrimPrefix(ns.firstLine(t), "nameserver listening on ")
	c := newCluster(t, 4<<20, []string{"--nameserver", nsAddr}, []string{"--nameserver", nsAddr}, []string{"--nameserver", nsAddr})
	// Worker i of the build is the i-th binding name: put the table on
	// the first one, and index the cluster that way.
	sort.Slice(c.workers, func(i, j int) bool { return c.workers[i].addr < c.workers[j].addr })
	for _, w := range c.workers {
		if err := os.Rename(filepath.Join(w.dir, "build", "data.txt"), filepath.Join(c.workers[0].dir, "build", "data.txt")); err == nil {
			break
		}
	}
	cl := nameserver.NewClient(nsAddr, nil)
	ctx := context.Background()
	names := func() []string {
		aors, err := cl.List(ctx, "fdmworker/")
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, a := range aors {
			out = append(out, a.Name+"@"+a.Addr()+" "+a.Type)
		}
		sort.Strings(out)
		return out
	}
	var want []string
	for _, w := range c.workers {
		want = append(want, "fdmworker/"+w.addr+"@"+w.addr+" fdmworker")
	}
	deadline := time.Now().Add(30 * time.Second)
	for strings.Join(names(), ",") != strings.Join(want, ",") {
		if time.Now().After(deadline) {
			t.Fatalf("bindings %q, want %q", names(), want)
		}
		time.Sleep(50 * time.Millisecond)
	}
	m := startProc(t, "dmake", "run", c.build, "--nameserver", nsAddr, "--min-workers", "3", "--compress", "--log-level", "debug")
	if err := m.wait(t, 5*time.Minute); err != nil {
		t.Fatalf("master: %v", err)
	}
	for _, w := range c.workers {
		waitLog(t, m, time.Second, "worker="+w.addr)
	}
	c.check(t)
	// Several ping rounds later every binding is still there.
	time.Sleep(time.Second)
	if got := names(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("after the pings: bindings %q, want %q", got, want)
	}
	if strings.Contains(ns.log.String(), "dropped a dead object") {
		t.Errorf("the name server dropped a live worker:\n%s", tail(ns.log.String(), 2000))
	}
	// A clean stop unbinds.
	c.workers[1].cmd.Process.Signal(syscall.SIGTERM)
	c.workers[1].wait(t, 30*time.Second)
	if got := names(); len(got) != 2 || strings.Contains(strings.Join(got, ","), c.workers[1].addr) {
		t.Errorf("after worker 1 stopped: bindings %q", got)
	}
	waitLog(t, c.workers[1], time.Second, "unbound from the registry")
}
