package dmake

import (
	"bytes"
	"log/slog"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/trawl/trawl/internal/loop"
)

// TaskKey names a task of one connection.
type TaskKey struct {
	Peer loop.Peer
	ID   string
}

// The jobs a worker machine asks its executor for. Each ends in a Result
// event; the Result value is given with each type.
type (
	// JobShellStart starts a child process (Result: int, its PID).
	JobShellStart struct {
		Key  TaskKey
		Argv []string
		Dir  string
		Env  []string
	}
	// JobShellWait waits for the child to exit (Result: ShellExit).
	JobShellWait struct{ Key TaskKey }
	// JobCloseStdin closes the child's standard input.
	JobCloseStdin struct{ Key TaskKey }
	// JobAbort terminates whatever runs for the task: the job running it
	// then returns with an error.
	JobAbort struct{ Key TaskKey }
	// JobRelease aborts and forgets everything the executor holds for the
	// task.
	JobRelease struct{ Key TaskKey }
	// JobSinkListen opens the netsink's listener (Result: int, the port).
	JobSinkListen struct{ Key TaskKey }
	// JobSinkReceive accepts one connection on the listener, checks and
	// echoes the key and writes the file (Result: SinkDone).
	JobSinkReceive struct {
		Key      TaskKey
		Path     string
		Transfer string
		Compress bool
	}
	// JobSourceStat measures the file to send (Result: int64, its size).
	JobSourceStat struct {
		Key  TaskKey
		Path string
	}
	// JobSourceSend connects to the netsink (retrying until aborted), sends
	// the key, checks its echo and sends the file (Result: int64, bytes sent).
	JobSourceSend struct {
		Key      TaskKey
		Path     string
		Addr     string
		Transfer string
		Compress bool
	}
	// JobProgress reads how many bytes of the task's transfer crossed the
	// channel so far (Result: int64).
	JobProgress struct{ Key TaskKey }
	// JobRemove removes files (Result: nil).
	JobRemove struct {
		Key   TaskKey
		Files []string
	}
	// JobSimple runs a simple_command (Result: []byte, the result string).
	JobSimple struct {
		Cmd  string
		Args []string
	}
	// JobHeartbeat measures what a heartbeat reports (Result: HeartbeatFacts).
	JobHeartbeat struct {
		Dir, Tmp, TmpName string
		ID                int64
		HasID             bool
	}
	// JobDiskFree measures free disk space (Result: int64 bytes).
	JobDiskFree struct{ Dir string }
)

// ShellExit is how a child ended.
type ShellExit struct {
	Code           int
	Stdout, Stderr []byte
	// FreeMB is the free disk of the command's directory when a failed
	// command ended, in MiB, if Measured.
	FreeMB   int64
	Measured bool
}

// SinkDone is how a netsink's receive ended.
type SinkDone struct {
	Bytes    int64
	Mismatch bool // the netsource sent a wrong key: listen again
}

// HeartbeatFacts is what a heartbeat reports.
type HeartbeatFacts struct {
	DiskMB             int64
	TmpBytes, TmpFiles int64
}

// tablePrograms maps the spec's shell commands to the trawl table program
// standing for each.
var tablePrograms = map[string]string{
	"merge.pyc": "merge", "reduce.pyc": "reduce", "split.pyc": "split", "pythontasks.pyc": "pythontasks",
}

