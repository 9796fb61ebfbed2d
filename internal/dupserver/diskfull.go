package dupserver

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/diskspace"
)

// The full-disk pause (Server.Disk, docs/decisions/diskspace.md). Pebble
// exits the process when a write of its log fails (package diskspace), so
// the duplicate server writes nothing while the free space of its data
// directory is below the guard's low-water mark. The Server reads the
// guard and tells the machine (SetDiskFull, on the loop). While the disk
// is full, the DS holds every message of the node schedulers that may
// write the checksum store (PPDUP_ADD, PPDUP_REMOVE, PPDUP_SET_CONFIG,
// PPDUP_CONF_REMOVE(2)) in arrival order, unanswered, and still answers
// their keep-alives, so their links stay up. When the space is back it
// processes them in that order; a held message whose connection closed
// meanwhile is dropped, as the node scheduler sends every unanswered
// checksum operation again on its next link (nodesched reliable.go,
// dsops.go). Past DSConfig.MaxQueued held messages, the sender's link is
// closed instead: its operations are sent again on the next link, so
// nothing is lost, only sent twice.

// diskHold holds m from p while the disk is full and reports whether it
// did.
func (d *DS) diskHold(p PeerID, m cmt.Message) bool {
	if !d.diskFull {
		return false
	}
	switch m.(type) {
	case *cmt.PPDUPKeepalive, *cmt.PPDUPKeepaliveAck:
		return false
	}
	if len(d.diskHeld) >= d.cfg.MaxQueued {
		d.dropNS(p, "disk full: the held messages fill the queue")
		return true
	}
	d.diskHeld = append(d.diskHeld, held{from: p, msg: m})
	return true
}

// SetDiskFull tells the machine whether the disk is full. When it is no
// longer, the held messages are processed in their order.
func (d *DS) SetDiskFull(full bool, now time.Time) {
	if full == d.diskFull {
		return
	}
	d.diskFull = full
	if full {
		return
	}
	q := d.diskHeld
	d.diskHeld = nil
	for _, h := range q {
		if peer := d.peers[h.from]; peer != nil {
			d.fromNS(h.from, peer, h.msg, now)
		}
	}
	if len(q) > 0 {
		d.Pending.Log(slog.LevelInfo, "dupserver: messages held while the disk was full processed", "messages", len(q))
	}
}

// SetDiskFull tells the replica whether the disk is full. While it is,
// the replica refuses its duplicate server: the connections are closed,
// and every new one at once. It holds nothing (the duplicate server's
// changes wait in the duplicate server's store, marked for the replica),
// and answers nothing it did not write.
func (r *Replica) SetDiskFull(full bool, now time.Time) {
	if full == r.diskFull {
		return
	}
	r.diskFull = full
	if !full {
		r.Pending.Log(slog.LevelInfo, "dupserver replica: the duplicate server may connect again to resynchronise")
		return
	}
	ids := make([]PeerID, 0, len(r.peers))
	for id := range r.peers {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		delete(r.peers, id)
		r.Pending.CloseConn(id, "disk full")
	}
	r.Pending.Log(slog.LevelWarn, "dupserver replica: duplicate server refused while the disk is full; it answers from its own store and resynchronises this replica later",
		"closed", len(ids))
}

// SetDiskFull passes the disk state on to the replica, or after the
// promotion to the duplicate server. While the disk is full the replica is
// not promoted: its duplicate server is refused, not gone, and
// PromoteAfter counts again from the resume.
func (f *Failover) SetDiskFull(full bool, now time.Time) {
	f.diskFull = full
	if f.ds != nil {
		f.ds.SetDiskFull(full, now)
		return
	}
	f.replica.SetDiskFull(full, now)
	f.Pending.Append(f.replica.Ready())
	f.replica.Advance()
	if full {
		for p := range f.dsPeers {
			delete(f.dsPeers, p)
			f.refused[p] = true // its Closed event is not a departure
		}
	} else if len(f.dsPeers) == 0 {
		f.downSince = now
	}
}

// diskSetter is a machine that holds its writes on a full disk.
type diskSetter interface {
	SetDiskFull(full bool, now time.Time)
}

// watchDisk tells the machine m when the disk state changes, until ctx
// ends; wg is done when it returns.
func (s *Server) watchDisk(ctx context.Context, wg *sync.WaitGroup, m diskSetter) {
	defer wg.Done()
	s.Disk.Watch(ctx, func(full bool) error {
		return s.drv.Do(ctx, func(now time.Time) { m.SetDiskFull(full, now) })
	})
}

// DiskStatus is the full-disk guard's state (zero without Disk).
func (s *Server) DiskStatus() diskspace.Status { return s.Disk.Status() }
