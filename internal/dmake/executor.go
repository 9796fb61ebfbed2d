package dmake

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/trawl/trawl/internal/tlsconf"
)

// Executor runs a worker machine's jobs: child processes, transfers and
// file operations. It is the worker's loop.Worker.
type Executor struct {
	// Self is the trawl binary, run as "trawl table serve" for the table
	// programs (tableserver.go).
	Self string
	// ListenHost is the address netsink listeners bind to ("" for all).
	ListenHost string
	// FreeSpace measures the free bytes of the filesystem holding dir
	// (statfs if nil); tests inject their own.
	FreeSpace func(dir string) (int64, error)
	// OutputCap bounds the stdout and stderr kept of each child (1 MiB if
	// 0); the rest is dropped.
	OutputCap int
	// CutTransfer, when > 0, makes the first netsource transfer stop after
	// that many bytes and fail (fault injection for tests).
	CutTransfer int64
	// Throttle, when > 0, bounds every netsource's rate to that many bytes
	// per second (fault injection: a slow network, for tests).
	Throttle int64
	// TLS, if set, makes netsink listeners and netsource connections
	// mutual TLS.
	TLS *tlsconf.Config

	cut     atomic.Bool
	mu      sync.Mutex
	handles map[TaskKey]*handle
	idle    []*tableServer
	closed  bool
}

type handle struct {
	mu       sync.Mutex
	aborted  bool
	cmd      *exec.Cmd
	stdin    io.WriteCloser
	stdout   *capBuffer
	stderr   *capBuffer
	listener interface{ Close() error }
	conn     interface{ Close() error }
	cancel   context.CancelFunc
	// server runs the task's table program (served), if it runs in one.
	server *tableServer
	served *serverTask
	// progress counts the bytes of the task's transfer that crossed the
	// channel so far (read by JobProgress while it runs).
	progress atomic.Int64
}

func (e *Executor) handle(k TaskKey) *handle {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.handles == nil {
		e.handles = map[TaskKey]*handle{}
	}
	h := e.handles[k]
	if h == nil {
		h = &handle{}
		e.handles[k] = h
	}
	return h
}

// abort stops whatever runs for h and marks it, so that nothing starts
// for it afterwards.
func (h *handle) abort() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.aborted = true
	if h.cmd != nil && h.cmd.Process != nil {
		// The child leads its own process group: kill the group.
		_ = syscall.Kill(-h.cmd.Process.Pid, syscall.SIGKILL)
	}
	if h.server != nil {
		h.server.kill()
	}
	if h.listener != nil {
		h.listener.Close()
	}
	if h.conn != nil {
		h.conn.Close()
	}
	if h.cancel != nil {
		h.cancel()
	}
}

var errAborted = errors.New("dmake: task aborted")

// Do runs one job.
func (e *Executor) Do(ctx context.Context, spec any) (any, error) {
	switch j := spec.(type) {
	case JobShellStart:
		return e.shellStart(j)
	case JobShellWait:
		return e.shellWait(j)
	case JobCloseStdin:
		h := e.handle(j.Key)
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.stdin != nil {
			return nil, h.stdin.Close()
		}
		return nil, nil
	case JobAbort:
		e.handle(j.Key).abort()
		return nil, nil
	case JobRelease:
		e.handle(j.Key).abort()
		e.mu.Lock()
		delete(e.handles, j.Key)
		e.mu.Unlock()
		return nil, nil
	case JobSinkListen:
		return e.sinkListen(j)
	case JobSinkReceive:
		return e.sinkReceive(ctx, j)
	case JobSourceStat:
		fi, err := os.Stat(j.Path)
		if err != nil {
			return nil, err
		}
		if !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("dmake: %s is not a regular file", j.Path)
		}
		return fi.Size(), nil
	case JobSourceSend:
		return e.sourceSend(ctx, j)
	case JobProgress:
		// A released task has no handle left: do not make one.
		e.mu.Lock()
		h := e.handles[j.Key]
		e.mu.Unlock()
		if h == nil {
			return int64(0), nil
		}
		return h.progress.Load(), nil
	case JobRemove:
		for _, f := range j.Files {
			if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return nil, err
			}
		}
		return nil, nil
	case JobSimple:
		return runSimple(j)
	case JobHeartbeat:
		return e.heartbeat(j)
	case JobDiskFree:
		return e.freeSpace(j.Dir)
	}
	return nil, fmt.Errorf("dmake: unknown job %T", spec)
}

func (e *Executor) freeSpace(dir string) (int64, error) {
	if e.FreeSpace != nil {
		return e.FreeSpace(dir)
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}

// capBuffer keeps the first n bytes written to it.
type capBuffer struct {
	mu  sync.Mutex
	b   bytes.Buffer
	n   int
	cut bool
}

func (c *capBuffer) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	room := c.n - c.b.Len()
	if len(p) > room {
		c.b.Write(p[:max(room, 0)])
		c.cut = true
		return len(p), nil
	}
	c.b.Write(p)
	return len(p), nil
}

func (c *capBuffer) bytes() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return bytes.Clone(c.b.Bytes())
}

