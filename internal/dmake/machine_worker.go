package dmake

import (
	"fmt"
	"log/slog"
	"path"
	"sort"
	"strconv"
	"time"

	"github.com/trawl/trawl/internal/loop"
	"github.com/trawl/trawl/internal/marshal"
)

// WorkerConfig configures a worker machine.
type WorkerConfig struct {
	// Root is the absolute, '/'-separated directory the worker works in;
	// every path a master names must resolve inside it.
	Root string
	// Env is the worker's environment (os.Environ form), the base of every
	// child's and of path expansion.
	Env []string
	// PID is the worker process's PID, reported in heartbeats.
	PID int
	// AllowShell lets shell run any program; otherwise only the table
	// programs (jsort2.exe and the cobra .pyc scripts) are accepted.
	AllowShell bool
	// DiskCheck is how often free disk space is measured (10 s if 0).
	DiskCheck time.Duration
	// Version goes into the info line sent to a master that connects.
	Version string
}

// DefaultDiskLimitMB is the disk limit assumed before any disk_limit
// (3.3.4.1).
const DefaultDiskLimitMB = 2000

// Task types (2.2.2.1) and statuses (2.2.2.2).
const (
	TypeNetsink     = "netsink"
	TypeNetsource   = "netsource"
	TypeRemoveFiles = "remove-files"
	TypeShell       = "shell"

	StatusCompleted = "completed"
	StatusAborted   = "aborted"
	StatusError     = "error"
)

type wtask struct {
	id       string
	typ      string
	started  time.Time
	slotted  bool
	finished bool // finish sent, waiting for forget
	aborting bool
	job      uint64 // the job whose result ends the task's current step
	progress int64
	// netsink/netsource
	path, host string
	port       int
	key        []byte
	compress   bool
}

type wconn struct {
	// build is what the connection's directory is pinned to: the #build
	// of its cd, or "connection <peer>" without one; pinned says it holds
	// the pin of cwd.
	build       string
	pinned      bool
	cwd         string
	env         map[string]string
	diskLimitMB int64
	tasks       map[string]*wtask
	wantAck     bool
	simpleQ     []queuedSimple
	simpleBusy  bool
}

type jobRef struct {
	peer loop.Peer
	task string
	kind string
	hb   JobHeartbeat
}

// Worker is the protocol client's machine (3.3): one per worker process,
// serving every master connection; each connection has its own working
// directory, environment, disk limit and task identifiers. It does no I/O:
// child processes, transfers and file operations are jobs (the Job* types)
// that its driver's Executor runs.
type Worker struct {
	loop.Base[Message]
	cfg      WorkerConfig
	conns    map[loop.Peer]*wconn
	pins     map[string]pin // directory -> the build using it
	jobs     map[uint64]jobRef
	nextJob  uint64
	nextDisk time.Time
	diskJob  bool
	freeMB   int64 // last measurement, -1 unknown
	low      bool  // freeMB is below some connection's limit
}

// NewWorker returns a worker machine.
func NewWorker(cfg WorkerConfig) *Worker {
	if cfg.DiskCheck <= 0 {
		cfg.DiskCheck = 10 * time.Second
	}
	cfg.Root = path.Clean(Slashes(cfg.Root))
	return &Worker{cfg: cfg, conns: map[loop.Peer]*wconn{}, pins: map[string]pin{}, jobs: map[uint64]jobRef{}, freeMB: -1}
}

// pin is the build that holds a working directory, and its connection.
type pin struct {
	build string
	peer  loop.Peer
}

// tryPin pins connection c's working directory to its build unless a
// different build on a live connection holds it; the same build (a master
// that connected again) takes the pin over.
func (w *Worker) tryPin(p loop.Peer, c *wconn) bool {
	h, ok := w.pins[c.cwd]
	if ok && h.peer == p {
		return true
	}
	if ok && h.build != c.build && w.conns[h.peer] != nil {
		return false
	}
	w.pins[c.cwd] = pin{build: c.build, peer: p}
	c.pinned = true
	return true
}

// unpin releases the pin connection c holds, if it still does: to another
// live connection of the same build in the same directory (the lowest
// peer), else to nobody.
func (w *Worker) unpin(p loop.Peer, c *wconn) {
	if c.pinned && w.pins[c.cwd].peer == p {
		delete(w.pins, c.cwd)
		heir := loop.Peer(0)
		for q, o := range w.conns {
			if q != p && o.pinned && o.build == c.build && o.cwd == c.cwd && (heir == 0 || q < heir) {
				heir = q
			}
		}
		if heir != 0 {
			w.pins[c.cwd] = pin{build: c.build, peer: heir}
		}
	}
	c.pinned = false
}

