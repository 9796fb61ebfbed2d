package dupserver

import (
	"log/slog"
	"slices"
	"time"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/loop"
)

// ReplicaConfig configures a replica machine.
type ReplicaConfig struct {
	// KeepAlive is the keep-alive timer of 3.4.2 (DefaultKeepAlive if 0).
	KeepAlive time.Duration
}

// Replica is the duplicate server replica state machine (MS-FSCMT 3.4), a
// loop.Machine: it
// applies what its duplicate server forwards and answers with the same
// key-value pairs. Every answer goes with normal priority, in order. It is
// not safe for concurrent use.
type Replica struct {
	loop.Base[cmt.Message]
	cfg   ReplicaConfig
	st    Store
	peers map[PeerID]int // connected duplicate servers -> unanswered keep-alives

	lastKA time.Time
	fence  Fence // fence.go
	// diskFull: the free space is below the guard's mark; the duplicate
	// server's connections are refused (diskfull.go).
	diskFull bool
}

// NewReplica returns a replica machine over st.
func NewReplica(cfg ReplicaConfig, st Store) *Replica {
	if cfg.KeepAlive <= 0 {
		cfg.KeepAlive = DefaultKeepAlive
	}
	r := &Replica{cfg: cfg, st: st, peers: map[PeerID]int{}}
	var err error
	if r.fence, err = st.Fence(); err != nil {
		r.Pending.Log(slog.LevelError, "dupserver: checksum store: reading the fence", "err", err)
	}
	return r
}

// Step applies one event (loop.Machine): every connection is a duplicate
// server's.
func (r *Replica) Step(ev loop.Event[cmt.Message]) {
	switch ev.Kind {
	case loop.Connected:
		r.connect(ev.Peer, ev.Now)
	case loop.Received:
		r.receive(ev.Peer, ev.Msg, ev.Now)
	case loop.Closed:
		r.disconnect(ev.Peer, ev.Now)
	case loop.Tick:
		r.tick(ev.Now)
	}
}

func (r *Replica) send(to PeerID, m cmt.Message) {
	r.Pending.Send(to, m, int(cmt.PriorityNormal))
}

// connect reports a new connection from a duplicate server.
func (r *Replica) connect(p PeerID, now time.Time) {
	if r.diskFull {
		r.Pending.Log(slog.LevelInfo, "dupserver replica: duplicate server refused: the disk is full", "peer", p)
		r.Pending.CloseConn(p, "disk full")
		return
	}
	r.peers[p] = 0
	r.Pending.Log(slog.LevelInfo, "dupserver: duplicate server connected to the replica", "peer", p)
}

// disconnect reports that a connection closed.
func (r *Replica) disconnect(p PeerID, now time.Time) {
	if _, ok := r.peers[p]; ok {
		delete(r.peers, p)
		r.Pending.Log(slog.LevelInfo, "dupserver: duplicate server disconnected from the replica", "peer", p)
	}
}

// tick advances the keep-alive timer (3.4.6).
func (r *Replica) tick(now time.Time) {
	if r.lastKA.IsZero() {
		r.lastKA = now
		return
	}
	if now.Sub(r.lastKA) < r.cfg.KeepAlive {
		return
	}
	r.lastKA = now
	ids := make([]PeerID, 0, len(r.peers))
	for id := range r.peers {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		if r.peers[id] > 0 {
			r.Pending.Log(slog.LevelWarn, "dupserver: duplicate server did not answer the previous keep-alive", "peer", id, "unanswered", r.peers[id])
		}
		if r.peers[id] >= maxMissedKeepAlives {
			r.Pending.Log(slog.LevelError, "dupserver: duplicate server dead (keep-alives unanswered), closing its connection", "peer", id)
			r.Pending.CloseConn(id, "duplicate server dead: keep-alives unanswered")
			continue
		}
		r.peers[id]++
		r.send(id, &cmt.PPDUPKeepalive{})
	}
}