// shellArgv turns the command of a shell message into the argv of the child:
// the table programs run as "trawl table ...", anything else only with
// AllowShell. ok is false when the command is not allowed.
func (w *Worker) shellArgv(c *wconn, cmd string, args []string) ([]string, string) {
	var prog string
	switch {
	case cmd == "jsort2.exe" || cmd == "jsort2":
		prog = "sort"
	case cmd == "cobra" && len(args) > 0:
		prog = tablePrograms[path.Base(Slashes(args[0]))]
		args = args[1:]
	case cmd == "trawl" && len(args) > 0 && args[0] == "table":
		if len(args) > 1 {
			prog = args[1]
			args = args[2:]
		}
	}
	if prog == "" || (prog != "sort" && prog != "split" && prog != "merge" && prog != "reduce" && prog != "pythontasks") {
		if !w.cfg.AllowShell {
			return nil, "command " + cmd + " is not one of the table programs (start the worker with --allow-shell to run others)"
		}
		argv := []string{Expand(cmd, w.lookup(c))}
		for _, a := range args {
			argv = append(argv, Expand(a, w.lookup(c)))
		}
		return argv, ""
	}
	argv := []string{"table", prog}
	for _, a := range args {
		a = Slashes(Expand(a, w.lookup(c)))
		for _, part := range strings.Split(a, ":") {
			if path.IsAbs(part) && !Within(w.cfg.Root, path.Clean(part)) || hasDotDot(part) {
				return nil, "argument " + a + " leaves the worker's directory"
			}
		}
		argv = append(argv, a)
	}
	return argv, ""
}

func hasDotDot(p string) bool {
	for _, s := range strings.Split(p, "/") {
		if s == ".." {
			return true
		}
	}
	return false
}

// shell starts a child process (2.2.21): "#shell #umask=54 <id> cmd /C
// <command> [args]". The umask is ignored, as the spec says, and so are
// "cmd /C".
func (w *Worker) shell(p loop.Peer, c *wconn, m *Message, now time.Time) {
	args := strs(m.SplitArgs())
	if len(args) > 0 && args[0] == "umask=54" { // merge.pyc's form without '#'
		args = args[1:]
	}
	if len(args) == 0 {
		w.log(slog.LevelWarn, "shell without a task identifier")
		return
	}
	m2 := New(CmdShell, args...)
	id := w.newTask(p, c, m2)
	if id == "" {
		return
	}
	args = args[1:]
	if len(args) >= 2 && strings.EqualFold(args[0], "cmd") && strings.EqualFold(args[1], "/C") {
		args = args[2:]
	}
	if len(args) == 0 {
		w.fail(p, id, "shell without a command")
		return
	}
	argv, why := w.shellArgv(c, args[0], args[1:])
	if argv == nil {
		w.fail(p, id, "%s", why)
		return
	}
	t := &wtask{id: id, typ: TypeShell, started: now}
	c.tasks[id] = t
	t.job = w.job(p, id, "shell-start", JobShellStart{Key: TaskKey{p, id}, Argv: argv, Dir: c.cwd, Env: w.childEnv(c)})
}

// transfer starts a netsink (4 parameters) or netsource (6 parameters).
func (w *Worker) transfer(p loop.Peer, c *wconn, m *Message, now time.Time) {
	want := 4
	if m.Name == CmdNetsource {
		want = 6
	}
	id := w.newTask(p, c, m)
	if id == "" {
		return
	}
	if len(m.Args) != want {
		w.fail(p, id, "%s takes %d parameters, not %d", m.Name, want, len(m.Args))
		return
	}
	comp := m.Arg(want - 1)
	if comp != "compress" && comp != "nocompress" {
		w.fail(p, id, "compress must be compress or nocompress, not %q", comp)
		return
	}
	fp, err := w.resolve(c, m.Arg(1))
	if err != nil {
		w.fail(p, id, "%v", err)
		return
	}
	key := m.Args[want-2]
	if len(key) == 0 || len(key) > MaxLine {
		w.fail(p, id, "empty transfer key")
		return
	}
	t := &wtask{id: id, typ: m.Name, started: now, path: fp, key: bytes.Clone(key), compress: comp == "compress"}
	if m.Name == CmdNetsink {
		c.tasks[id] = t
		t.job = w.job(p, id, "sink-listen", JobSinkListen{Key: TaskKey{p, id}})
		return
	}
	port, err := strconv.Atoi(m.Arg(3))
	if err != nil || port <= 0 || port > 65535 || m.Arg(2) == "" {
		w.fail(p, id, "bad receiver %q port %q", m.Arg(2), m.Arg(3))
		return
	}
	t.host, t.port = m.Arg(2), port
	c.tasks[id] = t
	t.job = w.job(p, id, "source-stat", JobSourceStat{Key: TaskKey{p, id}, Path: fp})
}

