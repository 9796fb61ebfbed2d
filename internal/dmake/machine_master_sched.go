package dmake

import (
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/trawl/trawl/internal/loop"
)

func (m *Master) receive(w *mworker, msg *Message) {
	if msg.Err != nil {
		m.log(slog.LevelWarn, "ignoring malformed line", "worker", w.addr, "err", msg.Err)
		return
	}
	w.lastHeard = m.now
	switch msg.Name {
	case CmdInfo:
		m.log(slog.LevelInfo, "info from worker", "worker", w.addr, "text", joinArgs(msg.Args))
	case CmdHeartbeat, CmdTaskInfo, CmdSimpleResponse:
		// heartbeat: lastHeard is set; task-info must be ignored (3.2.5.9).
	case CmdFinishTasksAck:
		w.acked = true
	case CmdStdout:
		m.log(slog.LevelDebug, "task stdout", "worker", w.addr, "task", msg.Arg(0), "bytes", len(msg.Data))
	case CmdStderr:
		m.log(slog.LevelWarn, "task stderr: the task failed", "worker", w.addr, "task", msg.Arg(0), "text", string(msg.Data))
		if t := m.tasks[msg.Arg(0)]; t != nil && t.target != nil {
			t.target.stderr = true
		}
	case CmdSlot:
		m.slot(w, msg)
	case CmdError:
		m.taskError(w, msg)
	case CmdFinish:
		m.finish(w, msg)
	default:
		m.log(slog.LevelWarn, "ignoring a worker-bound message from a worker", "worker", w.addr, "name", msg.Name)
	}
}

func (m *Master) slot(w *mworker, msg *Message) {
	t := m.tasks[msg.Arg(1)]
	if len(msg.Args) < 2 || t == nil || t.worker != w.idx || t.typ != msg.Arg(0) {
		m.log(slog.LevelWarn, "slot for no task of ours", "worker", w.addr, "args", joinArgs(msg.Args))
		return
	}
	if t.typ != TypeNetsink || t.x.failed {
		return
	}
	port, err := strconv.Atoi(msg.Arg(2))
	if err != nil || port <= 0 || port > 65535 {
		m.log(slog.LevelWarn, "netsink slot without a port", "worker", w.addr)
		m.xferFailed(t.x, "bad netsink port")
		return
	}
	x := t.x
	src := m.workers[x.src]
	if src.state != wUp {
		m.xferFailed(x, "source worker away")
		return
	}
	st := m.newTask(src, TypeNetsource)
	st.x = x
	x.srcTask = st.id
	x.open++
	m.send(src, New(CmdNetsource, st.id, x.file, w.host, strconv.Itoa(port), x.key, m.compress()))
}

func (m *Master) compress() string {
	if m.cfg.Compress {
		return "compress"
	}
	return "nocompress"
}

// taskError: a generic-response command failed before its slot.
func (m *Master) taskError(w *mworker, msg *Message) {
	t := m.tasks[msg.Arg(0)]
	info := ""
	if len(msg.Args) > 1 {
		info = joinArgs(msg.Args[1:])
	}
	m.log(slog.LevelWarn, "task error", "worker", w.addr, "task", msg.Arg(0), "info", info)
	if t == nil || t.worker != w.idx {
		return
	}
	delete(m.tasks, t.id)
	w.cooldown = m.now.Add(2 * time.Second)
	short := diskShort(info)
	if short {
		w.cooldown = m.now.Add(diskCooldown)
	}
	switch {
	case t.target != nil && short:
		m.putBack(t.target, "worker short of disk: "+info)
	case t.target != nil:
		m.requeue(t.target, "error: "+info, false)
	case t.x != nil:
		t.x.open--
		t.x.short = t.x.short || short
		m.xferFailed(t.x, "error: "+info)
	}
}

// diskCooldown is how long a worker short of disk is left out of new
// assignments: its free-space check period (WorkerConfig.DiskCheck).
const diskCooldown = 10 * time.Second

// diskShort reports whether a worker's #error says that its free disk is
// below the limit (the worker's refusal of a new task, checkTask).
func diskShort(info string) bool {
	return strings.HasPrefix(info, "free disk ") && strings.Contains(info, " below the limit ")
}

