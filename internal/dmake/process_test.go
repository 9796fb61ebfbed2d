package dmake_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/table"
	"github.com/trawl/trawl/internal/testenv"
	"github.com/trawl/trawl/internal/testenv/testproc"
)

// The tests here run the real thing: a trawl binary built once, a master
// and three workers as separate processes talking over TCP on loopback.

// trawl is the binary the tests run, built on first use.
var trawl = &testproc.Binary{Race: raceEnabled, Prefix: "dmake-trawl-"}

func TestMain(m *testing.M) {
	code := m.Run()
	trawl.Remove()
	os.Exit(code)
}

type proc struct {
	cmd   *exec.Cmd
	log   *testenv.Buffer
	addr  string
	dir   string
	done  chan error
	lines chan string
}

func startProc(t *testing.T, args ...string) *proc {
	t.Helper()
	p := &proc{log: &testenv.Buffer{}, done: make(chan error, 1)}
	p.cmd = exec.Command(trawl.Path(t), args...)
	p.cmd.Stderr = p.log
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		if sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		io.Copy(io.Discard, out)
		p.done <- p.cmd.Wait()
	}()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		if t.Failed() {
			t.Logf("log of %v:\n%s", args[:2], tail(p.log.String(), 6000))
		}
	})
	p.lines = lines
	return p
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// lines carries a process's first stdout line.
func (p *proc) firstLine(t *testing.T) string {
	t.Helper()
	select {
	case l, ok := <-p.lines:
		if !ok {
			t.Fatalf("process exited before printing: %s", p.log.String())
		}
		return l
	case <-time.After(60 * time.Second):
		t.Fatal("process did not start")
	}
	return ""
}

func startWorker(t *testing.T, dir string, extra ...string) *proc {
	t.Helper()
	args := append([]string{"dmake", "worker", "--listen", "127.0.0.1:0", "--data", dir, "--log-level", "debug"}, extra...)
	p := startProc(t, args...)
	p.dir = dir
	p.addr = strings.TrimPrefix(p.firstLine(t), "listening ")
	return p
}

func startMaster(t *testing.T, buildFile string, workers []*proc, extra ...string) *proc {
	t.Helper()
	args := []string{"dmake", "run", buildFile, "--log-level", "debug"}
	for _, w := range workers {
		args = append(args, "--worker", w.addr)
	}
	return startProc(t, append(args, extra...)...)
}

func (p *proc) wait(t *testing.T, d time.Duration) error {
	t.Helper()
	select {
	case err := <-p.done:
		return err
	case <-time.After(d):
		t.Fatalf("process still running after %v", d)
	}
	return nil
}

