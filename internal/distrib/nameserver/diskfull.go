package nameserver

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/trawl/trawl/internal/diskspace"
)

// The full-disk pause (ServerConfig.Disk, docs/decisions/diskspace.md).
// While the free space of the store's file system is below the guard's
// low-water mark, the machine appends nothing to bindings.log: binds and
// unbinds still change the bindings in memory and are answered, and their
// records wait, the last one of each key only (a later bind or unbind of
// the same name replaces an earlier one), so they are bounded by the
// bindings. When the space is back they are written, in the order their
// keys first changed. A name server that stops meanwhile loses only those
// records, and the objects bind themselves again every few seconds.

// diskHold is the machine's full-disk state.
type diskHold struct {
	full  bool
	held  map[string]Record
	order []string
}

// persist appends r to the batch's records, or holds it while the disk is
// full.
func (m *Machine) persist(r Record) {
	if !m.disk.full {
		m.Pending.Persist = append(m.Pending.Persist, r)
		return
	}
	k := r.AOR.Key()
	if _, ok := m.disk.held[k]; !ok {
		m.disk.order = append(m.disk.order, k)
	}
	m.disk.held[k] = r
}

// SetDiskFull tells the machine whether the disk is full. When it is no
// longer, the held records go into the batch.
func (m *Machine) SetDiskFull(full bool) {
	if full == m.disk.full {
		return
	}
	m.disk.full = full
	if full {
		m.disk.held = map[string]Record{}
		return
	}
	for _, k := range m.disk.order {
		m.Pending.Persist = append(m.Pending.Persist, m.disk.held[k])
	}
	if n := len(m.disk.order); n > 0 {
		m.Pending.Log(slog.LevelInfo, "nameserver: binding changes held while the disk was full written", "records", n)
	}
	m.disk.held, m.disk.order = nil, nil
}

// Held is the number of records held while the disk is full.
func (m *Machine) Held() int { return len(m.disk.order) }

// watchDisk tells the machine when the disk state changes, until ctx ends.
func (s *Server) watchDisk(ctx context.Context, wg *sync.WaitGroup) {
	defer wg.Done()
	s.cfg.Disk.Watch(ctx, func(full bool) error {
		return s.drv.Do(ctx, func(time.Time) { s.m.SetDiskFull(full) })
	})
}

// DiskStatus is the full-disk guard's state (zero without Disk).
func (s *Server) DiskStatus() diskspace.Status { return s.cfg.Disk.Status() }