// removeFiles (2.2.18): "#remove-files <id> [inputdir=<dir>] <file>...", the
// directory also accepted as the named argument #inputdir=. On POSIX
// unlinking a file never changes a hard link's attributes, so the mirror
// directory needs no care.
func (w *Worker) removeFiles(p loop.Peer, c *wconn, m *Message, now time.Time) {
	args := strs(m.SplitArgs())
	if len(args) == 0 {
		w.log(slog.LevelWarn, "remove-files without a task identifier")
		return
	}
	id := w.newTask(p, c, New(CmdRemoveFiles, args[0]))
	if id == "" {
		return
	}
	args = args[1:]
	if len(args) > 0 && strings.HasPrefix(args[0], "inputdir=") {
		args = args[1:]
	}
	if len(args) == 0 {
		w.fail(p, id, "remove-files names no file")
		return
	}
	var files []string
	for _, a := range args {
		f, err := w.resolve(c, a)
		if err != nil || f == w.cfg.Root {
			w.fail(p, id, "cannot remove %q", a)
			return
		}
		files = append(files, f)
	}
	t := &wtask{id: id, typ: TypeRemoveFiles, started: now, slotted: true}
	c.tasks[id] = t
	w.sendLine(p, CmdSlot, TypeRemoveFiles, id)
	t.job = w.job(p, id, "remove", JobRemove{Key: TaskKey{p, id}, Files: files})
}

// simpleCommands gives the number of path parameters of each simple_command
// (-1: one or more).
var simpleCommands = map[string]int{
	"create_builddirs": 4, "create_builddirs_no_tmp": 3, "find_builddirs": 2,
	"link_to_file": 2, "markfile": 1, "remove": -1, "touch": 1,
}

func (w *Worker) simpleCommand(p loop.Peer, c *wconn, m *Message) {
	args := strs(m.SplitArgs())
	id, err := ParseTaskID([]byte(firstOr(args)))
	if err != nil {
		w.log(slog.LevelWarn, "simple_command: bad task identifier", "err", err)
		return
	}
	if len(args) < 2 {
		w.fail(p, id, "simple_command without a command")
		return
	}
	if !w.tryPin(p, c) {
		w.fail(p, id, "%s", w.pinRefusal(c))
		return
	}
	cmd, params := args[1], args[2:]
	n, ok := simpleCommands[cmd]
	if !ok {
		w.fail(p, id, "unknown simple_command %q", cmd)
		return
	}
	if (n >= 0 && len(params) != n) || (n < 0 && len(params) == 0) {
		w.fail(p, id, "%s takes %d parameters, not %d", cmd, n, len(params))
		return
	}
	var resolved []string
	for i, a := range params {
		if cmd == "find_builddirs" && i == 1 {
			resolved = append(resolved, a) // the path-token is a string
			continue
		}
		if strings.HasPrefix(cmd, "create_builddirs") && i > 0 {
			// build-dir, input-dir and tmp-dir are names inside parent-dir
			// (tmp-dir inside build-dir).
			if a = Slashes(a); path.IsAbs(a) || hasDotDot(a) {
				w.fail(p, id, "%s: %q must be a relative name", cmd, a)
				return
			}
			resolved = append(resolved, a)
			continue
		}
		r, err := w.resolve(c, a)
		if err != nil {
			w.fail(p, id, "%v", err)
			return
		}
		resolved = append(resolved, r)
	}
	// simple_command runs synchronously (3.3.5.2.5): one at a time per
	// connection, in the order received.
	c.simpleQ = append(c.simpleQ, queuedSimple{id: id, job: JobSimple{Cmd: cmd, Args: resolved}})
	w.nextSimple(p, c)
}

type queuedSimple struct {
	id  string
	job JobSimple
}

func (w *Worker) nextSimple(p loop.Peer, c *wconn) {
	if c.simpleBusy || len(c.simpleQ) == 0 {
		return
	}
	q := c.simpleQ[0]
	c.simpleQ = c.simpleQ[1:]
	c.simpleBusy = true
	w.job(p, q.id, "simple", q.job)
}

func firstOr(a []string) string {
	if len(a) == 0 {
		return ""
	}
	return a[0]
}