func (e *Executor) shellStart(j JobShellStart) (any, error) {
	h := e.handle(j.Key)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.aborted {
		return nil, errAborted
	}
	if err := os.MkdirAll(j.Dir, 0o755); err != nil {
		return nil, err
	}
	if j.Argv[0] == "table" {
		return e.shellStartServed(h, j.Dir, j.Argv)
	}
	cmd := exec.Command(j.Argv[0], j.Argv[1:]...)
	cmd.Dir = j.Dir
	cmd.Env = j.Env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	capN := e.OutputCap
	if capN <= 0 {
		capN = 1 << 20
	}
	h.stdout, h.stderr = &capBuffer{n: capN}, &capBuffer{n: capN}
	cmd.Stdout, cmd.Stderr = h.stdout, h.stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	h.cmd, h.stdin = cmd, stdin
	return cmd.Process.Pid, nil
}

func (e *Executor) shellWait(j JobShellWait) (any, error) {
	h := e.handle(j.Key)
	h.mu.Lock()
	cmd, served := h.cmd, h.served
	h.mu.Unlock()
	if served != nil {
		return e.shellWaitServed(served)
	}
	if cmd == nil {
		return nil, errAborted
	}
	err := cmd.Wait()
	x := ShellExit{Stdout: h.stdout.bytes(), Stderr: h.stderr.bytes()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		x.Code = ee.ExitCode()
		if x.Code < 0 {
			x.Code = 1
		}
		// The worker reports a command that failed on a short disk
		// as aborted (Worker.taskResult).
		dir := cmd.Dir
		if dir == "" {
			dir = "."
		}
		if free, err := e.freeSpace(dir); err == nil {
			x.FreeMB, x.Measured = free>>20, true
		}
	default:
		return nil, err
	}
	return x, nil
}

func (e *Executor) heartbeat(j JobHeartbeat) (any, error) {
	f := HeartbeatFacts{}
	free, err := e.freeSpace(j.Dir)
	if err == nil {
		f.DiskMB = free >> 20
	}
	if j.Tmp != "" {
		filepath.WalkDir(j.Tmp, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				if fi, err := d.Info(); err == nil {
					f.TmpBytes += fi.Size()
					f.TmpFiles++
				}
			}
			return nil
		})
	}
	return f, err
}

// runSimple performs a simple_command (3.3.5.2.5) and returns its result
// string.
func runSimple(j JobSimple) ([]byte, error) {
	a := j.Args
	switch j.Cmd {
	case "create_builddirs", "create_builddirs_no_tmp":
		build, input := filepath.Join(a[0], a[1]), filepath.Join(a[0], a[2])
		dirs := []string{build, input}
		if j.Cmd == "create_builddirs" {
			dirs = append(dirs, filepath.Join(build, a[3]))
		}
		for _, d := range dirs {
			if err := os.MkdirAll(d, 0o755); err != nil {
				return nil, err
			}
		}
		out, err := listReadOnly(input, false)
		if err != nil {
			return nil, err
		}
		deep, err := listReadOnly(build, true)
		return append(out, deep...), err
	case "find_builddirs":
		ents, err := os.ReadDir(a[0])
		if err != nil {
			return nil, err
		}
		var out []byte
		for _, e := range ents {
			if strings.Contains(e.Name(), a[1]) {
				out = append(append(out, e.Name()...), '\n')
			}
		}
		return out, nil
	case "link_to_file":
		os.Remove(a[1])
		return nil, os.Link(a[0], a[1])
	case "markfile":
		fi, err := os.Stat(a[0])
		if err != nil {
			return nil, err
		}
		if err := os.Chmod(a[0], fi.Mode().Perm()&^0o222); err != nil {
			return nil, err
		}
		return strconv.AppendInt(nil, fi.Size(), 10), nil
	case "remove":
		for _, f := range a {
			if fi, err := os.Lstat(f); err == nil && fi.IsDir() {
				return nil, fmt.Errorf("dmake: remove: %s is a directory", f)
			}
			if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return nil, err
			}
		}
		return nil, nil
	case "touch":
		f, err := os.OpenFile(a[0], os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return nil, err
		}
		return nil, f.Close()
	}
	return nil, fmt.Errorf("dmake: unknown simple_command %q", j.Cmd)
}

// listReadOnly is a directory_listing (2.2.3.4) of the read-only files of
// root: "size SP name LF", names relative to root, sorted; deep descends.
func listReadOnly(root string, deep bool) ([]byte, error) {
	type ent struct {
		name string
		size int64
	}
	var ents []ent
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && !deep {
				return filepath.SkipDir
			}
			return nil
		}
		fi, err := d.Info()
		if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o222 != 0 {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		ents = append(ents, ent{filepath.ToSlash(rel), fi.Size()})
		return nil
	})
	sort.Slice(ents, func(i, j int) bool { return ents[i].name < ents[j].name })
	var out []byte
	for _, e := range ents {
		out = strconv.AppendInt(out, e.size, 10)
		out = append(append(append(out, ' '), e.name...), '\n')
	}
	return out, err
}
