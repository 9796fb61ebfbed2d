package multinode

import (
	"errors"
	"log/slog"
	"net/netip"
	"time"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/loop"
)

// maxPendingLookups bounds the lookups asked for and not answered; past it
// a lookup fails at once ("lookup queue full"), so that the driver's work
// queue stays bounded.
const maxPendingLookups = 1 << 16

// defaultDNSFailText is the error of a lookup refused for that bound.
const defaultDNSFailText = "lookup queue full"

// Step applies one event (loop.Machine): a connection came up, a message
// arrived, a connection closed, a tick, a lookup's result, a connection's
// send queue filled (Blocked) or drained (Unblocked). The typed event
// methods (Connect, Receive, Disconnect, Tick, DNSResult, SetBusy) do the
// work; Step files the actions they return into the pending batch
// (emit).
func (m *MNS) Step(ev loop.Event[cmt.Message]) {
	if m.holdOnDisk(ev) {
		return
	}
	var acts []Action
	switch ev.Kind {
	case loop.Connected:
		acts = m.Connect(ev.Peer, ev.Now)
	case loop.Received:
		acts = m.Receive(ev.Peer, ev.Msg, ev.Now)
	case loop.Closed:
		acts = m.Disconnect(ev.Peer, ev.Now)
	case loop.Tick:
		acts = m.Tick(ev.Now)
	case loop.Result:
		host, ok := m.jobs[ev.Job]
		if !ok {
			return
		}
		delete(m.jobs, ev.Job)
		var ttl time.Duration
		addrs, _ := ev.Result.([]netip.Addr)
		if a, ok := ev.Result.(LookupAnswer); ok {
			addrs, ttl = a.Addrs, a.TTL
		}
		acts = m.DNSResultTTL(host, addrs, ttl, ev.Err, ev.Now)
	case loop.Blocked:
		acts = m.SetBusy(ev.Peer, true, ev.Now)
	case loop.Unblocked:
		acts = m.SetBusy(ev.Peer, false, ev.Now)
	case loop.Input:
		op, ok := ev.Result.(Op)
		if !ok {
			return
		}
		var err error
		if acts, err = op(m, ev.Now); err != nil {
			acts = append(acts, LogLine{Level: slog.LevelWarn, Msg: "multinode: operation failed", Args: []any{"err", err.Error()}})
		}
	}
	m.emit(acts, ev.Now)
}

// Op is an administrative operation on the machine. An Input event whose
// Result is an Op runs it (a scenario trace's "add-collection"); its error
// is logged. Server.op runs operations on the driver's loop directly, to
// hand their error back.
type Op func(m *MNS, now time.Time) ([]Action, error)

// emit files actions into the pending batch: Send and CloseConn into Out,
// Lookup into Work (a job whose result comes back to Step), PersistRoute,
// PersistState, DropRoutes and AppendLog into Persist, LogLine into Logs.
// An administrative operation run on the driver's loop (Server.op) hands
// its actions here too.
func (m *MNS) emit(acts []Action, now time.Time) {
	for _, a := range acts {
		switch x := a.(type) {
		case Send:
			m.Pending.Send(x.Conn, x.Message, int(x.Priority))
		case CloseConn:
			m.Pending.CloseConn(x.Conn, x.Reason)
		case Lookup:
			if len(m.jobs) >= maxPendingLookups {
				m.emit(m.DNSResult(x.Host, nil, errors.New(defaultDNSFailText), now), now)
				continue
			}
			if m.jobs == nil {
				m.jobs = map[uint64]string{}
			}
			m.nextJob++
			m.jobs[m.nextJob] = x.Host
			m.Pending.Work = append(m.Pending.Work, loop.Job{ID: m.nextJob, Spec: x})
		case PersistRoute, PersistState, PersistStats, DropRoutes, AppendLog:
			m.Pending.Persist = append(m.Pending.Persist, a)
		case LogLine:
			m.Pending.Log(x.Level, x.Msg, x.Args...)
		}
	}
}