func (m *Master) finish(w *mworker, msg *Message) {
	if len(msg.Args) < 3 {
		m.log(slog.LevelWarn, "finish with too few parameters", "worker", w.addr)
		return
	}
	id, status := msg.Arg(0), msg.Arg(2)
	m.send(w, New(CmdForget, id))
	t := m.tasks[id]
	if t == nil || t.worker != w.idx {
		return
	}
	delete(m.tasks, id)
	switch {
	case t.target != nil:
		tg := t.target
		code := msg.Arg(3)
		if status == StatusCompleted && code == "0" && !tg.stderr {
			m.targetDone(tg, w)
			return
		}
		if status == StatusAborted {
			// The master aborts no target: the worker did, its free
			// disk below the limit (checkDisk).
			w.cooldown = m.now.Add(diskCooldown)
			m.putBack(tg, "aborted by the worker (short of disk)")
			return
		}
		m.requeue(tg, "command failed: "+status+" "+code, true)
	case t.x != nil:
		x := t.x
		x.open--
		n, err := strconv.ParseInt(msg.Arg(3), 10, 64)
		ok := status == StatusCompleted && err == nil
		if status == StatusAborted && !x.failed {
			// Not aborted by this master (xferFailed marks the transfer
			// failed first): the worker's disk check did.
			x.short = true
			w.cooldown = m.now.Add(diskCooldown)
		}
		if t.typ == TypeNetsink {
			x.sinkOK, x.sinkBytes = ok, n
		} else {
			x.srcOK, x.srcBytes = ok, n
		}
		if !ok || x.failed {
			m.xferFailed(x, t.typ+" "+status)
			return
		}
		if x.sinkOK && x.srcOK {
			delete(m.xfers[x.file], x.dst)
			if x.sinkBytes != x.srcBytes {
				x.failed = true
				m.log(slog.LevelWarn, "transfer failed", "file", x.file, "to", w.addr, "why", "byte counts differ", "sent", x.srcBytes, "received", x.sinkBytes)
				m.countXferFailure(x, "byte counts differ")
				return
			}
			m.holders[x.file][x.dst] = true
		}
	case t.typ == TypeRemoveFiles:
	}
}

func (m *Master) targetDone(t *mtarget, w *mworker) {
	t.state, t.task = tDone, ""
	if w.busy > 0 {
		w.busy--
	}
	m.log(slog.LevelInfo, "target done", "target", t.Name, "worker", w.addr)
	for _, o := range t.Out {
		m.holders[o] = map[int]bool{w.idx: true}
	}
}

// xferFailed abandons a transfer: the side still running is aborted, and
// the transfer is tried again once both sides finished.
func (m *Master) xferFailed(x *xfer, why string) {
	if !x.failed {
		x.failed = true
		m.log(slog.LevelWarn, "transfer failed", "file", x.file, "to", m.workers[x.dst].addr, "why", why)
		for _, id := range []string{x.sinkTask, x.srcTask} {
			if t := m.tasks[id]; id != "" && t != nil {
				m.send(m.workers[t.worker], New(CmdAbort, id))
			}
		}
	}
	if x.open <= 0 && m.xfers[x.file][x.dst] == x {
		delete(m.xfers[x.file], x.dst)
		m.countXferFailure(x, why)
	}
}

func (m *Master) countXferFailure(x *xfer, why string) {
	if x.short {
		return // a worker short of disk: tried again, not counted
	}
	k := x.file + "@" + strconv.Itoa(x.dst)
	m.xfail[k]++
	if m.xfail[k] >= maxTransferFailures {
		m.fail(errorf("dmake: moving %s to %s failed %d times (%s)", x.file, m.workers[x.dst].addr, m.xfail[k], why))
	}
}

// startXfer moves file from a worker holding it to dst.
func (m *Master) startXfer(file string, dst *mworker) bool {
	if m.xfers[file][dst.idx] != nil {
		return true
	}
	var src *mworker
	for _, i := range sortedInts(m.holders[file]) {
		if w := m.workers[i]; w.state == wUp && i != dst.idx {
			src = w
			break
		}
	}
	if src == nil {
		return false
	}
	if m.xfers[file] == nil {
		m.xfers[file] = map[int]*xfer{}
	}
	x := &xfer{file: file, dst: dst.idx, src: src.idx, key: TransferKey(file, m.rnd.Uint64())}
	m.xfers[file][dst.idx] = x
	st := m.newTask(dst, TypeNetsink)
	st.x = x
	x.sinkTask, x.open = st.id, 1
	m.send(dst, New(CmdNetsink, st.id, file, x.key, m.compress()))
	return true
}

func sortedInts(s map[int]bool) []int {
	out := make([]int, 0, len(s))
	for i := range s {
		out = append(out, i)
	}
	sort.Ints(out)
	return out
}

// available reports whether a file is held by a worker that is up.
func (m *Master) available(f string) bool {
	for i := range m.holders[f] {
		if m.workers[i].state == wUp {
			return true
		}
	}
	return false
}

// schedule starts what can start: dials, targets whose inputs exist,
// transfers of inputs, commands whose inputs arrived, removals, and the
// end of the build.
func (m *Master) schedule() {
	m.dialAll()
	if m.ended {
		return
	}
	for _, t := range m.targets {
		if t.state == tWaiting {
			m.assign(t)
		}
	}
	for _, t := range m.targets {
		if t.state == tAssigned {
			m.prepare(t)
		}
	}
	m.collect()
	m.maybeFinish()
}

