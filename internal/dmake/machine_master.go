package dmake

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/trawl/trawl/internal/loop"
)

// MasterConfig configures a master machine.
type MasterConfig struct {
	// Workers are the workers' addresses (host:port of their listener).
	Workers []string
	Build   *Build
	// HeartbeatPeriod is how often request_heartbeat goes to each worker
	// (15 s if 0; the spec wants less than 60 s).
	HeartbeatPeriod time.Duration
	// HeartbeatTimeout is how long a worker may stay silent, or
	// disconnected, before its tasks and files are given up (900 s if 0).
	HeartbeatTimeout time.Duration
	// Slots is how many targets a worker runs (or receives inputs for) at
	// once (2 if 0).
	Slots int
	// MaxAttempts bounds the runs of a target whose command fails (3 if 0).
	MaxAttempts int
	// Compress sends transfers zlib-compressed.
	Compress bool
	// Seed seeds the transfer keys' random parts.
	Seed uint64
	// BuildID, when not empty, goes with cd as the named argument
	// "#build=<id>": a worker pins its directory to it (see the package
	// comment, "Split network").
	BuildID string
}

// BuildDone is the job a master machine emits when the build ended: Err
// nil when every target ran and every kept file is in place.
type BuildDone struct{ Err error }

type wstate int

const (
	wDown wstate = iota // not connected (yet, or again)
	wUp
	wDead // gave up on it: its files are forgotten
)

type mworker struct {
	idx        int
	addr, host string
	peer       loop.Peer
	state      wstate
	lastHeard  time.Time
	downSince  time.Time
	dialing    bool
	nextDial   time.Time
	nextHB     time.Time
	hbID       int64
	busy       int
	cooldown   time.Time
	acked      bool
	everUp     bool
}

type tstate int

const (
	tWaiting tstate = iota
	tAssigned
	tRunning
	tDone
)

type mtarget struct {
	*Target
	state    tstate
	worker   int
	task     string
	attempts int
	errors   int
	stderr   bool
}

type xfer struct {
	file      string
	dst, src  int
	key       string
	sinkTask  string
	srcTask   string
	open      int // tasks not finished yet
	sinkBytes int64
	srcBytes  int64
	sinkOK    bool
	srcOK     bool
	failed    bool
	short     bool // a side failed for want of disk: not counted
}

type mtask struct {
	id     string
	worker int
	typ    string
	target *mtarget
	x      *xfer
}

// Master is the protocol server's machine (3.2): it dials every worker,
// sets each one up (cd, setenv LANG=C LC_ALL=C, disk_limit), runs the
// build's targets on them in parallel, moves inputs with netsink/netsource
// before a target starts, removes files no target needs any more, asks for
// heartbeats and gives up a silent worker's work. It does no I/O.
type Master struct {
	loop.Base[Message]
	cfg       MasterConfig
	workers   []*mworker
	byPeer    map[loop.Peer]*mworker
	targets   []*mtarget
	producer  map[string]*mtarget
	holders   map[string]map[int]bool
	initial   map[string]map[int]bool
	xfers     map[string]map[int]*xfer // file -> destination -> transfer
	xfail     map[string]int           // "file@dst" -> failed transfers
	tasks     map[string]*mtask
	nextTask  uint64
	rnd       *rand.Rand
	started   bool
	finishing bool
	ended     bool
	now       time.Time
}

// Defaults of MasterConfig.
const (
	DefaultHeartbeatPeriod  = 15 * time.Second
	DefaultHeartbeatTimeout = 900 * time.Second
	maxTransferFailures     = 5
	maxTaskErrors           = 20
	redialEvery             = time.Second
)

// NewMaster returns a master machine for a build.
func NewMaster(cfg MasterConfig) *Master {
	if cfg.HeartbeatPeriod <= 0 {
		cfg.HeartbeatPeriod = DefaultHeartbeatPeriod
	}
	if cfg.HeartbeatTimeout <= 0 {
		cfg.HeartbeatTimeout = DefaultHeartbeatTimeout
	}
	if cfg.Slots <= 0 {
		cfg.Slots = 2
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = 3
	}
	m := &Master{cfg: cfg, byPeer: map[loop.Peer]*mworker{}, producer: map[string]*mtarget{},
		holders: map[string]map[int]bool{}, initial: map[string]map[int]bool{},
		xfers: map[string]map[int]*xfer{}, xfail: map[string]int{}, tasks: map[string]*mtask{},
		rnd: rand.New(rand.NewPCG(cfg.Seed, 0x646d616b65))}
	for i, a := range cfg.Workers {
		host := hostOf(a)
		m.workers = append(m.workers, &mworker{idx: i, addr: a, host: host})
	}
	for _, t := range cfg.Build.Targets {
		mt := &mtarget{Target: t}
		m.targets = append(m.targets, mt)
		for _, o := range t.Out {
			m.producer[o] = mt
		}
	}
	for f, ws := range cfg.Build.Files {
		m.holders[f], m.initial[f] = map[int]bool{}, map[int]bool{}
		for _, w := range ws {
			m.holders[f][w], m.initial[f][w] = true, true
		}
	}
	return m
}

