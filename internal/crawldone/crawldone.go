// Package crawldone decides when a one-shot crawl (trawl run --once) is
// complete, without waiting for a quiet period.
//
// The roles of a one-process crawl (multinode scheduler, duplicate server,
// node scheduler) each run on a loop.Driver, and every connection of those
// drivers links two of them. The crawl is complete when no queue holds
// work (Idle: the node scheduler's frontiers, screening and feeding outbox,
// the multinode scheduler's queues) and nothing is in flight: no message
// sent and not yet handled by its receiver (a URI on its way to the
// multinode scheduler, a checksum operation at the duplicate server, an
// answer on its way back), no job running (a fetch, a DNS lookup), nothing
// held for a full connection. Check reads the drivers' counters, then Idle,
// then the counters again: when both snapshots are equal, no counter moved
// in between, so at the moment Idle was read every message sent had been
// handled and every job had ended (loop.Quiet).
//
// A message lost with its connection leaves the sums unbalanced for good;
// for that case only, a crawl idle (Idle true) for Settle in a row counts
// as complete too (Fallback reports it).
package crawldone

import (
	"context"
	"time"

	"github.com/trawl/trawl/internal/loop"
)

// Checker tells when the crawl is complete. Check is called from one
// goroutine.
type Checker struct {
	// Loops return the counters of every driver of the crawl; false
	// (not started yet) means not complete.
	Loops []func() (loop.Stats, bool)
	// Idle reports whether no queue holds work.
	Idle func(ctx context.Context) bool
	// Settle is the fallback: how long Idle must hold in a row while the
	// counters do not balance (0: no fallback).
	Settle time.Duration

	idleSince time.Time
	fallback  bool
}

// Check reports whether the crawl is complete at now.
func (c *Checker) Check(ctx context.Context, now time.Time) bool {
	before, ok := c.snapshot()
	if !ok {
		return false
	}
	if !c.Idle(ctx) {
		c.idleSince = time.Time{}
		return false
	}
	after, ok := c.snapshot()
	if ok && loop.Quiet(before, after) {
		return true
	}
	if c.idleSince.IsZero() {
		c.idleSince = now
		return false
	}
	if c.Settle > 0 && now.Sub(c.idleSince) >= c.Settle {
		c.fallback = true
		return true
	}
	return false
}

// Fallback reports whether Check found the crawl complete by the fallback
// (idle for Settle with the counters unbalanced) rather than exactly.
func (c *Checker) Fallback() bool { return c.fallback }

func (c *Checker) snapshot() ([]loop.Stats, bool) {
	out := make([]loop.Stats, len(c.Loops))
	for i, f := range c.Loops {
		s, ok := f()
		if !ok {
			return nil, false
		}
		out[i] = s
	}
	return out, true
}
