package dupserver

import (
	"context"
	"log/slog"
	"path/filepath"
	"time"
)

// failoverState is a replica's view of its duplicate server, for the
// promotion of the replica when node schedulers fail over to it
// (docs/decisions/dupserver.md).
type failoverState struct {
	promoted  bool
	dsPeers   map[PeerID]bool // connections of the duplicate server (replica listener)
	downSince time.Time       // since when no duplicate server is connected
	refused   map[PeerID]bool // connections closed at once: ignore their events
}

func (s *Server) promoteAfter() time.Duration {
	if s.PromoteAfter > 0 {
		return s.PromoteAfter
	}
	return DefaultPromoteAfter
}

// admit decides about a new connection of a replica with a failover
// listener, and returns the machine to run from now on (the replica's, or
// after a promotion a duplicate server's over the same store).
//
//   - Before the promotion: a connection on the replica listener is the
//     duplicate server; one on the failover listener is a node scheduler,
//     admitted (promoting the replica) only when no duplicate server has
//     been connected for PromoteAfter, refused otherwise.
//   - After it: node schedulers are admitted on either listener... except
//     that a connection on the replica listener that is not this server's
//     own replica link is the old duplicate server coming back as one: it
//     is refused, since it must come back as this server's replica.
func (s *Server) admit(ctx context.Context, fo *failoverState, e event, m machine, st Store, nodeID string, log *slog.Logger) (machine, bool) {
	now := s.now()
	if fo.promoted {
		if !e.failover && !e.replica {
			log.Warn("dupserver: promoted replica refuses a connection on the replica listener; restart the old duplicate server with --replica-mode to make it this server's replica", "peer", e.peer)
			return m, false
		}
		return m, true
	}
	if !e.failover {
		fo.dsPeers[e.peer] = true
		return m, true
	}
	if len(fo.dsPeers) > 0 {
		log.Info("dupserver replica: node scheduler on the failover listener refused: the duplicate server is connected", "peer", e.peer)
		return m, false
	}
	if gone := now.Sub(fo.downSince); gone < s.promoteAfter() {
		log.Info("dupserver replica: node scheduler on the failover listener refused for now: the duplicate server left only lately",
			"peer", e.peer, "gone", gone.Round(time.Millisecond).String(), "promote_after", s.promoteAfter().String())
		return m, false
	}
	dbDir := s.Data
	if dbDir != "" {
		if abs, err := filepath.Abs(dbDir); err == nil {
			dbDir = abs
		}
	}
	if s.FailoverReplica != "" {
		// The old duplicate server comes back as this server's replica
		// with whatever its store held (or an empty one): every mapping
		// goes to it, not only the changes made from now on.
		n := 0
		err := st.Mappings("", func(k Key, o Owner) error {
			n++
			return st.Put(k, o, true)
		})
		if err != nil {
			log.Error("dupserver replica: promotion failed: marking the mappings for the new replica", "err", err)
			return m, false
		}
		log.Info("dupserver replica: every mapping marked for the new replica", "mappings", n)
	}
	ds, err := NewDS(DSConfig{NodeID: nodeID, DBDir: dbDir, Replica: s.FailoverReplica != "", KeepAlive: s.KeepAlive,
		ReplicaTimeout: s.ReplicaTimeout, Logger: log}, st)
	if err != nil {
		log.Error("dupserver replica: promotion failed", "err", err)
		return m, false
	}
	fo.promoted = true
	log.Warn("dupserver replica: PROMOTED to duplicate server: a node scheduler failed over to it", "peer", e.peer,
		"duplicate_server_gone", now.Sub(fo.downSince).Round(time.Millisecond).String(), "new_replica", s.FailoverReplica)
	if s.FailoverReplica != "" && s.goAdd() {
		go func() {
			defer s.wg.Done()
			s.dialReplicaAt(ctx, s.FailoverReplica)
		}()
	}
	return dsMachine{ds}, true
}

// checkInSync logs, once per replica connection, when the replica has
// everything: no dirty key left to send and every forwarded operation
// answered (the returning duplicate server of a failover has caught up).
func (d *DS) checkInSync() {
	if !d.syncing || d.replica == 0 || d.backlog || len(d.inflight) > 0 || !d.cfgNormal {
		return
	}
	d.syncing = false
	d.log.Info("dupserver: replica in sync", "peer", d.replica)
}