// pinRefusal is the error of a task refused because another build holds
// the directory.
func (w *Worker) pinRefusal(c *wconn) string {
	return fmt.Sprintf("directory %s is in use by build %s of another master", c.cwd, w.pins[c.cwd].build)
}

func (w *Worker) send(p loop.Peer, m *Message) { w.Pending.Send(p, *m, 0) }

func (w *Worker) sendLine(p loop.Peer, name string, args ...string) { w.send(p, New(name, args...)) }

func (w *Worker) log(level slog.Level, msg string, args ...any) {
	w.Pending.Log(level, "dmake worker: "+msg, args...)
}

func (w *Worker) job(p loop.Peer, task, kind string, spec any) uint64 {
	w.nextJob++
	w.jobs[w.nextJob] = jobRef{peer: p, task: task, kind: kind}
	w.Pending.Work = append(w.Pending.Work, loop.Job{ID: w.nextJob, Spec: spec})
	return w.nextJob
}

// Step applies one event.
func (w *Worker) Step(ev loop.Event[Message]) {
	switch ev.Kind {
	case loop.Connected:
		w.conns[ev.Peer] = &wconn{build: fmt.Sprintf("connection %d", ev.Peer), cwd: w.cfg.Root, env: map[string]string{}, diskLimitMB: DefaultDiskLimitMB, tasks: map[string]*wtask{}}
		w.log(slog.LevelInfo, "master connected", "peer", ev.Peer, "addr", ev.Addr)
		w.sendLine(ev.Peer, CmdInfo, "trawl dmake worker "+w.cfg.Version)
	case loop.Closed:
		c := w.conns[ev.Peer]
		if c == nil {
			return
		}
		w.log(slog.LevelInfo, "master disconnected; aborting its tasks", "peer", ev.Peer, "tasks", len(c.tasks))
		ids := make([]string, 0, len(c.tasks))
		for id := range c.tasks {
			ids = append(ids, id)
		}
		sort.Slice(ids, func(i, j int) bool { return len(ids[i]) < len(ids[j]) || len(ids[i]) == len(ids[j]) && ids[i] < ids[j] })
		for _, id := range ids {
			w.job(ev.Peer, id, "ignore", JobRelease{Key: TaskKey{ev.Peer, id}})
		}
		w.unpin(ev.Peer, c)
		delete(w.conns, ev.Peer)
	case loop.Received:
		c := w.conns[ev.Peer]
		if c == nil {
			return
		}
		if ev.Msg.Err != nil {
			w.log(slog.LevelWarn, "ignoring malformed line", "peer", ev.Peer, "err", ev.Msg.Err)
			return
		}
		w.receive(ev.Peer, c, &ev.Msg, ev.Now)
	case loop.Tick:
		if !w.diskJob && !ev.Now.Before(w.nextDisk) {
			w.diskJob = true
			w.nextDisk = ev.Now.Add(w.cfg.DiskCheck)
			w.job(0, "", "disk", JobDiskFree{Dir: w.cfg.Root})
		}
		w.Pending.WakeAt(w.nextDisk)
	case loop.Result:
		w.result(ev)
	}
}

func (w *Worker) lookup(c *wconn) func(string) (string, bool) {
	return func(k string) (string, bool) {
		if v, ok := c.env[k]; ok {
			return v, true
		}
		for i := len(w.cfg.Env) - 1; i >= 0; i-- {
			e := w.cfg.Env[i]
			if len(e) > len(k) && e[:len(k)] == k && e[len(k)] == '=' {
				return e[len(k)+1:], true
			}
		}
		return "", false
	}
}

// resolve turns a path of a message into an absolute path inside Root.
func (w *Worker) resolve(c *wconn, p string) (string, error) {
	r := Resolve(c.cwd, p, w.lookup(c))
	if !Within(w.cfg.Root, r) {
		return "", fmt.Errorf("path %q is outside the worker's directory", p)
	}
	return r, nil
}

// childEnv is the environment of a child process of connection c.
func (w *Worker) childEnv(c *wconn) []string {
	env := make([]string, 0, len(w.cfg.Env)+len(c.env))
	for _, e := range w.cfg.Env {
		k := e
		if i := indexByte(e, '='); i >= 0 {
			k = e[:i]
		}
		if _, over := c.env[k]; !over {
			env = append(env, e)
		}
	}
	for _, k := range sortedKeys(c.env) {
		env = append(env, k+"="+c.env[k])
	}
	return env
}