func (m *Master) assign(t *mtarget) {
	for _, in := range t.In {
		if !m.available(in) {
			return
		}
	}
	var best *mworker
	bestScore := -1
	for _, w := range m.workers {
		if w.state != wUp || w.busy >= m.cfg.Slots || m.now.Before(w.cooldown) {
			continue
		}
		score := 0
		for _, in := range t.In {
			if m.holders[in][w.idx] {
				score++
			}
		}
		if best == nil || score > bestScore || score == bestScore && w.busy < best.busy {
			best, bestScore = w, score
		}
	}
	if best == nil {
		return
	}
	t.state, t.worker = tAssigned, best.idx
	best.busy++
}

// prepare moves an assigned target's missing inputs, then starts it.
func (m *Master) prepare(t *mtarget) {
	w := m.workers[t.worker]
	ready := true
	for _, in := range t.In {
		if m.holders[in][w.idx] {
			continue
		}
		ready = false
		if !m.startXfer(in, w) && !m.available(in) {
			// Its holders went away meanwhile: choose again later.
			m.requeue(t, "input "+in+" unavailable", false)
			return
		}
	}
	if !ready {
		return
	}
	st := m.newTask(w, TypeShell)
	st.target = t
	t.state, t.task, t.stderr = tRunning, st.id, false
	m.log(slog.LevelInfo, "starting target", "target", t.Name, "worker", w.addr, "task", st.id)
	msg := New(CmdShell, append([]string{st.id, "cmd", "/C"}, t.Run...)...)
	msg.Named = []Named{{Name: "umask", Value: []byte("54")}}
	m.send(w, msg)
}

// collect removes the copies of files no target needs any more: every
// output and transferred copy; never an initial file where the build file
// placed it, nor a kept file on its worker.
func (m *Master) collect() {
	perWorker := map[int][]string{}
	for _, f := range sortedKeys(m.holders) {
		hs := m.holders[f]
		keepAt, kept := m.cfg.Build.Keep[f]
		if !kept && !m.readByTargets(f) {
			continue // a product of the build: it stays where it was made
		}
		stillNeeded := m.neededByTargets(f)
		for _, i := range sortedInts(hs) {
			if stillNeeded || (kept && i == keepAt) || m.initial[f][i] || m.workers[i].state != wUp {
				continue
			}
			if kept && !hs[keepAt] {
				continue // the source of the final move
			}
			if m.xfers[f] != nil && len(m.xfers[f]) > 0 {
				continue
			}
			delete(hs, i)
			perWorker[i] = append(perWorker[i], f)
		}
	}
	for _, i := range sortedIntKeys(perWorker) {
		w := m.workers[i]
		files := perWorker[i]
		sort.Strings(files)
		t := m.newTask(w, TypeRemoveFiles)
		m.send(w, New(CmdRemoveFiles, append([]string{t.id}, files...)...))
	}
}

func (m *Master) readByTargets(f string) bool {
	for _, t := range m.targets {
		for _, in := range t.In {
			if in == f {
				return true
			}
		}
	}
	return false
}

func (m *Master) neededByTargets(f string) bool {
	for _, t := range m.targets {
		if t.state == tDone {
			continue
		}
		for _, in := range t.In {
			if in == f {
				return true
			}
		}
	}
	return false
}

func sortedIntKeys[V any](m map[int]V) []int {
	out := make([]int, 0, len(m))
	for i := range m {
		out = append(out, i)
	}
	sort.Ints(out)
	return out
}

// maybeFinish moves kept files to their workers once every target is
// done, then sends finish-tasks and ends the build when every worker up
// acknowledged it.
func (m *Master) maybeFinish() {
	for _, t := range m.targets {
		if t.state != tDone {
			return
		}
	}
	placed := true
	for _, f := range sortedKeys(m.cfg.Build.Keep) {
		wi := m.cfg.Build.Keep[f]
		if m.holders[f][wi] {
			continue
		}
		placed = false
		if w := m.workers[wi]; w.state == wUp {
			m.startXfer(f, w)
		}
	}
	if !placed {
		return
	}
	for _, byDst := range m.xfers {
		if len(byDst) > 0 {
			return
		}
	}
	if !m.finishing {
		m.finishing = true
		m.log(slog.LevelInfo, "every target done; finishing")
		for _, w := range m.workers {
			m.send(w, New(CmdFinishTasks))
		}
	}
	for _, w := range m.workers {
		if w.state == wUp && !w.acked {
			return
		}
	}
	for _, t := range m.tasks {
		if m.workers[t.worker].state == wUp {
			return // a removal not finished yet
		}
	}
	m.ended = true
	m.log(slog.LevelInfo, "build complete")
	m.Pending.Work = append(m.Pending.Work, loop.Job{ID: 1, Spec: BuildDone{}})
}

// Done reports whether the build ended.
func (m *Master) Done() bool { return m.ended }

var _ loop.Machine[Message] = (*Master)(nil)
var _ loop.Machine[Message] = (*Worker)(nil)
