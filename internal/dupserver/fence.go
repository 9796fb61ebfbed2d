package dupserver

import (
	"log/slog"
	"slices"
	"time"

	"github.com/trawl/trawl/internal/cmt"
)

// Fencing of a duplicate server pair whose replica can be promoted (package
// comment, "Fencing").

// syncOnly reports that the duplicate server answers no change its replica
// has not acknowledged: its replica can be promoted, or it was deposed.
func (d *DS) syncOnly() bool { return d.fence.PromotablePeer || d.fence.Deposed }

// refuseNS reports that node schedulers are refused: the server was
// deposed, or it answers only with its replica and has none.
func (d *DS) refuseNS() bool { return d.fence.Deposed || (d.fence.PromotablePeer && d.replica == 0) }

// Fence returns the machine's fencing record.
func (d *DS) Fence() Fence { return d.fence }

// dropNS closes the connection of node scheduler p without answering what
// it sent: its unanswered operations go again on its next link (to this
// server or, failing over, to the replica).
func (d *DS) dropNS(p PeerID, reason string) {
	if d.peers[p] == nil {
		return
	}
	delete(d.peers, p)
	d.Pending.CloseConn(p, reason)
}

// dropAllNS closes every node scheduler connection and forgets what waits
// for the replica without answering it. The changes stay in the store with
// their dirty marks.
func (d *DS) dropAllNS(reason string) {
	ids := make([]PeerID, 0, len(d.peers))
	for id := range d.peers {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		d.dropNS(id, reason)
	}
	for k, o := range d.inflight {
		o.origin = 0
		delete(d.inflight, k)
	}
	d.held, d.nheld = map[Key][]held{}, 0
}

// replicaEpoch applies the PKT_EPOCH of a keep-alive from the replica
// link. A replica that can be promoted sends its epoch when its duplicate
// server connects: from then on the duplicate server answers only what the
// replica acknowledged. A promoted replica answers the old duplicate
// server's connection with its higher epoch: the old one is deposed.
func (d *DS) replicaEpoch(e uint64, now time.Time) {
	if e == 0 {
		return
	}
	f := d.fence
	switch {
	case f.Deposed:
		return
	case f.PromotablePeer && e > f.Epoch:
		f.Deposed, f.Epoch = true, e
		if err := d.st.SetFence(f); err != nil {
			// Not persisted: still deposed for the life of the process.
			d.Pending.Log(slog.LevelError, "dupserver: checksum store: writing the fence", "err", err)
		}
		d.fence = f
		d.link.Addr = "" // no more dials: the replica listener is the new primary's
		d.Pending.Log(slog.LevelError, "dupserver: DEPOSED: the replica was promoted at a higher epoch; node schedulers are refused "+
			"until this server is restarted with --replica-mode as the new duplicate server's replica", "epoch", e)
		d.failReplica("deposed", true, now)
		d.dropAllNS("deposed: the replica was promoted")
	case !f.PromotablePeer || e > f.Epoch:
		f.PromotablePeer, f.Epoch = true, max(f.Epoch, e)
		if err := d.st.SetFence(f); err != nil {
			d.Pending.Log(slog.LevelError, "dupserver: checksum store: writing the fence", "err", err)
			d.failReplica("fence not written", true, now)
			return
		}
		d.fence = f
		d.Pending.Log(slog.LevelInfo, "dupserver: the replica can be promoted: changes are answered only once it has them", "epoch", f.Epoch)
	}
}

// epochKeepalive is the keep-alive that carries the machine's epoch (a plain
// one outside a failover pair).
func epochKeepalive(e uint64) *cmt.PPDUPKeepalive {
	return &cmt.PPDUPKeepalive{Epoch: int64(min(e, 1<<62))}
}

// adoptEpoch is the replica's side: a duplicate server that connects with
// a higher epoch than the store's is the primary of a newer term. When the
// store was a duplicate server's (a deposed or killed primary now restarted
// as a replica), its dirty mappings are changes its own replica never
// acknowledged; in a fenced pair none of them was answered, their node
// schedulers send them again to the new primary, so they are removed here
// and the new primary's resynchronisation brings every mapping it has.
func (r *Replica) adoptEpoch(e uint64) {
	if e <= r.fence.Epoch {
		return
	}
	n := 0
	for {
		keys, err := r.st.DirtyKeys(Key{}, resyncBatch)
		if err == nil {
			for _, k := range keys {
				if err = r.st.Delete(k, false); err == nil {
					err = r.st.ClearDirty(k)
				}
				if err != nil {
					break
				}
				n++
			}
		}
		if err != nil {
			r.Pending.Log(slog.LevelError, "dupserver: replica: dropping the unacknowledged changes of a deposed primary", "err", err)
			return
		}
		if len(keys) < resyncBatch {
			break
		}
	}
	f := Fence{Epoch: e}
	if err := r.st.SetFence(f); err != nil {
		r.Pending.Log(slog.LevelError, "dupserver: checksum store: writing the fence", "err", err)
		return
	}
	r.fence = f
	r.Pending.Log(slog.LevelInfo, "dupserver: replica follows a duplicate server of a newer epoch", "epoch", e, "dropped_unacknowledged", n)
}