func (w *Worker) receive(p loop.Peer, c *wconn, m *Message, now time.Time) {
	switch m.Name {
	case CmdCd:
		if len(m.Args) != 1 {
			w.log(slog.LevelWarn, "cd needs one path", "args", len(m.Args))
			return
		}
		d, err := w.resolve(c, m.Arg(0))
		if err != nil {
			w.log(slog.LevelWarn, "cd refused", "err", err)
			return
		}
		w.unpin(p, c)
		c.cwd = d
		if b, ok := m.NamedValue(NamedBuild); ok && len(b) > 0 {
			c.build = "@" + string(b)
		}
		if !w.tryPin(p, c) {
			w.log(slog.LevelWarn, "cd to a directory another master's build is using: its tasks are refused while that master is connected",
				"peer", p, "dir", d, "build", c.build, "holder", w.pins[d].build)
		}
	case CmdSetenv:
		if len(m.Args) != 2 || m.Arg(0) == "" {
			w.log(slog.LevelWarn, "setenv needs a name and a value", "args", len(m.Args))
			return
		}
		c.env[m.Arg(0)] = m.Arg(1)
	case CmdDiskLimit:
		n, err := strconv.ParseInt(m.Arg(0), 10, 64)
		if len(m.Args) != 1 || err != nil || n <= 0 {
			w.log(slog.LevelWarn, "bad disk_limit", "arg", m.Arg(0))
			return
		}
		c.diskLimitMB = n
		w.checkDisk(p, c)
	case CmdInfo:
		w.log(slog.LevelInfo, "info from master", "text", joinArgs(m.Args))
	case CmdCloseStdin:
		if t := w.task(p, c, m, false); t != nil && t.typ == TypeShell {
			w.job(p, t.id, "ignore", JobCloseStdin{Key: TaskKey{p, t.id}})
		}
	case CmdFinishTasks:
		c.wantAck = true
		w.maybeAck(p, c)
	case CmdAbort:
		w.abort(p, c, m)
	case CmdForget:
		if t := w.task(p, c, m, false); t != nil {
			if !t.finished {
				w.log(slog.LevelWarn, "forget of a running task; aborting it", "task", t.id)
				w.abortTask(p, t)
				return
			}
			delete(c.tasks, t.id)
			w.job(p, t.id, "ignore", JobRelease{Key: TaskKey{p, t.id}})
		}
	case CmdPollTask:
		w.pollTask(p, c, m, now)
	case CmdRequestHeartbeat:
		w.requestHeartbeat(p, c, m)
	case CmdSimpleCommand:
		w.simpleCommand(p, c, m)
	case CmdShell:
		w.shell(p, c, m, now)
	case CmdNetsink, CmdNetsource:
		w.transfer(p, c, m, now)
	case CmdRemoveFiles:
		w.removeFiles(p, c, m, now)
	default:
		// Messages only a master receives.
		w.log(slog.LevelWarn, "ignoring a master-bound message", "name", m.Name)
	}
}

// task finds the task a message names by its first argument; unknown
// tasks are logged.
func (w *Worker) task(p loop.Peer, c *wconn, m *Message, quiet bool) *wtask {
	id, err := ParseTaskID([]byte(m.Arg(0)))
	if err != nil {
		w.log(slog.LevelWarn, "bad task identifier", "name", m.Name, "err", err)
		return nil
	}
	t := c.tasks[id]
	if t == nil && !quiet {
		w.log(slog.LevelWarn, "unknown task", "name", m.Name, "task", id)
	}
	return t
}

// newTask checks a generic-response command's task identifier: it answers
// #error when the identifier is in use or the disk is short, and returns
// "" then.
func (w *Worker) newTask(p loop.Peer, c *wconn, m *Message) string {
	id, err := ParseTaskID([]byte(m.Arg(0)))
	if err != nil {
		w.log(slog.LevelWarn, "bad task identifier", "name", m.Name, "err", err)
		return ""
	}
	if c.tasks[id] != nil {
		w.sendLine(p, CmdError, id, "task identifier already in use")
		return ""
	}
	if !w.tryPin(p, c) {
		w.sendLine(p, CmdError, id, w.pinRefusal(c))
		return ""
	}
	if w.freeMB >= 0 && w.freeMB < c.diskLimitMB && m.Name != CmdRemoveFiles { // removing frees space
		w.sendLine(p, CmdError, id, fmt.Sprintf("free disk %d MB below the limit %d MB", w.freeMB, c.diskLimitMB))
		return ""
	}
	return id
}