// taskResult advances a generic-response task when one of its jobs ends.
func (w *Worker) taskResult(p loop.Peer, c *wconn, t *wtask, kind string, ev loop.Event[Message]) {
	key := TaskKey{p, t.id}
	failed := func(step string) {
		if t.aborting {
			w.finish(p, c, t, StatusAborted, abortAux(t)...)
			return
		}
		w.log(slog.LevelWarn, "task failed", "task", t.id, "type", t.typ, "step", step, "err", ev.Err)
		if !t.slotted {
			delete(c.tasks, t.id)
			w.fail(p, t.id, "%s: %v", step, ev.Err)
			w.job(p, t.id, "ignore", JobRelease{Key: key})
			w.maybeAck(p, c)
			return
		}
		w.finish(p, c, t, StatusError)
	}
	if ev.Err != nil {
		failed(kind)
		return
	}
	if t.aborting && kind != "shell-wait" {
		if kind == "shell-start" {
			// Started just before the abort killed it: reap it.
			w.job(p, t.id, "ignore", JobShellWait{Key: key})
		}
		w.finish(p, c, t, StatusAborted, abortAux(t)...)
		return
	}
	switch kind {
	case "shell-start":
		t.slotted = true
		w.sendLine(p, CmdSlot, TypeShell, t.id, strconv.Itoa(ev.Result.(int)))
		t.job = w.job(p, t.id, "shell-wait", JobShellWait{Key: key})
	case "shell-wait":
		x := ev.Result.(ShellExit)
		if len(x.Stdout) > 0 {
			w.send(p, &Message{Name: CmdStdout, Args: [][]byte{[]byte(t.id)}, Data: x.Stdout})
		}
		if len(x.Stderr) > 0 {
			w.send(p, &Message{Name: CmdStderr, Args: [][]byte{[]byte(t.id)}, Data: x.Stderr})
		}
		if t.aborting {
			w.finish(p, c, t, StatusAborted, abortAux(t)...)
			return
		}
		if x.Code != 0 && x.Measured && x.FreeMB < c.diskLimitMB {
			// Failed for want of disk, most likely (ENOSPC): aborted, so
			// that the master runs it again instead of counting a failure.
			w.log(slog.LevelWarn, "command failed with the free disk below the limit: reported aborted", "task", t.id, "code", x.Code,
				"free_mb", x.FreeMB, "limit_mb", c.diskLimitMB)
			w.finish(p, c, t, StatusAborted, abortAux(t)...)
			return
		}
		w.finish(p, c, t, StatusCompleted, strconv.Itoa(x.Code))
	case "sink-listen":
		t.port = ev.Result.(int)
		t.slotted = true
		w.sendLine(p, CmdSlot, TypeNetsink, t.id, strconv.Itoa(t.port))
		t.job = w.job(p, t.id, "sink-receive", JobSinkReceive{Key: key, Path: t.path, Transfer: string(t.key), Compress: t.compress})
	case "sink-receive":
		d := ev.Result.(SinkDone)
		if d.Mismatch {
			// 3.4.5: no finish; tell the master and listen again.
			w.sendLine(p, CmdInfo, "netsink "+t.id+": transfer key mismatch, listening again")
			t.job = w.job(p, t.id, "sink-listen", JobSinkListen{Key: key})
			return
		}
		t.progress = d.Bytes
		w.finish(p, c, t, StatusCompleted, strconv.FormatInt(d.Bytes, 10))
	case "source-stat":
		t.slotted = true
		w.sendLine(p, CmdSlot, TypeNetsource, t.id, strconv.FormatInt(ev.Result.(int64), 10))
		addr := t.host + ":" + strconv.Itoa(t.port)
		t.job = w.job(p, t.id, "source-send", JobSourceSend{Key: key, Path: t.path, Addr: addr, Transfer: string(t.key), Compress: t.compress})
	case "source-send":
		t.progress = ev.Result.(int64)
		w.finish(p, c, t, StatusCompleted, strconv.FormatInt(t.progress, 10))
	case "remove":
		w.finish(p, c, t, StatusCompleted)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
