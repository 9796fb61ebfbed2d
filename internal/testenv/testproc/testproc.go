// Package testproc runs trawl as separate processes in tests: it builds
// the binary once (Binary), starts it with arguments (Start), keeps every
// line the process writes on stdout and stderr, waits for a line
// matching a pattern (WaitLine) and stops the process with SIGTERM, then
// SIGKILL after a grace period (Stop), or at once (Kill). Every process
// started is stopped when its test ends. Only tests import this package.
package testproc

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Build builds github.com/trawl/trawl/cmd/trawl into dir (with the race
// detector when race is set) with the go tool of the running toolchain
// (GOROOT/bin/go, else go in PATH), and returns the binary's path.
func Build(dir string, race bool) (string, error) {
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goBin); err != nil {
		if goBin, err = exec.LookPath("go"); err != nil {
			return "", fmt.Errorf("testproc: no go tool to build trawl: %w", err)
		}
	}
	path := filepath.Join(dir, "trawl")
	args := []string{"build", "-o", path}
	if race {
		args = append(args, "-race")
	}
	out, err := exec.Command(goBin, append(args, "github.com/trawl/trawl/cmd/trawl")...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return path, nil
}

// Binary is a trawl binary built on first use, once per test binary, in a
// temporary directory that Remove deletes (from TestMain, after m.Run).
type Binary struct {
	// Race builds the binary with the race detector.
	Race bool
	// Prefix names the temporary directory.
	Prefix string

	once sync.Once
	dir  string
	path string
	err  error
}

// Path returns the binary's path, building it the first time; a failed
// build fails the test.
func (b *Binary) Path(t testing.TB) string {
	t.Helper()
	b.once.Do(func() {
		b.dir, b.err = os.MkdirTemp("", b.Prefix)
		if b.err == nil {
			b.path, b.err = Build(b.dir, b.Race)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// Remove deletes the binary's directory, if it was built.
func (b *Binary) Remove() {
	if b.dir != "" {
		os.RemoveAll(b.dir)
	}
}

// Proc is one process started by Start.
type Proc struct {
	t testing.TB
	// Args are the process's arguments, without the program.
	Args []string
	cmd  *exec.Cmd

	mu   sync.Mutex
	out  strings.Builder
	done chan struct{}
	err  error
}

// Start starts bin with args, its stdout and stderr kept as one log. When
// the test ends the process is stopped: with Stop(grace) when grace > 0,
// with Kill otherwise.
func Start(t testing.TB, bin string, grace time.Duration, args ...string) *Proc {
	t.Helper()
	p := &Proc{t: t, Args: args, done: make(chan struct{})}
	p.cmd = exec.Command(bin, args...)
	pr, pw := io.Pipe()
	p.cmd.Stdout, p.cmd.Stderr = pw, pw
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	read := make(chan struct{})
	go func() {
		defer close(read)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			p.mu.Lock()
			p.out.WriteString(sc.Text() + "\n")
			p.mu.Unlock()
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	go func() {
		err := p.cmd.Wait()
		pw.Close()
		<-read
		p.mu.Lock()
		p.err = err
		p.mu.Unlock()
		close(p.done)
	}()
	t.Cleanup(func() {
		if grace > 0 {
			p.Stop(grace)
		} else {
			p.Kill()
		}
	})
	return p
}

// Log returns what the process has written so far.
func (p *Proc) Log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// Done is closed when the process has exited and its output is read.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Exited reports whether the process has exited.
func (p *Proc) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Err is the process's exit error (nil while it runs or after exit 0).
func (p *Proc) Err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// WaitLine waits up to limit for the log to match re and returns the
// submatches; it fails the test when the process exits first or the time
// runs out.
func (p *Proc) WaitLine(re *regexp.Regexp, limit time.Duration) []string {
	p.t.Helper()
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if m := re.FindStringSubmatch(p.Log()); m != nil {
			return m
		}
		select {
		case <-p.done:
			if m := re.FindStringSubmatch(p.Log()); m != nil {
				return m
			}
			p.t.Fatalf("trawl %s exited (%v):\n%s", strings.Join(p.Args, " "), p.Err(), p.Log())
		case <-time.After(20 * time.Millisecond):
		}
	}
	p.t.Fatalf("trawl %s: no line matching %s within %v:\n%s", strings.Join(p.Args, " "), re, limit, p.Log())
	return nil
}

// Kill sends SIGKILL (if the process runs) and waits for it to end.
func (p *Proc) Kill() {
	if p.Exited() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// Stop sends SIGTERM (if the process runs) and waits for it to end, with
// SIGKILL after grace.
func (p *Proc) Stop(grace time.Duration) {
	if p.Exited() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		p.Kill()
	}
}