func (w *Worker) fail(p loop.Peer, id, format string, a ...any) {
	w.sendLine(p, CmdError, id, fmt.Sprintf(format, a...))
}

func (w *Worker) finish(p loop.Peer, c *wconn, t *wtask, status string, aux ...string) {
	if t.finished {
		return
	}
	t.finished = true
	w.send(p, New(CmdFinish, append([]string{t.id, t.typ, status}, aux...)...))
	w.maybeAck(p, c)
}

// maybeAck answers finish-tasks once no task of the connection runs.
func (w *Worker) maybeAck(p loop.Peer, c *wconn) {
	if !c.wantAck {
		return
	}
	for _, t := range c.tasks {
		if !t.finished {
			return
		}
	}
	c.wantAck = false
	w.sendLine(p, CmdFinishTasksAck, "finish-tasks-ack")
}

func (w *Worker) abort(p loop.Peer, c *wconn, m *Message) {
	t := w.task(p, c, m, true)
	if t == nil {
		w.sendLine(p, CmdInfo, "abort: unknown task "+m.Arg(0))
		return
	}
	if t.finished {
		return // its finish is on its way already
	}
	w.abortTask(p, t)
}

// abortTask stops a running task; its finish (aborted) is sent when the
// job running it returns.
func (w *Worker) abortTask(p loop.Peer, t *wtask) {
	if t.aborting {
		return
	}
	t.aborting = true
	w.job(p, t.id, "ignore", JobAbort{Key: TaskKey{p, t.id}})
}

// abortAux is the auxiliary information of an aborted finish (2.2.9).
func abortAux(t *wtask) []string {
	switch t.typ {
	case TypeShell:
		return []string{"1"}
	case TypeRemoveFiles:
		return []string{t.id}
	}
	return nil
}

func (w *Worker) checkDisk(p loop.Peer, c *wconn) {
	if w.freeMB < 0 || w.freeMB >= c.diskLimitMB {
		return
	}
	running := 0
	for _, t := range c.tasks {
		if !t.finished && !t.aborting {
			running++
			w.abortTask(p, t)
		}
	}
	if running > 0 {
		w.log(slog.LevelWarn, "aborting every running task: free disk below the limit", "free_mb", w.freeMB, "limit_mb", c.diskLimitMB, "tasks", running)
	}
}

func (w *Worker) pollTask(p loop.Peer, c *wconn, m *Message, now time.Time) {
	t := w.task(p, c, m, true)
	if t == nil {
		w.sendLine(p, CmdInfo, "poll-task: unknown task "+m.Arg(0))
		return
	}
	if (t.typ == TypeNetsink || t.typ == TypeNetsource) && t.slotted && !t.finished {
		// The transfer runs: its executor knows how far it got.
		w.job(p, t.id, "progress", JobProgress{Key: TaskKey{p, t.id}})
		return
	}
	w.taskInfo(p, t, now)
}

// taskInfo sends a task's task-info: task_info_copy for a transfer (the
// bytes that crossed the channel so far, and their rate over the task's
// runtime), task_info otherwise.
func (w *Worker) taskInfo(p loop.Peer, t *wtask, now time.Time) {
	secs := now.Sub(t.started).Seconds()
	runtime := marshal.Float(secs)
	var d marshal.Dict
	switch t.typ {
	case TypeNetsink, TypeNetsource:
		var bw marshal.Value = marshal.None{}
		if t.progress > 0 && secs > 0 {
			bw = marshal.Float(float64(t.progress) / secs)
		}
		d = marshal.Dict{
			{Key: marshal.Str("copy_bw"), Value: bw},
			{Key: marshal.Str("progress"), Value: marshal.Int(t.progress)},
			{Key: marshal.Str("runtime"), Value: runtime},
			{Key: marshal.Str("type"), Value: marshal.Str(t.typ)},
		}
	default:
		self := map[string]string{TypeShell: "__main__.shell_task", TypeRemoveFiles: "__main__.remove_file_task"}[t.typ]
		d = marshal.Dict{
			{Key: marshal.Str("runtime"), Value: runtime},
			{Key: marshal.Str("self"), Value: marshal.Str(self)},
			{Key: marshal.Str("type"), Value: marshal.Str(t.typ)},
		}
	}
	b, _ := marshal.Encode(d)
	w.send(p, &Message{Name: CmdTaskInfo, Args: [][]byte{[]byte(t.id), b}})
}

