package dmake

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"syscall"
	"time"

	"github.com/trawl/trawl/internal/table"
)

// A worker runs the table programs ("trawl table ...") in table servers,
// children running "trawl table serve" (table.Serve) that take one program
// after another, instead of a process per program: the trawl binary costs
// 15-20 ms of CPU to start, which was a third of an incremental web
// analyzer run's table programs (docs/benchmarks.md). A server runs one
// program at a time; the executor keeps the idle ones and starts another
// when all are busy. To the master nothing changes: the task's pid is the
// server's, its stderr is the program's error, its exit code 1 when it
// failed. Aborting a task kills its server (its process group, as a child
// of its own). A server that dies, or whose program panicked, is not used
// again. Idle servers end when the executor is closed or the worker
// process goes (their stdin ends).

type tableServer struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	enc    *json.Encoder
	dec    *json.Decoder
	stderr *capBuffer
}

func (e *Executor) startServer() (*tableServer, error) {
	cmd := exec.Command(e.Self, "table", "serve")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	s := &tableServer{cmd: cmd, stderr: &capBuffer{n: 64 << 10}}
	cmd.Stderr = s.stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s.in, s.enc, s.dec = in, json.NewEncoder(in), json.NewDecoder(bufio.NewReader(out))
	return s, nil
}

// takeServer returns an idle server, or a new one.
func (e *Executor) takeServer() (*tableServer, error) {
	e.mu.Lock()
	if n := len(e.idle); n > 0 {
		s := e.idle[n-1]
		e.idle = e.idle[:n-1]
		e.mu.Unlock()
		return s, nil
	}
	e.mu.Unlock()
	return e.startServer()
}

func (e *Executor) putServer(s *tableServer) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		go s.stop()
		return
	}
	e.idle = append(e.idle, s)
}

// kill ends the server's process group.
func (s *tableServer) kill() {
	if s.cmd.Process != nil {
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	}
}

// stop ends an idle server: its stdin closes, it exits (killed if it has
// not within 5 s).
func (s *tableServer) stop() {
	s.in.Close()
	t := time.AfterFunc(5*time.Second, s.kill)
	s.cmd.Wait()
	t.Stop()
}

// run has the server run one program and returns its error text ("" on
// success); broken says the server is not to be used again.
func (s *tableServer) run(dir string, args []string) (errText string, broken bool) {
	if err := s.enc.Encode(table.ServeRequest{Dir: dir, Args: args}); err != nil {
		return fmt.Sprintf("dmake: table server: %v", err), true
	}
	var rep table.ServeReply
	if err := s.dec.Decode(&rep); err != nil {
		return fmt.Sprintf("dmake: table server ended: %v", s.ended(err)), true
	}
	return rep.Err, rep.Fatal
}

// ended describes a server that stopped answering: its exit and what it
// wrote on stderr.
func (s *tableServer) ended(err error) error {
	s.kill()
	if werr := s.cmd.Wait(); werr != nil {
		err = werr
	}
	if b := s.stderr.bytes(); len(b) > 0 {
		return fmt.Errorf("%w: %s", err, b)
	}
	return err
}

// Close ends the idle table servers and waits for them to exit; servers
// busy with a task end when it does.
func (e *Executor) Close() {
	e.mu.Lock()
	idle := e.idle
	e.idle, e.closed = nil, true
	e.mu.Unlock()
	for _, s := range idle {
		s.stop()
	}
}

// serverTask is a table program running in a server for a task.
type serverTask struct {
	dir     string
	done    chan struct{}
	errText string
}

// shellStartServed runs a table program (argv "table ...") in a server.
// Called with h.mu held.
func (e *Executor) shellStartServed(h *handle, dir string, argv []string) (any, error) {
	s, err := e.takeServer()
	if err != nil {
		return nil, err
	}
	t := &serverTask{dir: dir, done: make(chan struct{})}
	h.server, h.served = s, t
	go func() {
		errText, broken := s.run(dir, argv[1:])
		h.mu.Lock()
		aborted := h.aborted
		h.server = nil
		h.mu.Unlock()
		switch {
		case aborted && errText == "":
			errText = errAborted.Error()
			fallthrough
		case broken || aborted:
			s.kill()
			go s.cmd.Wait() // a second Wait after ended's returns at once
		default:
			e.putServer(s)
		}
		t.errText = errText
		close(t.done)
	}()
	return s.cmd.Process.Pid, nil
}

// shellWaitServed waits for a served task and returns its exit.
func (e *Executor) shellWaitServed(t *serverTask) (any, error) {
	<-t.done
	if t.errText == "" {
		return ShellExit{}, nil
	}
	x := ShellExit{Code: 1, Stderr: []byte(t.errText + "\n")}
	if free, err := e.freeSpace(t.dir); err == nil {
		x.FreeMB, x.Measured = free>>20, true
	}
	return x, nil
}
