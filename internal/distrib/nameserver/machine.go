package nameserver

import (
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"time"

	"github.com/trawl/trawl/internal/distrib/wire"
	"github.com/trawl/trawl/internal/loop"
)

// Object is the name the name server answers to.
const Object = wire.IfaceNameServer

// Record is a change of the bindings, persisted before it is announced.
type Record struct {
	Bind bool
	AOR  wire.AOR // for an unbind, Name, Type and Version
}

func (r Record) String() string {
	if r.Bind {
		return "bind " + r.AOR.String()
	}
	return fmt.Sprintf("unbind %s %s %s", r.AOR.Name, r.AOR.Type, r.AOR.Version)
}

// PingJob asks the worker to __ping the object at Addr.
type PingJob struct {
	Addr, Type string
}

func (p PingJob) String() string { return "ping " + p.Addr + " " + p.Type }

// Config configures a Machine.
type Config struct {
	// PingInterval is the liveness period (5 s if 0; none if < 0).
	PingInterval time.Duration
	// PingFailures drops an address's bindings after this many failed
	// pings in a row (3 if 0).
	PingFailures int
	// Bindings are the bindings restored from storage.
	Bindings []wire.AOR
}

type liveness struct {
	fails   int
	pending bool
}

// Machine is the name server's state machine.
type Machine struct {
	loop.Base[*wire.Frame]
	cfg      Config
	bindings map[string]wire.AOR
	live     map[string]*liveness
	disk     diskHold // records held while the disk is full (diskfull.go)
	nextPing time.Time
	jobs     map[uint64]string // ping job -> addr
	nextJob  uint64
}

// New returns a machine holding cfg.Bindings.
func New(cfg Config) *Machine {
	if cfg.PingInterval == 0 {
		cfg.PingInterval = 5 * time.Second
	}
	if cfg.PingFailures <= 0 {
		cfg.PingFailures = 3
	}
	m := &Machine{cfg: cfg, bindings: map[string]wire.AOR{}, live: map[string]*liveness{}, jobs: map[uint64]string{}}
	for _, a := range cfg.Bindings {
		m.bindings[a.Key()] = a
	}
	return m
}

// Bindings returns the bindings, sorted by name, type and version.
func (m *Machine) Bindings() []wire.AOR {
	out := make([]wire.AOR, 0, len(m.bindings))
	for _, a := range m.bindings {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key() < out[j].Key() })
	return out
}

// Step implements loop.Machine.
func (m *Machine) Step(ev loop.Event[*wire.Frame]) {
	switch ev.Kind {
	case loop.Received:
		m.receive(ev)
	case loop.Tick:
		m.tick(ev.Now)
	case loop.Result:
		m.pinged(ev)
	}
}

func (m *Machine) receive(ev loop.Event[*wire.Frame]) {
	f := ev.Msg
	if f.Kind != wire.Request {
		if f.Kind != wire.Oneway {
			m.Pending.Log(slog.LevelWarn, "nameserver: unexpected frame", "peer", ev.Peer, "frame", f.String())
		}
		return
	}
	reply := m.call(f)
	m.Pending.Send(ev.Peer, reply, 0)
}