// receive processes a message from the duplicate server p.
func (r *Replica) receive(p PeerID, m cmt.Message, now time.Time) {
	if _, ok := r.peers[p]; !ok {
		r.Pending.Log(slog.LevelDebug, "dupserver: message from a closed connection dropped", "peer", p, "cmd", m.Code())
		return
	}
	switch m := m.(type) {
	case *cmt.PPDUPSetConfig:
		r.setConfig(p, m)
	case *cmt.PPDUPConfRemove:
		// 3.4.5.2: the collection leaves every structure at once.
		if err := validCollection(m.Collection); err != nil {
			r.fail(p, m.Collection, "PPDUP_CONF_REMOVE: "+err.Error())
			break
		}
		if err := r.st.DeleteCollection(m.Collection); err != nil {
			r.fail(p, m.Collection, "PPDUP_CONF_REMOVE: checksum store: "+err.Error())
			break
		}
		if err := r.st.DeleteCollectionRecord(m.Collection); err != nil {
			r.fail(p, m.Collection, "PPDUP_CONF_REMOVE: checksum store: "+err.Error())
			break
		}
		r.Pending.Log(slog.LevelInfo, "dupserver: replica removed collection", "collection", m.Collection)
	case *cmt.PPDUPConfRemove2:
		// Not specified for a replica; CONF_REMOVE already removed
		// everything, so this only drops a configuration that came back.
		if validCollection(m.Collection) == nil {
			if err := r.st.DeleteCollectionRecord(m.Collection); err != nil {
				r.Pending.Log(slog.LevelError, "dupserver: checksum store", "err", err)
			}
		}
	case *cmt.PPDUPAdd:
		// 3.4.5.3: store (overwriting) and echo the same pairs.
		if err := validCollection(m.Collection); err != nil {
			r.fail(p, m.Collection, "PPDUP_ADD "+m.URI+": "+err.Error())
			break
		}
		if err := r.st.Put(Key{m.Collection, m.Checksum}, Owner{URI: m.URI, NodeID: m.NodeID}, false); err != nil {
			r.fail(p, m.Collection, "PPDUP_ADD "+m.URI+": checksum store: "+err.Error())
			break
		}
		r.send(p, &cmt.PPDUPAddOK{Collection: m.Collection, NodeID: m.NodeID, URI: m.URI, Checksum: m.Checksum,
			PPDUPID: m.PPDUPID, DBName: m.DBName})
	case *cmt.PPDUPRemove:
		// 3.4.5.4: delete if present and echo the same pairs.
		if err := validCollection(m.Collection); err != nil {
			r.fail(p, m.Collection, "PPDUP_REMOVE "+m.URI+": "+err.Error())
			break
		}
		if err := r.st.Delete(Key{m.Collection, m.Checksum}, false); err != nil {
			r.fail(p, m.Collection, "PPDUP_REMOVE "+m.URI+": checksum store: "+err.Error())
			break
		}
		r.send(p, &cmt.PPDUPRemoveOK{Collection: m.Collection, NodeID: m.NodeID, URI: m.URI, Checksum: m.Checksum,
			PPDUPID: m.PPDUPID, DBName: m.DBName})
	case *cmt.PPDUPKeepalive:
		// Not specified for a replica; it answers as a duplicate server
		// does (3.3.5.6), and the duplicate server uses the answer as an
		// in-order barrier. Its PKT_EPOCH (fence.go) comes before any
		// change it forwards after it.
		r.adoptEpoch(uint64(m.Epoch))
		r.send(p, &cmt.PPDUPKeepaliveAck{})
	case *cmt.PPDUPKeepaliveAck:
		r.peers[p] = 0
	default:
		r.Pending.Log(slog.LevelWarn, "dupserver: unexpected message at the replica ignored", "peer", p, "cmd", m.Code())
	}
}

func (r *Replica) setConfig(p PeerID, m *cmt.PPDUPSetConfig) {
	colls := slices.Clone(m.Config.Collections)
	if m.Collection != "" {
		if _, ok := m.Config.Collection(m.Collection); !ok {
			colls = append(colls, cmt.Collection{Name: m.Collection})
		}
	}
	for _, c := range colls {
		if err := validCollection(c.Name); err != nil {
			r.fail(p, c.Name, "PPDUP_SET_CONFIG: "+err.Error())
			return
		}
		if err := r.st.PutCollection(CollectionRecord{Name: c.Name, Config: c}); err != nil {
			r.fail(p, c.Name, "PPDUP_SET_CONFIG: checksum store: "+err.Error())
			return
		}
	}
	r.send(p, &cmt.PPDUPConfigAck{VClock: m.VClock})
}

// fail reports an operation the replica could not apply. The duplicate
// server gives the replica up on PPDUP_ERROR and resends its unacknowledged
// changes when it reconnects.
func (r *Replica) fail(p PeerID, coll, why string) {
	r.Pending.Log(slog.LevelError, "dupserver: replica cannot apply a message", "collection", coll, "why", why)
	r.send(p, &cmt.PPDUPError{Collection: coll, Why: why})
}
