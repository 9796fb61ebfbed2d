package nodesched

import (
	"time"

	"github.com/trawl/trawl/internal/diskspace"
)

// The full-disk pause (Config.Disk, docs/decisions/diskspace.md) is the
// hard floor under limits/disk_free: limits/disk_free (limits.go) is the
// spec's softer mode change, in percent, where already stored URIs are
// still fetched again; below the guard's low-water mark no fetch starts
// at all, in any collection. The fetches in flight finish and are
// committed (the margin under the mark is theirs), so nothing fetched is
// lost, and the URIs served meanwhile stay in the crawl queues. The
// machine still handles its messages (URIs from the multinode scheduler
// go into the queues: small writes), and the guard reads the free space
// every Interval until it is back at the high-water mark; then the
// fetches start again by themselves. The guard logs one line each way;
// the status page and /metrics read DiskStatus.

// diskPaused reports whether the full-disk guard holds the fetches at now;
// while it does, the loop wakes again when the guard reads next.
func (r *runner) diskPaused(now time.Time, wake *time.Time) bool {
	g := r.d.cfg.Disk
	if !g.Check(now) {
		return false
	}
	if next := now.Add(g.Interval()); next.Before(*wake) {
		*wake = next
	}
	return true
}

// DiskStatus is the full-disk guard's state (zero without Config.Disk).
func (d *Driver) DiskStatus() diskspace.Status { return d.cfg.Disk.Status() }

// Disk is the full-disk guard (Config.Disk, nil without one).
func (d *Driver) Disk() *diskspace.Guard { return d.cfg.Disk }