func (m *Master) log(level slog.Level, msg string, args ...any) {
	m.Pending.Log(level, "dmake master: "+msg, args...)
}

func (m *Master) send(w *mworker, msg *Message) {
	if w.state == wUp {
		m.Pending.Send(w.peer, *msg, 0)
	}
}

func (m *Master) newTask(w *mworker, typ string) *mtask {
	m.nextTask++
	t := &mtask{id: strconv.FormatUint(m.nextTask, 10), worker: w.idx, typ: typ}
	m.tasks[t.id] = t
	return t
}

// Step applies one event.
func (m *Master) Step(ev loop.Event[Message]) {
	m.now = ev.Now
	if m.ended {
		return
	}
	switch ev.Kind {
	case loop.Connected:
		w := m.workerByTag(ev.Tag)
		if w == nil {
			m.Pending.CloseConn(ev.Peer, "unknown dial")
			return
		}
		w.dialing = false
		m.up(w, ev.Peer)
	case loop.DialFailed:
		if w := m.workerByTag(ev.Tag); w != nil {
			w.dialing = false
			w.nextDial = ev.Now.Add(redialEvery)
			if !w.everUp {
				m.log(slog.LevelDebug, "cannot reach worker", "worker", w.addr, "err", ev.Err)
			}
		}
	case loop.Closed:
		if w := m.byPeer[ev.Peer]; w != nil {
			m.log(slog.LevelWarn, "lost the connection to a worker", "worker", w.addr, "err", ev.Err)
			m.down(w)
		}
	case loop.Received:
		if w := m.byPeer[ev.Peer]; w != nil && w.state == wUp {
			m.receive(w, &ev.Msg)
		}
	case loop.Tick:
		m.tick()
	}
	if !m.ended {
		m.schedule()
	}
	m.Pending.WakeAt(m.nextWake())
}

func (m *Master) workerByTag(tag string) *mworker {
	i, err := strconv.Atoi(tag)
	if err != nil || i < 0 || i >= len(m.workers) {
		return nil
	}
	return m.workers[i]
}

func (m *Master) nextWake() time.Time {
	var t time.Time
	for _, w := range m.workers {
		for _, c := range []time.Time{w.nextHB, w.nextDial} {
			if !c.IsZero() && (t.IsZero() || c.Before(t)) {
				t = c
			}
		}
	}
	return t
}

// up sets a freshly connected worker up for the build (3.2.4.1, 3.2.4.7).
func (m *Master) up(w *mworker, p loop.Peer) {
	w.peer, w.state, w.everUp = p, wUp, true
	m.byPeer[p] = w
	w.lastHeard, w.nextHB, w.acked = m.now, m.now.Add(m.cfg.HeartbeatPeriod), false
	m.log(slog.LevelInfo, "worker connected", "worker", w.addr)
	cd := New(CmdCd, m.cfg.Build.Dir)
	if m.cfg.BuildID != "" {
		cd.Named = []Named{{Name: NamedBuild, Value: []byte(m.cfg.BuildID)}}
	}
	m.send(w, cd)
	m.send(w, New(CmdSetenv, "LANG", "C"))
	m.send(w, New(CmdSetenv, "LC_ALL", "C"))
	for _, kv := range m.cfg.Build.Env {
		m.send(w, New(CmdSetenv, kv[0], kv[1]))
	}
	if m.cfg.Build.DiskLimitMB > 0 {
		m.send(w, New(CmdDiskLimit, strconv.FormatInt(m.cfg.Build.DiskLimitMB, 10)))
	}
	if m.finishing {
		m.send(w, New(CmdFinishTasks))
	}
}

// down handles a worker that is gone: everything it was running is lost
// (a worker aborts a closed connection's tasks), its files wait for it
// until the heartbeat timeout.
func (m *Master) down(w *mworker) {
	if w.state == wUp {
		delete(m.byPeer, w.peer)
		m.Pending.CloseConn(w.peer, "worker down")
		w.state, w.downSince, w.nextDial = wDown, m.now, m.now.Add(redialEvery)
	}
	for _, id := range m.taskIDs() {
		t := m.tasks[id]
		if t.worker != w.idx {
			continue
		}
		delete(m.tasks, id)
		switch {
		case t.target != nil:
			m.requeue(t.target, "its worker went away", false)
		case t.x != nil:
			t.x.open--
			m.xferFailed(t.x, "a side went away")
		}
	}
	for _, t := range m.targets {
		if t.state == tAssigned && t.worker == w.idx {
			m.requeue(t, "its worker went away", false)
		}
	}
	// Transfers from or to it: the other side is aborted.
	for _, f := range sortedKeys(m.xfers) {
		for _, dst := range sortedIntKeys(m.xfers[f]) {
			if x := m.xfers[f][dst]; x.src == w.idx || x.dst == w.idx {
				m.xferFailed(x, "a side went away")
			}
		}
	}
	w.busy = 0
}

