package dupserver

import (
	"log/slog"
	"time"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/loop"
)

// DefaultPromoteAfter is how long a replica's duplicate server must have
// been gone before a node scheduler's failover connection promotes it.
const DefaultPromoteAfter = 3 * time.Second

// FailoverConfig configures a replica with a failover listener.
type FailoverConfig struct {
	// Replica configures the replica machine it starts as.
	Replica ReplicaConfig
	// DS configures the duplicate server it becomes when promoted; with
	// DS.ReplicaAddr set (the old duplicate server, restarted as a
	// replica), every mapping is marked for it at the promotion.
	DS DSConfig
	// PromoteAfter is how long the duplicate server must have been gone
	// (DefaultPromoteAfter if 0).
	PromoteAfter time.Duration
	// Start is when the machine starts: the duplicate server counts as
	// gone since then until it connects.
	Start time.Time
}

// Failover is a replica that a node scheduler's connection on the failover
// listener promotes to a duplicate server over the same store, when its
// duplicate server has been gone for PromoteAfter (package comment,
// "Failover"). It is a loop.Machine that runs the Replica, then the DS,
// inside, and hands on their batches.
//
//   - Before the promotion: a connection tagged TagListen is the duplicate
//     server; one tagged TagFailover is a node scheduler, admitted
//     (promoting the replica) only when no duplicate server has been
//     connected for PromoteAfter, refused (closed at once) otherwise.
//   - After it: node schedulers are admitted on either listener, except
//     that a connection on the replica listener is the old duplicate server
//     coming back as one: it is refused, since it must come back as this
//     server's replica. It is first sent the new epoch (a PPDUP_KEEPALIVE
//     with PKT_EPOCH, package comment "Fencing") and closed when it
//     answers, so that it learns it was deposed.
type Failover struct {
	loop.Base[cmt.Message]
	cfg     FailoverConfig
	st      Store
	replica *Replica
	ds      *DS // after the promotion
	// diskFull is the disk state for the promoted DS (diskfull.go).
	diskFull bool

	dsPeers   map[PeerID]bool // connections of the duplicate server (replica listener)
	downSince time.Time       // since when no duplicate server is connected
	refused   map[PeerID]bool // connections closed at once: their events are ignored
	// deposing: old duplicate servers sent the new epoch; their
	// connection is closed once they answer it (a close at once could
	// drop the message unsent).
	deposing map[PeerID]bool
}

// NewFailover returns a replica machine over st that can be promoted.
func NewFailover(cfg FailoverConfig, st Store) *Failover {
	if cfg.PromoteAfter <= 0 {
		cfg.PromoteAfter = DefaultPromoteAfter
	}
	f := &Failover{cfg: cfg, st: st, replica: NewReplica(cfg.Replica, st), dsPeers: map[PeerID]bool{},
		downSince: cfg.Start, refused: map[PeerID]bool{}, deposing: map[PeerID]bool{}}
	if f.replica.fence.Epoch == 0 {
		// The first primary of a failover pair has epoch 1.
		fe := Fence{Epoch: 1}
		if err := st.SetFence(fe); err != nil {
			f.Pending.Log(slog.LevelError, "dupserver: checksum store: writing the fence", "err", err)
		} else {
			f.replica.fence = fe
		}
	}
	return f
}

// Epoch returns the epoch of the store: the promoted server's after the
// promotion.
func (f *Failover) Epoch() uint64 {
	if f.ds != nil {
		return f.ds.fence.Epoch
	}
	return f.replica.fence.Epoch
}

// Promoted reports whether the replica became a duplicate server.
func (f *Failover) Promoted() bool { return f.ds != nil }

func (f *Failover) inner() loop.Machine[cmt.Message] {
	if f.ds != nil {
		return f.ds
	}
	return f.replica
}

// Step applies one event.
func (f *Failover) Step(ev loop.Event[cmt.Message]) {
	switch ev.Kind {
	case loop.Connected:
		if ev.Tag != TagReplica && !f.admit(ev) {
			f.refused[ev.Peer] = true
			if !f.deposing[ev.Peer] {
				f.Pending.CloseConn(ev.Peer, "refused")
			}
			return
		}
	case loop.Received:
		if f.refused[ev.Peer] {
			if _, ack := ev.Msg.(*cmt.PPDUPKeepaliveAck); ack && f.deposing[ev.Peer] {
				delete(f.deposing, ev.Peer)
				f.Pending.CloseConn(ev.Peer, "refused: deposed at a lower epoch")
			}
			return
		}
	case loop.Closed:
		if f.refused[ev.Peer] {
			delete(f.refused, ev.Peer)
			delete(f.deposing, ev.Peer)
			return
		}
		if f.dsPeers[ev.Peer] {
			delete(f.dsPeers, ev.Peer)
			if len(f.dsPeers) == 0 {
				f.downSince = ev.Now
				f.Pending.Log(slog.LevelWarn, "dupserver replica: duplicate server gone; node schedulers may promote this replica",
					"after", f.cfg.PromoteAfter.String())
			}
		}
	}
	m := f.inner()
	m.Step(ev)
	f.Pending.Append(m.Ready())
	m.Advance()
	if ev.Kind == loop.Connected && f.dsPeers[ev.Peer] && f.ds == nil && f.replica.fence.Epoch > 0 {
		// Tell the duplicate server that this replica can be promoted
		// (fence.go): from now on it answers only what this replica has.
		f.Pending.Send(ev.Peer, epochKeepalive(f.replica.fence.Epoch), int(cmt.PriorityNormal))
	}
}

