package dupserver

import (
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/trawl/trawl/internal/cmt"
)

// The duplicate server's side of its replica link (3.3.5, 3.4): answers in
// order, failures, the barrier and the resynchronisation of dirty keys.

// barrier sends a keep-alive to the replica. The link is in order, so its
// answer proves that the replica processed everything sent before it.
func (d *DS) barrier() {
	if len(d.kaSeqs) >= maxKASeqs {
		d.failReplica("too many unanswered keep-alives", true, time.Time{})
		return
	}
	d.replicaKA++
	d.kaSeqs = append(d.kaSeqs, d.toReplica(epochKeepalive(d.fence.Epoch)))
}

// confirm records that the replica processed every message up to seq.
func (d *DS) confirm(seq uint64) {
	if seq <= d.confirmed {
		return
	}
	d.confirmed = seq
	for n, s := range d.tombs {
		if s != 0 && s <= seq {
			if err := d.st.DeleteTombstone(n); err != nil {
				d.Pending.Log(slog.LevelError, "dupserver: checksum store", "err", err)
				continue
			}
			delete(d.tombs, n)
		}
	}
}

func (d *DS) markBacklog() {
	if d.cfg.Replica {
		d.backlog, d.rescan = true, true
	}
}

// ---- messages from the replica ----

func (d *DS) fromReplica(m cmt.Message, now time.Time) {
	switch m := m.(type) {
	case *cmt.PPDUPAddOK:
		d.ack(opAdd, Key{m.Collection, m.Checksum}, now)
	case *cmt.PPDUPRemoveOK:
		d.ack(opRemove, Key{m.Collection, m.Checksum}, now)
	case *cmt.PPDUPConfigAck:
		// 3.3.5.8 and product note <1>: only the answer to the latest
		// SET_CONFIG counts; a stale one is ignored.
		if !d.vclock.Acked(m.VClock) {
			d.Pending.Log(slog.LevelDebug, "dupserver: stale PPDUP_CONFIG_ACK from the replica ignored", "vc", m.VClock, "current", d.vclock.Current())
			return
		}
		if len(d.cfgPending) == 0 {
			d.cfgNormal = true
		}
	case *cmt.PPDUPKeepalive:
		d.send(d.replica, &cmt.PPDUPKeepaliveAck{}, cmt.PriorityNormal)
		d.replicaEpoch(uint64(m.Epoch), now)
	case *cmt.PPDUPKeepaliveAck:
		if d.replicaKA > 0 {
			d.replicaKA--
		}
		if len(d.kaSeqs) > 0 {
			s := d.kaSeqs[0]
			d.kaSeqs = d.kaSeqs[1:]
			d.confirm(s)
		}
	case *cmt.PPDUPError:
		d.failReplica(fmt.Sprintf("replica reported an error on %q: %s", m.Collection, m.Why), true, now)
	default:
		d.Pending.Log(slog.LevelWarn, "dupserver: unexpected message from the replica ignored", "cmd", m.Code())
	}
}

// ack completes the operation on k that the replica answered. The replica
// answers in the order it was sent the operations (the link is in order and
// it processes messages one by one), so the answer must be for the oldest
// operation sent; anything else means the replica is not in step, and it is
// given up and resynchronised.
func (d *DS) ack(kind opKind, k Key, now time.Time) {
	if len(d.sentOps) == 0 {
		d.Pending.Log(slog.LevelDebug, "dupserver: replica answer without a pending operation ignored", "key", k, "kind", kind)
		return
	}
	o := d.sentOps[0]
	if o.key != k || o.kind != kind {
		d.failReplica(fmt.Sprintf("answer %s %s out of order (expected %s %s)", kind, k, o.kind, o.key), true, now)
		return
	}
	d.sentOps[0] = nil
	d.sentOps = d.sentOps[1:]
	d.confirm(o.seq)
	if o.cancelled {
		return
	}
	delete(d.inflight, k)
	if err := d.st.ClearDirty(k); err != nil {
		d.Pending.Log(slog.LevelError, "dupserver: checksum store", "err", err)
		d.markBacklog()
	}
	d.answer(o)
	d.release(k, now)
	d.pump(now)
}

// failReplica gives the replica up: every operation waiting for it is
// answered from the duplicate server's store, the held messages are
// processed without it, and its dirty keys wait for the next connection.
func (d *DS) failReplica(reason string, closeIt bool, now time.Time) {
	if d.replica == 0 {
		return
	}
	if !d.syncOnly() {
		d.Pending.Log(slog.LevelWarn, "dupserver: replica lost; answering from the local store until it is back", "peer", d.replica,
			"reason", reason, "pending", len(d.inflight), "held", d.nheld)
	}
	if closeIt {
		d.Pending.CloseConn(d.replica, "replica lost: "+reason)
	}
	d.replica, d.replicaKA, d.kaSeqs, d.sentOps, d.cfgNormal = 0, 0, nil, nil, false
	if d.syncOnly() {
		// Fenced pair: nothing is answered without the replica; the node
		// schedulers send their operations again on their next link.
		d.Pending.Log(slog.LevelWarn, "dupserver: replica lost; fenced pair: node schedulers are refused until it is back, their unanswered operations dropped",
			"reason", reason, "dropped_pending", len(d.inflight), "dropped_held", d.nheld)
		d.dropAllNS("fenced: replica lost")
		d.markBacklog()
		return
	}
	ops := make([]*op, 0, len(d.inflight))
	for _, o := range d.inflight {
		ops = append(ops, o)
	}
	slices.SortFunc(ops, func(a, b *op) int {
		switch {
		case a.seq < b.seq:
			return -1
		case a.seq > b.seq:
			return 1
		}
		return 0
	})
	d.inflight = map[Key]*op{}
	for _, o := range ops {
		d.answer(o)
	}
	keys := make([]Key, 0, len(d.held))
	for k := range d.held {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, Key.compare)
	for _, k := range keys {
		d.release(k, now)
	}
	d.markBacklog()
}

// pump sends the replica dirty keys (changes it has not acknowledged) while
// fewer than half the window is in use.
func (d *DS) pump(now time.Time) {
	if d.replica == 0 || !d.backlog {
		return
	}
	limit := max(d.cfg.Window/2, 1)
	for len(d.inflight) < limit {
		keys, err := d.st.DirtyKeys(d.cursor, resyncBatch)
		if err != nil {
			d.Pending.Log(slog.LevelError, "dupserver: checksum store", "err", err)
			return
		}
		for _, k := range keys {
			d.cursor = k
			if d.inflight[k] != nil || len(d.held[k]) > 0 {
				continue // the pending operation carries the latest state
			}
			o, ok, err := d.st.Get(k)
			if err != nil {
				d.Pending.Log(slog.LevelError, "dupserver: checksum store", "err", err)
				continue
			}
			if ok {
				d.forward(&op{kind: opAdd, key: k, owner: o}, &cmt.PPDUPAdd{Collection: k.Collection, NodeID: o.NodeID, URI: o.URI,
					Checksum: k.Checksum, PPDUPID: d.cfg.NodeID, DBName: d.dbName(k.Collection)}, now)
			} else {
				d.forward(&op{kind: opRemove, key: k}, &cmt.PPDUPRemove{Collection: k.Collection, NodeID: d.cfg.NodeID,
					Checksum: k.Checksum, PPDUPID: d.cfg.NodeID, DBName: d.dbName(k.Collection)}, now)
			}
			if len(d.inflight) >= limit {
				return
			}
		}
		if len(keys) < resyncBatch {
			d.cursor = Key{}
			if !d.rescan {
				d.backlog = false
				return
			}
			d.rescan = false
		}
	}
}
