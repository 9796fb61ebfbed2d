package multinode

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/diskspace"
	"github.com/trawl/trawl/internal/loop"
)

// The full-disk pause (Server.Disk, docs/decisions/diskspace.md). The
// routing database is a Pebble store, and Pebble ends the process when a
// write of its log fails (package diskspace), so the multinode scheduler
// stops what writes while the free space of its data directory is below
// the guard's low-water mark. The Server reads the guard and tells the
// machine (SetDiskFull, on the loop). While the disk is full the machine
// holds, in arrival order, the events that may write: the node
// schedulers' CMD_UM_URI(_URG) (a new site is routed and its route
// persisted), CMD_UM_STAT (statistics), CMD_UM_LOG (log files),
// CMD_UM_ADD_ROUTE_REPLY (routes), and the answers of name lookups (they
// route the URIs that waited for them). Everything else goes on: keep-
// alives are answered, so the links stay up; DNS requests are answered;
// crawl-IP grants are given. When the space is back the held events are
// applied in order. A held message whose connection closed meanwhile is
// dropped: a node scheduler sends the URIs of the last ten minutes again
// on its next link (nodesched reliable.go) and its statistics every
// period. Past maxDiskHeld held events, the link of the node scheduler
// that sends one more is closed, for the same resend. The administrative
// operations (a state change, a collection removal) and a node timeout's
// rerouting still write: rare, small records inside the margin.

// maxDiskHeld bounds the events held while the disk is full.
const maxDiskHeld = 1 << 16

// diskHold is the machine's full-disk state.
type diskHold struct {
	full bool
	held []loop.Event[cmt.Message]
	max  int // maxDiskHeld if 0
}

// holdOnDisk holds ev while the disk is full and reports whether it did.
func (m *MNS) holdOnDisk(ev loop.Event[cmt.Message]) bool {
	if !m.disk.full {
		return false
	}
	switch ev.Kind {
	case loop.Result:
		if _, ok := m.jobs[ev.Job]; !ok {
			return false
		}
	case loop.Received:
		c := m.conns[ev.Peer]
		if c == nil || c.closing || c.nodeID == "" {
			return false
		}
		switch ev.Msg.(type) {
		case *cmt.UMURI, *cmt.UMURIUrg, *cmt.UMStat, *cmt.UMLog, *cmt.UMAddRouteReply:
		default:
			return false
		}
		limit := m.disk.max
		if limit <= 0 {
			limit = maxDiskHeld
		}
		if len(m.disk.held) >= limit {
			m.logf(slog.LevelWarn, "multinode: disk full: the held messages fill the queue; closing the node scheduler's link (it sends its URIs again on the next one)",
				"node", c.nodeID, "held", len(m.disk.held))
			m.closeConn(c, "disk full: the held messages fill the queue")
			m.emit(m.flush(), ev.Now)
			return true
		}
	default:
		return false
	}
	m.disk.held = append(m.disk.held, ev)
	return true
}

// SetDiskFull tells the machine whether the disk is full. When it is no
// longer, the held events are applied in their order.
func (m *MNS) SetDiskFull(full bool, now time.Time) {
	if full == m.disk.full {
		return
	}
	m.disk.full = full
	if full {
		return
	}
	q := m.disk.held
	m.disk.held = nil
	n := 0
	for _, ev := range q {
		if ev.Kind == loop.Received {
			if c := m.conns[ev.Peer]; c == nil || c.closing {
				continue
			}
		}
		ev.Now = now
		m.Step(ev)
		n++
	}
	if len(q) > 0 {
		m.logf(slog.LevelInfo, "multinode: events held while the disk was full applied", "applied", n, "dropped", len(q)-n)
		m.emit(m.flush(), now)
	}
}

// DiskHeld is the number of events held while the disk is full.
func (m *MNS) DiskHeld() int { return len(m.disk.held) }

// startDiskWatch starts watchDisk when the server has a guard and returns
// the function that stops it and waits for it.
func (s *Server) startDiskWatch(ctx context.Context, m *MNS) (stop func()) {
	if s.Disk == nil {
		return func() {}
	}
	var wg sync.WaitGroup
	wctx, cancel := context.WithCancel(ctx)
	wg.Add(1)
	go s.watchDisk(wctx, &wg, m)
	return func() { cancel(); wg.Wait() }
}

// watchDisk tells the machine when the disk state changes, until ctx ends.
func (s *Server) watchDisk(ctx context.Context, wg *sync.WaitGroup, m *MNS) {
	defer wg.Done()
	s.Disk.Watch(ctx, func(full bool) error {
		return s.drv.Do(ctx, func(now time.Time) { m.SetDiskFull(full, now) })
	})
}

// DiskStatus is the full-disk guard's state (zero without Disk).
func (s *Server) DiskStatus() diskspace.Status { return s.Disk.Status() }
