package dupserver

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/trawl/trawl/internal/cmt"
)

// buildTrawl builds the trawl binary into a temporary directory.
func buildTrawl(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "trawl")
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	cmd := exec.Command(gobin, "build", "-o", bin, "github.com/trawl/trawl/cmd/trawl")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

type proc struct {
	t    *testing.T
	cmd  *exec.Cmd
	logs *logBuffer
	addr string
	done chan error
}

var listeningRE = regexp.MustCompile(`msg="[^"]*listening" addr=(\S+)`)

// startProc runs the binary with args and waits for its listening line.
func startProc(t *testing.T, bin string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(bin, args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{t: t, cmd: cmd, logs: &logBuffer{}, done: make(chan error, 1)}
	addrc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			p.logs.Write([]byte(line + "\n"))
			if m := listeningRE.FindStringSubmatch(line); m != nil {
				select {
				case addrc <- m[1]:
				default:
				}
			}
		}
		p.done <- cmd.Wait()
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
		}
	})
	select {
	case p.addr = <-addrc:
	case err := <-p.done:
		t.Fatalf("%v exited: %v\n%s", args, err, p.logs)
	case <-time.After(20 * time.Second):
		t.Fatalf("%v: no listening line\n%s", args, p.logs)
	}
	return p
}

// stop sends SIGTERM and checks for a clean exit.
func (p *proc) stop() {
	p.t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		p.t.Fatal(err)
	}
	select {
	case err := <-p.done:
		if err != nil {
			p.t.Fatalf("exit after SIGTERM: %v\n%s", err, p.logs)
		}
	case <-time.After(20 * time.Second):
		p.t.Fatalf("no exit within 20 s of SIGTERM\n%s", p.logs)
	}
	if !p.logs.contains("stopped") {
		p.t.Errorf("no clean stop logged:\n%s", p.logs)
	}
}

func (p *proc) waitLog(s string) {
	p.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !p.logs.contains(s) {
		if time.Now().After(deadline) {
			p.t.Fatalf("no %q in the log:\n%s", s, p.logs)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestProcesses(t *testing.T) {
	bin := buildTrawl(t)
	data := t.TempDir()
	r := startProc(t, bin, "dupserver", "--replica-mode", "--listen", "127.0.0.1:0", "--data", data)
	ds := startProc(t, bin, "dupserver", "--listen", "127.0.0.1:0", "--data", data, "--replica", r.addr, "--id", "ds-proc")
	ds.waitLog("replica connected")

	ctx := t.Context()
	ns := dialNS(t, ctx, ds.addr)
	ns.send(setConfig("example", 1))
	ns.expect(&cmt.PPDUPConfigAck{VClock: 1})
	cs := csum("page")
	first := add("example", "node-a", "http://a/", cs)
	ns.send(first)
	ns.expect(addOK(0, first, first.URI).Msg)
	for _, u := range []string{"http://b/", "http://c/"} {
		m := add("example", "node-b", u, csum(u))
		ns.send(m)
		ns.expect(addOK(0, m, u).Msg)
	}
	ns.conn.Close()
	ds.stop()
	r.stop()

	// The replica's Pebble store is identical to the duplicate server's.
	dsSt, err := OpenPebble(filepath.Join(data, "dupserver"), PebbleOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rSt, err := OpenPebble(filepath.Join(data, "dupreplica"), PebbleOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dd, rd := dump(t, dsSt), dump(t, rSt)
	dsSt.Close()
	rSt.Close()
	if len(dd) != 3 {
		t.Fatalf("duplicate server store has %d mappings, want 3", len(dd))
	}
	if diff := cmp.Diff(dd, rd); diff != "" {
		t.Fatalf("replica store differs (-ds +replica):\n%s", diff)
	}

	// A restarted duplicate server still knows the owner.
	ds2 := startProc(t, bin, "dupserver", "--listen", "127.0.0.1:0", "--data", data, "--id", "ds-proc")
	ns2 := dialNS(t, ctx, ds2.addr)
	dup := add("example", "node-c", "http://copy/", cs)
	ns2.send(dup)
	ns2.expect(addOK(0, dup, first.URI).Msg)
	ns2.conn.Close()
	ds2.stop()
	if _, err := os.Stat(filepath.Join(data, "dupserver")); err != nil {
		t.Fatal(err)
	}
}
