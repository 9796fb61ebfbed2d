package distrib

import (
	"fmt"
	"log/slog"
	"strconv"

	"github.com/trawl/trawl/internal/distrib/wire"
	"github.com/trawl/trawl/internal/loop"
)

// SessionName is the name in the AOR of session id (MS-FSCF 3.4, not
// public, gives the real one).
func SessionName(id int64) string {
	return "esp/subsystems/processing/session/" + strconv.FormatInt(id, 10)
}

func (m *Machine) sessionAOR(id int64, external bool) wire.AOR {
	a := m.aor(SessionName(id), wire.IfaceSession, wire.VersionSession)
	a.ObjectID = strconv.FormatInt(id, 10)
	if external {
		a.Port = m.port(true)
	}
	return a
}

// dispatcherNode serves processing::dispatcher_node (MS-FSCDFT 3.5.4).
func (m *Machine) dispatcherNode(peer loop.Peer, f *wire.Frame) {
	bad := func(what string) { m.Pending.Send(peer, wire.Raise(f, wire.ExcBadRequest, what), 0) }
	switch f.Method {
	case wire.MethodPing:
		m.Pending.Send(peer, wire.ReplyTo(f), 0)
	case "create_session", "create", "recreate":
		// create_session(id, collection, callback, guarantees, priority);
		// create and recreate(id, collection, guarantees, priority, external_client).
		if len(f.Args) != 5 || f.Args[0].Tag != wire.Int || f.Args[0].I < 0 || f.Args[1].Tag != wire.String {
			bad(f.Method + " takes a session id >= 0, a collection and three more arguments")
			return
		}
		id, coll := f.Args[0].I, f.Args[1].S
		set, prio := f.Args[3], f.Args[4]
		if f.Method != "create_session" {
			set, prio = f.Args[2], f.Args[3]
			if f.Args[4].Tag != wire.Bool {
				bad("external_client is a boolean")
				return
			}
		}
		if err := wire.CheckGuarantees(set, prio); err != nil {
			m.Pending.Send(peer, wire.Raise(f, wire.ExcUnsupportedGuarantees, err.Error()), 0)
			return
		}
		if len(m.collections) > 0 && !m.collections[coll] {
			m.Pending.Send(peer, wire.Raise(f, wire.ExcUnknownCollection, fmt.Sprintf("content collection %q is unknown to content distributor %d", coll, m.cfg.NodeID)), 0)
			return
		}
		// The fence: a create whose id carries an epoch older than one
		// seen comes from a master that was replaced. A recreate's id is
		// the client's (the creating master's epoch), so it only teaches.
		if e := SessionEpoch(id); f.Method != "recreate" && e != 0 && e < m.seen&0xffff {
			m.Pending.Send(peer, wire.Raise(f, wire.ExcUnsupportedGuarantees,
				fmt.Sprintf("%s%d seen, session %d has epoch %d", staleEpoch, m.seen, id, e)), 0)
			return
		} else if e > m.seen {
			m.seen = e
		}
		method := "create"
		if f.Method == "recreate" {
			method = "recreate"
		}
		m.callJob(pendingCall{peer: peer, f: f}, IndexSession{Method: method, ID: id, Collection: coll})
	case "destroy_session":
		if len(f.Args) != 1 || f.Args[0].Tag != wire.Int || f.Args[0].I < 0 {
			bad("destroy_session takes a session id >= 0")
			return
		}
		s, ok := m.sessions[f.Args[0].I]
		if !ok {
			m.Pending.Send(peer, wire.ReplyTo(f), 0)
			return
		}
		delete(m.sessions, f.Args[0].I)
		m.updateLoad()
		m.callJob(pendingCall{peer: peer, f: f}, IndexSession{Method: "close", ID: f.Args[0].I, Collection: s.collection})
	case "remove_sessions":
		if len(f.Args) != 1 || f.Args[0].Tag != wire.String {
			bad("remove_sessions takes a collection")
			return
		}
		var ids []wire.Value
		for _, id := range m.Sessions() {
			if m.sessions[id].collection == f.Args[0].S {
				delete(m.sessions, id)
				ids = append(ids, wire.I64(id))
			}
		}
		m.updateLoad()
		m.Pending.Send(peer, wire.ReplyTo(f, wire.Lst(ids...)), 0)
	case "get_sessions":
		var ids []wire.Value
		for _, id := range m.Sessions() {
			ids = append(ids, wire.I64(id))
		}
		m.Pending.Send(peer, wire.ReplyTo(f, wire.Lst(ids...)), 0)
	case "get_load":
		m.Pending.Send(peer, wire.ReplyTo(f, wire.I64(m.load)), 0)
	case "get_operations":
		m.Pending.Send(peer, wire.ReplyTo(f, wire.I64(m.inflightOps)), 0)
	default:
		bad(fmt.Sprintf("processing::dispatcher_node has no method %q", f.Method))
	}
}

// nodeCallDone answers a dispatcher_node call once the indexing
// dispatcher has answered.
func (m *Machine) nodeCallDone(pc pendingCall, ev loop.Event[*wire.Frame]) {
	f := pc.f
	if f.Method == "destroy_session" {
		if ev.Err != nil {
			m.logf(slog.LevelWarn, "the indexing dispatcher did not close a session", "err", ev.Err)
		}
		m.Pending.Send(pc.peer, wire.ReplyTo(f), 0)
		return
	}
	if ev.Err != nil {
		m.Pending.Send(pc.peer, wire.Raise(f, wire.ExcUnsupportedGuarantees, "the indexing dispatcher cannot open the session: "+ev.Err.Error()), 0)
		return
	}
	id, coll := f.Args[0].I, f.Args[1].S
	external := f.Method != "create_session" && f.Args[4].I != 0
	if s, ok := m.sessions[id]; ok && f.Method == "recreate" {
		external = s.external // 3.5.4.3: the existing session
	}
	m.sessions[id] = session{collection: coll, external: external}
	m.updateLoad()
	if m.partitions == 0 {
		// The session's operations need the indexers: list them now
		// rather than fail its first batch.
		m.refreshIndexers(ev.Now, true)
	}
	m.Pending.Send(pc.peer, wire.ReplyTo(f, m.sessionAOR(id, external).Value()), 0)
}