func (m *Machine) call(f *wire.Frame) *wire.Frame {
	if f.Object != Object {
		return wire.Raise(f, wire.ExcBadRequest, fmt.Sprintf("no object %q here, this is the name server", f.Object))
	}
	str := func(i int) (string, bool) { a := f.Arg(i); return a.S, a.Tag == wire.String }
	key := func() (wire.AOR, bool) {
		n, ok1 := str(0)
		t, ok2 := str(1)
		v, ok3 := str(2)
		return wire.AOR{Name: n, Type: t, Version: v}, ok1 && ok2 && ok3 && (len(f.Args) == 3 || f.Method == "unbind" && len(f.Args) == 4)
	}
	switch f.Method {
	case wire.MethodPing:
		return wire.ReplyTo(f)
	case "bind":
		a, err := wire.ParseAOR(f.Arg(0))
		if err != nil || len(f.Args) != 1 {
			return wire.Raise(f, wire.ExcBadRequest, "bind takes one AOR")
		}
		old, ok := m.bindings[a.Key()]
		if ok && old.Addr() != a.Addr() {
			return wire.Raise(f, wire.ExcAlreadyBound, fmt.Sprintf("%s %s %s is bound to %s", a.Name, a.Type, a.Version, old.Addr()))
		}
		if ok && old == a {
			return wire.ReplyTo(f) // bound again by its holder: nothing changes
		}
		m.bindings[a.Key()] = a
		m.persist(Record{Bind: true, AOR: a})
		m.Pending.Log(slog.LevelInfo, "nameserver: bind", "aor", a.String())
		return wire.ReplyTo(f)
	case "resolve":
		k, ok := key()
		if !ok {
			return wire.Raise(f, wire.ExcBadRequest, "resolve takes name, interface type and version")
		}
		a, found := m.bindings[k.Key()]
		if !found {
			return wire.Raise(f, wire.ExcResolve, fmt.Sprintf("no object bound as %s %s %s", k.Name, k.Type, k.Version))
		}
		return wire.ReplyTo(f, a.Value())
	case "unbind":
		k, ok := key()
		if !ok {
			return wire.Raise(f, wire.ExcBadRequest, "unbind takes name, interface type and version")
		}
		old, found := m.bindings[k.Key()]
		if len(f.Args) == 4 {
			// unbind(name, type, version, holder): only if still holder's.
			h, err := wire.ParseAOR(f.Arg(3))
			if err != nil || h.Key() != k.Key() {
				return wire.Raise(f, wire.ExcBadRequest, "unbind's holder is not an AOR of that name, type and version")
			}
			found = found && old == h
		}
		if found {
			delete(m.bindings, k.Key())
			m.persist(Record{AOR: k})
			m.Pending.Log(slog.LevelInfo, "nameserver: unbind", "name", k.Name, "type", k.Type, "version", k.Version)
		}
		return wire.ReplyTo(f, wire.Bln(found))
	case "list":
		p, ok := str(0)
		if !ok || len(f.Args) != 1 {
			return wire.Raise(f, wire.ExcBadRequest, "list takes a name prefix")
		}
		var out []wire.Value
		for _, a := range m.Bindings() {
			if strings.HasPrefix(a.Name, p) {
				out = append(out, a.Value())
			}
		}
		return wire.ReplyTo(f, wire.Lst(out...))
	}
	return wire.Raise(f, wire.ExcBadRequest, fmt.Sprintf("the name server has no method %q", f.Method))
}

func (m *Machine) tick(now time.Time) {
	if m.cfg.PingInterval < 0 {
		return
	}
	if m.nextPing.IsZero() {
		m.nextPing = now.Add(m.cfg.PingInterval)
	}
	if now.Before(m.nextPing) {
		m.Pending.WakeAt(m.nextPing)
		return
	}
	m.nextPing = now.Add(m.cfg.PingInterval)
	m.Pending.WakeAt(m.nextPing)
	addrs := map[string]string{}
	for _, a := range m.Bindings() {
		if _, ok := addrs[a.Addr()]; !ok {
			addrs[a.Addr()] = a.Type
		}
	}
	for addr := range m.live {
		if _, ok := addrs[addr]; !ok {
			delete(m.live, addr)
		}
	}
	keys := make([]string, 0, len(addrs))
	for addr := range addrs {
		keys = append(keys, addr)
	}
	sort.Strings(keys)
	for _, addr := range keys {
		l := m.live[addr]
		if l == nil {
			l = &liveness{}
			m.live[addr] = l
		}
		if l.pending {
			continue // the ping under way ends with its timeout
		}
		m.nextJob++
		m.jobs[m.nextJob] = addr
		l.pending = true
		m.Pending.Work = append(m.Pending.Work, loop.Job{ID: m.nextJob, Spec: PingJob{Addr: addr, Type: addrs[addr]}})
	}
}

func (m *Machine) pinged(ev loop.Event[*wire.Frame]) {
	addr, ok := m.jobs[ev.Job]
	if !ok {
		return
	}
	delete(m.jobs, ev.Job)
	l := m.live[addr]
	if l == nil || !l.pending {
		return
	}
	l.pending = false
	if ev.Err == nil {
		l.fails = 0
		return
	}
	m.failed(addr, l, ev.Err.Error())
}

func (m *Machine) failed(addr string, l *liveness, why string) {
	l.pending = false
	l.fails++
	if l.fails < m.cfg.PingFailures {
		m.Pending.Log(slog.LevelInfo, "nameserver: ping failed", "addr", addr, "failures", l.fails, "err", why)
		return
	}
	delete(m.live, addr)
	for _, a := range m.Bindings() {
		if a.Addr() == addr {
			delete(m.bindings, a.Key())
			m.persist(Record{AOR: wire.AOR{Name: a.Name, Type: a.Type, Version: a.Version}})
			m.Pending.Log(slog.LevelWarn, "nameserver: dropped a dead object", "aor", a.String(), "failures", l.fails, "err", why)
		}
	}
}