func (w *Worker) requestHeartbeat(p loop.Peer, c *wconn, m *Message) {
	spec := JobHeartbeat{Dir: c.cwd}
	if tmp, ok := m.NamedValue("tmp"); ok {
		d, err := w.resolve(c, string(tmp))
		if err != nil {
			w.log(slog.LevelWarn, "request_heartbeat: bad tmp", "err", err)
		} else {
			spec.Tmp, spec.TmpName = d, string(tmp)
		}
	}
	if len(m.Args) > 0 {
		n, err := strconv.ParseInt(m.Arg(0), 10, 64)
		if err != nil || n <= 0 {
			w.log(slog.LevelWarn, "request_heartbeat: bad heartbeat-ID", "arg", m.Arg(0))
			return
		}
		spec.ID, spec.HasID = n, true
	}
	id := w.job(p, "", "heartbeat", spec)
	ref := w.jobs[id]
	ref.hb = spec
	w.jobs[id] = ref
}

// HeartbeatInfo builds the heartbeat_info dictionary (2.2.3.2).
func HeartbeatInfo(spec JobHeartbeat, pid int, r HeartbeatFacts) marshal.Dict {
	var d marshal.Dict
	if spec.HasID {
		d = append(d, marshal.Pair{Key: marshal.Str("id"), Value: marshal.Int(spec.ID)})
	}
	d = append(d,
		marshal.Pair{Key: marshal.Str("pid"), Value: marshal.Int(pid)},
		marshal.Pair{Key: marshal.Str("disk_mb"), Value: marshal.Int(r.DiskMB)},
		marshal.Pair{Key: marshal.Str("load"), Value: marshal.Int(0)})
	if spec.Tmp != "" {
		d = append(d, marshal.Pair{Key: marshal.Str("tmpsize"), Value: marshal.Tuple{
			marshal.Str(spec.TmpName), marshal.Tuple{marshal.Int(r.TmpBytes), marshal.Int(r.TmpFiles)}}})
	}
	return d
}

func (w *Worker) result(ev loop.Event[Message]) {
	ref, ok := w.jobs[ev.Job]
	if !ok {
		return
	}
	delete(w.jobs, ev.Job)
	if ref.kind == "disk" {
		w.diskJob = false
		if ev.Err != nil {
			w.log(slog.LevelWarn, "cannot measure free disk", "err", ev.Err)
			return
		}
		w.freeMB = ev.Result.(int64) >> 20
		low := false
		for _, p := range sortedPeers(w.conns) {
			c := w.conns[p]
			low = low || w.freeMB < c.diskLimitMB
			w.checkDisk(p, c)
		}
		if low != w.low {
			w.low = low
			if low {
				w.log(slog.LevelWarn, "free disk below the limit: new tasks are refused", "free_mb", w.freeMB)
			} else {
				w.log(slog.LevelInfo, "free disk above the limit again", "free_mb", w.freeMB)
			}
		}
		return
	}
	c := w.conns[ref.peer]
	if c == nil || ref.kind == "ignore" {
		return
	}
	switch ref.kind {
	case "heartbeat":
		facts, _ := ev.Result.(HeartbeatFacts)
		if ev.Err != nil {
			w.log(slog.LevelWarn, "heartbeat facts", "err", ev.Err)
		}
		b, _ := marshal.Encode(HeartbeatInfo(ref.hb, w.cfg.PID, facts))
		w.send(ref.peer, &Message{Name: CmdHeartbeat, Args: [][]byte{b}})
		return
	case "simple":
		c.simpleBusy = false
		if ev.Err != nil {
			w.fail(ref.peer, ref.task, "%v", ev.Err)
		} else {
			data, _ := ev.Result.([]byte)
			w.send(ref.peer, &Message{Name: CmdSimpleResponse, Args: [][]byte{[]byte(ref.task)}, Data: data})
		}
		w.nextSimple(ref.peer, c)
		return
	}
	t := c.tasks[ref.task]
	if ref.kind == "progress" {
		if t == nil {
			w.sendLine(ref.peer, CmdInfo, "poll-task: task "+ref.task+" ended")
			return
		}
		if n, ok := ev.Result.(int64); ok && ev.Err == nil && n > t.progress {
			t.progress = n
		}
		w.taskInfo(ref.peer, t, ev.Now)
		return
	}
	if t == nil || t.job != ev.Job {
		return
	}
	w.taskResult(ref.peer, c, t, ref.kind, ev)
}

func joinArgs(a [][]byte) string {
	var b []byte
	for i, x := range a {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, x...)
	}
	return string(b)
}

func indexByte(s string, c byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return -1
}

func sortedPeers[V any](m map[loop.Peer]V) []loop.Peer {
	out := make([]loop.Peer, 0, len(m))
	for p := range m {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