// waitLog polls a log until it holds every string of want.
func waitLog(t *testing.T, p *proc, d time.Duration, want ...string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		s := p.log.String()
		all := true
		for _, w := range want {
			all = all && strings.Contains(s, w)
		}
		if all {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("log never showed %q", want)
}

// waitLine polls a log until one line holds every string of want.
func waitLine(t *testing.T, p *proc, d time.Duration, want ...string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		for _, l := range strings.Split(p.log.String(), "\n") {
			all := true
			for _, w := range want {
				all = all && strings.Contains(l, w)
			}
			if all {
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("log never showed a line with %q", want)
}

// genTable writes about size bytes of "key number word" records.
func genTable(t testing.TB, path string, size int64) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	r := rand.New(rand.NewPCG(7, 7))
	keys := max(size/400, 10)
	var n int64
	for n < size {
		k, _ := fmt.Fprintf(w, "k%07d %d w%x\n", r.Int64N(keys), r.IntN(2000)-1000, r.Uint32())
		n += int64(k)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// buildFile is the test build: split the table three ways, sort each part,
// merge the sorted parts, sum the numbers per key (reduce) and join the sums
// back onto the records (merge). joined.0 ends on worker 2.
const buildFile = `# a sort, split, merge and reduce over data.txt
dir build
disk_limit 100
file data.txt 0
target split
  in data.txt
  out part.0 part.1 part.2
  run cobra $FASTSEARCH\lib\python2.5\split.pyc data.txt -o part:1:3
target sort0
  in part.0
  out sorted.0
  run jsort2.exe -S 16M -T . -k1,1 part.0 -o sorted.0
target sort1
  in part.1
  out sorted.1
  run jsort2.exe -S 16M -T . -k1,1 part.1 -o sorted.1
target sort2
  in part.2
  out sorted.2
  run jsort2.exe -S 16M -T . -k1,1 part.2 -o sorted.2
target merge
  in sorted.0 sorted.1 sorted.2
  out all.sorted
  run jsort2.exe -S 16M -T . -m -k1,1 sorted.0 sorted.1 sorted.2 -o all.sorted
target sums
  in all.sorted
  out sums.0
  run cobra $FASTSEARCH\lib\python2.5\reduce.pyc -i all.sorted:3:1 -o sums:1:1 -l table.sum
target join
  in all.sorted sums.0
  out joined.0
  run cobra $FASTSEARCH\lib\python2.5\merge.pyc -i all.sorted:3:1 -i sums.0:2:1 -o joined:1:1 -l table.join
keep joined.0 2
keep all.sorted 2
`

type cluster struct {
	dir     string
	data    string
	build   string
	workers []*proc
}

// newCluster starts three workers; the table of size bytes is on worker 0.
func newCluster(t *testing.T, size int64, workerFlags ...[]string) *cluster {
	t.Helper()
	c := &cluster{dir: t.TempDir()}
	c.data = filepath.Join(c.dir, "data.txt")
	genTable(t, c.data, size)
	c.build = filepath.Join(c.dir, "build.txt")
	if err := os.WriteFile(c.build, []byte(buildFile), 0o644); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		wd := filepath.Join(c.dir, fmt.Sprintf("w%d", i))
		os.MkdirAll(filepath.Join(wd, "build"), 0o755)
		if i == 0 {
			if err := os.Link(c.data, filepath.Join(wd, "build", "data.txt")); err != nil {
				t.Fatal(err)
			}
		}
		var flags []string
		if i < len(workerFlags) {
			flags = workerFlags[i]
		}
		c.workers = append(c.workers, startWorker(t, wd, flags...))
	}
	return c
}

// reference computes the build in this process with the table engine:
// one sort of the whole table, the reduce and the merge.
func reference(t *testing.T, data string) (sorted, joined []byte) {
	t.Helper()
	dir := t.TempDir()
	ctx := context.Background()
	s := filepath.Join(dir, "all.sorted")
	opt := table.SortOptions{Mem: 64 << 20, Keys: []table.SortKey{{Start: 1, End: 1}}}
	if err := table.Sort(ctx, []string{data}, s, opt); err != nil {
		t.Fatal(err)
	}
	reg := table.NewRegistry()
	sum, _ := reg.Reduce("table.sum", nil)
	sums := table.OutputSpec{Prefix: filepath.Join(dir, "sums"), Key: 1, Split: 1}
	if err := table.Reduce(ctx, table.InputSpec{File: s, NumCols: 3, Key: 1}, sums, sum); err != nil {
		t.Fatal(err)
	}
	join, _ := reg.Merge("table.join", nil)
	out := table.OutputSpec{Prefix: filepath.Join(dir, "joined"), Key: 1, Split: 1}
	err := table.Merge(ctx, []table.InputSpec{{File: s, NumCols: 3, Key: 1}, {File: sums.Name(0), NumCols: 2, Key: 1}}, out, join, false)
	if err != nil {
		t.Fatal(err)
	}
	sorted, _ = os.ReadFile(s)
	joined, _ = os.ReadFile(out.Name(0))
	return sorted, joined
}

// check compares the kept outputs on worker 2 with the reference, and the
// sort with GNU sort when it is there; the intermediate files must be gone
// from every worker but the killed ones.
func (c *cluster) check(t *testing.T, killed ...int) {
	t.Helper()
	wantSorted, wantJoined := reference(t, c.data)
	gotSorted, err := os.ReadFile(filepath.Join(c.workers[2].dir, "build", "all.sorted"))
	if err != nil {
		t.Fatal(err)
	}
	gotJoined, err := os.ReadFile(filepath.Join(c.workers[2].dir, "build", "joined.0"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(gotSorted, wantSorted) {
		t.Errorf("all.sorted differs from the single-process sort (%d vs %d bytes)", len(gotSorted), len(wantSorted))
	}
	if !bytes.Equal(gotJoined, wantJoined) {
		t.Errorf("joined.0 differs from the single-process reference (%d vs %d bytes)", len(gotJoined), len(wantJoined))
	}
	if len(wantJoined) == 0 {
		t.Error("empty reference")
	}
	if _, err := exec.LookPath("sort"); err == nil {
		cmd := exec.Command("sort", "-t", " ", "-k1,1", c.data)
		cmd.Env = append(os.Environ(), "LC_ALL=C")
		gnu, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(gnu, gotSorted) {
			t.Error("all.sorted differs from LC_ALL=C GNU sort -t ' ' -k1,1")
		}
	} else {
		testenv.Missing(t, "GNU sort not installed")
	}
	// Intermediate files are removed; only the kept ones stay.
	for i, w := range c.workers {
		if slices.Contains(killed, i) {
			continue
		}
		ents, _ := os.ReadDir(filepath.Join(w.dir, "build"))
		for _, e := range ents {
			n := e.Name()
			if n == "data.txt" && i == 0 || (n == "joined.0" || n == "all.sorted") && i == 2 {
				continue
			}
			if strings.HasPrefix(n, "part.") || strings.HasPrefix(n, "sorted.") || strings.HasPrefix(n, "sums.") || n == "data.txt" {
				t.Errorf("worker %d still holds %s", i, n)
			}
		}
	}
}

// bigSize is the table of TestBuildOnThreeWorkers: 200 MB with
// TRAWL_DMAKE_BIG=1 (test.sh's non-race line; about a minute with the
// reference and GNU sort), 16 MB otherwise, 4 MB under the race detector.
func bigSize() (int64, bool) {
	switch {
	case os.Getenv("TRAWL_DMAKE_BIG") == "1":
		return 200 << 20, true
	case raceEnabled:
		return 4 << 20, false
	}
	return 16 << 20, false
}

// TestBuildOnThreeWorkers: a master and three workers as processes; the
// outputs equal the single-process reference byte for byte. The small runs
// compress transfers; the 200 MB run sends them plain (zlib would dominate).
// test.sh runs the big one as:
//
//	TRAWL_DMAKE_BIG=1 go test -count=1 -run '^TestBuildOnThreeWorkers$' ./internal/dmake
func TestBuildOnThreeWorkers(t *testing.T) {
	size, big := bigSize()
	c := newCluster(t, size)
	start := time.Now()
	var flags []string
	if !big {
		flags = append(flags, "--compress")
	}
	m := startMaster(t, c.build, c.workers, flags...)
	if err := m.wait(t, 20*time.Minute); err != nil {
		t.Fatalf("master: %v", err)
	}
	t.Logf("build of %d MB took %v", size>>20, time.Since(start))
	log := m.log.String()
	for _, want := range []string{"build complete", "worker connected", "target done"} {
		if !strings.Contains(log, want) {
			t.Errorf("master log lacks %q", want)
		}
	}
	// Work went to more than one worker.
	used := 0
	for _, w := range c.workers {
		for _, l := range strings.Split(log, "\n") {
			if strings.Contains(l, "target done") && strings.Contains(l, "worker="+w.addr) {
				used++
				break
			}
		}
	}
	if used < 2 {
		t.Errorf("targets ran on %d workers", used)
	}
	c.check(t)
}

const fastHeartbeat = "500ms"

// TestKillWorkerMidBuild: worker 1 is killed with SIGKILL while it runs a
// target; after the (short) heartbeat timeout its work and the files only
// it held are redone elsewhere, and the output is the same.
func TestKillWorkerMidBuild(t *testing.T) {
	c := newCluster(t, 4<<20)
	m := startMaster(t, c.build, c.workers, "--heartbeat", fastHeartbeat, "--heartbeat-timeout", "2s", "--slots", "1")
	waitLine(t, m, time.Minute, "starting target", "worker="+c.workers[1].addr)
	c.workers[1].cmd.Process.Signal(syscall.SIGKILL)
	if err := m.wait(t, 3*time.Minute); err != nil {
		t.Fatalf("master: %v", err)
	}
	waitLog(t, m, time.Second, "lost the connection to a worker")
	c.check(t, 1)
}

// TestCutTransfer: worker 0's first outgoing transfer is cut midway; the
// master sees the failure (and the byte counts that differ) and moves the
// file again.
func TestCutTransfer(t *testing.T) {
	c := newCluster(t, 4<<20, []string{"--fault-cut-transfer", "100000"})
	m := startMaster(t, c.build, c.workers, "--slots", "1")
	if err := m.wait(t, 3*time.Minute); err != nil {
		t.Fatalf("master: %v", err)
	}
	waitLog(t, m, time.Second, "transfer failed")
	waitLog(t, c.workers[0], time.Second, "transfer cut")
	c.check(t)
}

// TestDiskBelowLimit: worker 1's free space (injected) falls below the
// build's disk_limit while it works: it aborts its tasks and refuses new
// ones, and the build completes on the others.
func TestDiskBelowLimit(t *testing.T) {
	free := filepath.Join(t.TempDir(), "free-mb")
	size := int64(12 << 20) // a sort then lasts long enough to be caught
	if raceEnabled {
		size = 4 << 20 // everything is slower
	}
	c := newCluster(t, size, nil, []string{"--fault-free-mb-file", free, "--disk-check", "50ms"})
	m := startMaster(t, c.build, c.workers, "--slots", "1")
	waitLine(t, m, time.Minute, "starting target", "worker="+c.workers[1].addr)
	if err := os.WriteFile(free, []byte("50\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := m.wait(t, 3*time.Minute); err != nil {
		t.Fatalf("master: %v", err)
	}
	waitLog(t, c.workers[1], time.Second, "free disk below the limit")
	if !strings.Contains(m.log.String(), "aborted by the worker") {
		t.Log("the target on worker 1 ended before the disk check (no abort seen)")
	}
	c.check(t)
}

// TestMasterRestart: the master is killed mid-build and started again; the
// new master runs the build again from the start (the documented
// behaviour), and the output is right.
func TestMasterRestart(t *testing.T) {
	c := newCluster(t, 4<<20)
	m := startMaster(t, c.build, c.workers, "--slots", "1")
	waitLog(t, m, time.Minute, "target done")
	m.cmd.Process.Signal(syscall.SIGKILL)
	m.wait(t, time.Minute)
	m2 := startMaster(t, c.build, c.workers, "--slots", "1")
	if err := m2.wait(t, 3*time.Minute); err != nil {
		t.Fatalf("second master: %v", err)
	}
	c.check(t)
}

// TestWorkerOverTCP: a raw connection to a worker: the info greeting,
// malformed lines ignored, the simple_command results in their exact
// formats, and a data stream without its LF ending only that connection.
func TestWorkerOverTCP(t *testing.T) {
	dir := t.TempDir()
	w := startWorker(t, dir)
	conn, err := net.Dial("tcp", w.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	r := bufio.NewReader(conn)
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	line := func() string {
		l, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		return l
	}
	if l := line(); !strings.HasPrefix(l, "#info ") {
		t.Fatalf("greeting %q", l)
	}
	send := func(s string) {
		if _, err := io.WriteString(conn, s); err != nil {
			t.Fatal(err)
		}
	}
	send("garbage\n#nosuch\n#cd @base64:***\n\n#cd b\n")
	// response reads a simple_response and its stream.
	response := func(id string) string {
		l := line()
		var gotID string
		var n int
		if _, err := fmt.Sscanf(l, "#simple_response %s %d\n", &gotID, &n); err != nil || gotID != id {
			t.Fatalf("want a simple_response %s, got %q", id, l)
		}
		data := make([]byte, n+1)
		if _, err := io.ReadFull(r, data); err != nil || data[n] != '\n' {
			t.Fatalf("stream: %v %q", err, data)
		}
		return string(data[:n])
	}
	send("#simple_command 1 create_builddirs p build input tmp\n")
	if got := response("1"); got != "" {
		t.Errorf("create_builddirs of empty dirs: %q", got)
	}
	os.WriteFile(filepath.Join(dir, "b/p/input/in1"), []byte("12345"), 0o444)
	os.WriteFile(filepath.Join(dir, "b/p/input/rw"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(dir, "b/p/build/tmp/t1"), []byte("abc"), 0o444)
	send("#simple_command 2 touch p/build/out\n")
	if got := response("2"); got != "" {
		t.Errorf("touch: %q", got)
	}
	send("#simple_command 3 markfile p/build/out\n")
	if got := response("3"); got != "0" {
		t.Errorf("markfile: %q", got)
	}
	send("#simple_command 4 create_builddirs p build input tmp\n")
	if got := response("4"); got != "5 in1\n0 out\n3 tmp/t1\n" {
		t.Errorf("create_builddirs listing: %q", got)
	}
	send("#simple_command 5 find_builddirs p buil\n")
	if got := response("5"); got != "build\n" {
		t.Errorf("find_builddirs: %q", got)
	}
	send("#simple_command 6 link_to_file p/input/in1 p/build/link\n")
	if got := response("6"); got != "" {
		t.Errorf("link_to_file: %q", got)
	}
	send("#simple_command 7 remove p/build/link p/build/out\n")
	if got := response("7"); got != "" {
		t.Errorf("remove: %q", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "b/p/build/out")); err == nil {
		t.Error("remove left the file")
	}
	send("#simple_command 8 touch /etc/nope\n")
	if l := line(); !strings.HasPrefix(l, "#error 8 ") {
		t.Errorf("outside path: %q", l)
	}
	send("#request_heartbeat #tmp=p 9\n")
	if l := line(); !strings.HasPrefix(l, "#heartbeat @base64:") {
		t.Errorf("heartbeat: %q", l)
	}
	// A data stream whose LF is missing: the worker drops this connection.
	send("#stdout 1 3\nabcX")
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := r.ReadString('\n'); err == nil {
		t.Error("connection still open after a desynchronised stream")
	}
	// The worker lives on.
	conn2, err := net.Dial("tcp", w.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn2.Close()
	conn2.SetDeadline(time.Now().Add(10 * time.Second))
	if l, err := bufio.NewReader(conn2).ReadString('\n'); err != nil || !strings.HasPrefix(l, "#info ") {
		t.Errorf("second connection: %q %v", l, err)
	}
}