// admit decides about a new connection and promotes the replica when a
// node scheduler fails over to it.
func (f *Failover) admit(ev loop.Event[cmt.Message]) bool {
	now := ev.Now
	if f.ds != nil {
		if ev.Tag != TagFailover {
			f.Pending.Log(slog.LevelWarn, "dupserver: promoted replica refuses a connection on the replica listener; restart the old duplicate server with --replica-mode to make it this server's replica", "peer", ev.Peer, "epoch", f.ds.fence.Epoch)
			// The old duplicate server learns the new epoch and stops
			// accepting node schedulers (fence.go).
			f.Pending.Send(ev.Peer, epochKeepalive(f.ds.fence.Epoch), int(cmt.PriorityNormal))
			f.deposing[ev.Peer] = true
			return false
		}
		return true
	}
	if ev.Tag != TagFailover {
		if f.diskFull {
			// Not counted as the duplicate server's connection: it is
			// alive, only refused until the space is back (diskfull.go).
			f.Pending.Log(slog.LevelInfo, "dupserver replica: duplicate server refused: the disk is full", "peer", ev.Peer)
			return false
		}
		f.dsPeers[ev.Peer] = true
		return true
	}
	if len(f.dsPeers) > 0 {
		f.Pending.Log(slog.LevelInfo, "dupserver replica: node scheduler on the failover listener refused: the duplicate server is connected", "peer", ev.Peer)
		return false
	}
	if f.diskFull {
		// The replica refuses its duplicate server while its disk is full
		// (diskfull.go): that server is not gone.
		f.Pending.Log(slog.LevelInfo, "dupserver replica: node scheduler on the failover listener refused: the disk is full", "peer", ev.Peer)
		return false
	}
	if gone := now.Sub(f.downSince); gone < f.cfg.PromoteAfter {
		f.Pending.Log(slog.LevelInfo, "dupserver replica: node scheduler on the failover listener refused for now: the duplicate server left only lately",
			"peer", ev.Peer, "gone", gone.Round(time.Millisecond).String(), "promote_after", f.cfg.PromoteAfter.String())
		return false
	}
	// The new epoch is on disk before the first change is accepted: a
	// restart never promotes twice with the same epoch.
	epoch := f.replica.fence.Epoch + 1
	if err := f.st.SetFence(Fence{Epoch: epoch}); err != nil {
		f.Pending.Log(slog.LevelError, "dupserver replica: promotion failed: writing the new epoch", "err", err)
		return false
	}
	f.replica.fence = Fence{Epoch: epoch}
	dsCfg := f.cfg.DS
	if dsCfg.ReplicaAddr != "" {
		dsCfg.Replica = true
		// The old duplicate server comes back as this server's replica
		// with whatever its store held (or an empty one): every mapping
		// goes to it, not only the changes made from now on.
		n := 0
		err := f.st.Mappings("", func(k Key, o Owner) error {
			n++
			return f.st.Put(k, o, true)
		})
		if err != nil {
			f.Pending.Log(slog.LevelError, "dupserver replica: promotion failed: marking the mappings for the new replica", "err", err)
			return false
		}
		f.Pending.Log(slog.LevelInfo, "dupserver replica: every mapping marked for the new replica", "mappings", n)
	}
	ds, err := NewDS(dsCfg, f.st)
	if err != nil {
		f.Pending.Log(slog.LevelError, "dupserver replica: promotion failed", "err", err)
		return false
	}
	f.ds = ds
	ds.diskFull = f.diskFull
	f.Pending.Log(slog.LevelWarn, "dupserver replica: PROMOTED to duplicate server: a node scheduler failed over to it", "peer", ev.Peer,
		"duplicate_server_gone", now.Sub(f.downSince).Round(time.Millisecond).String(), "new_replica", dsCfg.ReplicaAddr, "epoch", epoch)
	return true
}

// checkInSync logs, once per replica connection, when the replica has
// everything: no dirty key left to send and every forwarded operation
// answered (the returning duplicate server of a failover has caught up).
func (d *DS) checkInSync() {
	if !d.syncing || d.replica == 0 || d.backlog || len(d.inflight) > 0 || !d.cfgNormal {
		return
	}
	d.syncing = false
	d.Pending.Log(slog.LevelInfo, "dupserver: replica in sync", "peer", d.replica)
}