// taskIDs lists the tasks in the order they were made.
func (m *Master) taskIDs() []string {
	ids := make([]string, 0, len(m.tasks))
	for id := range m.tasks {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool {
		return len(ids[i]) < len(ids[j]) || len(ids[i]) == len(ids[j]) && ids[i] < ids[j]
	})
	return ids
}

// dead gives a worker up: its files are forgotten; targets whose outputs
// are now nowhere run again.
func (m *Master) dead(w *mworker) {
	m.log(slog.LevelWarn, "worker silent for the heartbeat timeout; reassigning its work", "worker", w.addr, "timeout", m.cfg.HeartbeatTimeout)
	m.down(w)
	w.state = wDead
	w.nextDial = m.now.Add(redialEvery)
	for _, hs := range m.holders {
		delete(hs, w.idx)
	}
	m.recoverLost()
}

// recoverLost re-runs done targets whose outputs are still needed and held
// nowhere any more, until nothing changes.
func (m *Master) recoverLost() {
	for changed := true; changed; {
		changed = false
		for _, f := range sortedKeys(m.holders) {
			if hs := m.holders[f]; len(hs) > 0 || !m.needed(f) {
				continue
			}
			p := m.producer[f]
			if p == nil {
				if !m.ended {
					m.fail(fmt.Errorf("dmake: input file %s is lost with the workers that held it", f))
				}
				return
			}
			if p.state == tDone {
				m.log(slog.LevelWarn, "output lost; running its target again", "file", f, "target", p.Name)
				p.state = tWaiting
				changed = true
			}
		}
	}
}

// needed reports whether a file is still to be read by a target not done,
// or is kept.
func (m *Master) needed(f string) bool {
	if _, ok := m.cfg.Build.Keep[f]; ok {
		return true
	}
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

func (m *Master) tick() {
	for _, w := range m.workers {
		switch w.state {
		case wUp:
			if m.now.Sub(w.lastHeard) > m.cfg.HeartbeatTimeout {
				m.dead(w)
				continue
			}
			if !m.now.Before(w.nextHB) {
				w.hbID++
				w.nextHB = m.now.Add(m.cfg.HeartbeatPeriod)
				m.send(w, New(CmdRequestHeartbeat, strconv.FormatInt(w.hbID, 10)))
			}
		case wDown:
			if w.everUp && m.now.Sub(w.downSince) > m.cfg.HeartbeatTimeout {
				m.dead(w)
			}
		}
	}
}

func (m *Master) dialAll() {
	for _, w := range m.workers {
		if w.state != wUp && !w.dialing && !m.now.Before(w.nextDial) {
			w.dialing = true
			m.Pending.Dial = append(m.Pending.Dial, loop.DialReq{Tag: strconv.Itoa(w.idx), Addr: w.addr})
		}
	}
}

func (m *Master) fail(err error) {
	m.log(slog.LevelError, "build failed", "err", err)
	m.ended = true
	m.Pending.Work = append(m.Pending.Work, loop.Job{ID: 1, Spec: BuildDone{Err: err}})
}

func (m *Master) requeue(t *mtarget, why string, counts bool) {
	if !m.unassign(t) {
		return
	}
	if counts {
		t.attempts++
		if t.attempts >= m.cfg.MaxAttempts {
			m.fail(fmt.Errorf("dmake: target %s failed %d times (%s)", t.Name, t.attempts, why))
			return
		}
	} else {
		t.errors++
		if t.errors >= maxTaskErrors {
			m.fail(fmt.Errorf("dmake: target %s could not run (%s)", t.Name, why))
			return
		}
	}
	m.log(slog.LevelWarn, "target to run again", "target", t.Name, "why", why)
}

// putBack puts t back without counting it: its worker is short of disk,
// and a build waits for space (another worker's, or this one's when it is
// freed) however long that takes, up to --build-timeout.
func (m *Master) putBack(t *mtarget, why string) {
	if m.unassign(t) {
		m.log(slog.LevelWarn, "target to run again", "target", t.Name, "why", why)
	}
}

// unassign puts an assigned or running t back to waiting and reports
// whether it was.
func (m *Master) unassign(t *mtarget) bool {
	if t.state != tAssigned && t.state != tRunning {
		return false
	}
	if w := m.workers[t.worker]; w.busy > 0 {
		w.busy--
	}
	if t.task != "" {
		delete(m.tasks, t.task)
		t.task = ""
	}
	t.state, t.stderr = tWaiting, false
	return true
}

func errorf(format string, a ...any) error { return fmt.Errorf(format, a...) }

// hostOf returns the host of a host:port address ("[v6]:port" too).
func hostOf(addr string) string {
	i := strings.LastIndexByte(addr, ':')
	if i < 0 {
		return addr
	}
	return strings.TrimSuffix(strings.TrimPrefix(addr[:i], "["), "]")
}
