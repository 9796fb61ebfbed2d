package diskspace

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Defaults of a Guard.
const (
	// DefaultLowMax caps the default low-water mark: 64 MiB, or 1 % of the
	// file system when that is smaller (DefaultLow).
	DefaultLowMax = 64 << 20
	// DefaultInterval is how often a Guard reads the free space.
	DefaultInterval = time.Second
)

// DefaultLow is the low-water mark of a file system of total bytes:
// DefaultLowMax or 1 % of total, whichever is smaller.
func DefaultLow(total uint64) uint64 { return min(DefaultLowMax, total/100) }

// Config configures a Guard.
type Config struct {
	// Dir is a directory on the watched file system (the role's data).
	Dir string
	// Low is the low-water mark in bytes: free space below it pauses
	// (0: DefaultLow of the file system's size).
	Low uint64
	// High is the high-water mark in bytes: a pause ends when the free
	// space is back at it (0, or below Low: twice the low-water mark).
	High uint64
	// Interval is how often the free space is read (0: DefaultInterval).
	Interval time.Duration
	// Read reads the free and total bytes (nil: Read, statfs(2)).
	Read func(dir string) (free, total uint64, err error)
	// Logger receives one line when the role pauses and one when it
	// resumes (nil: discarded).
	Logger *slog.Logger
	// Role names the role in the log lines ("nodesched", "dupserver",
	// "indexer").
	Role string
}

// Status is a Guard's state, for the status page and the metrics.
type Status struct {
	Dir    string `json:"dir"`
	Paused bool   `json:"paused"`
	Free   uint64 `json:"free_bytes"`
	Total  uint64 `json:"total_bytes"`
	Low    uint64 `json:"low_water_bytes"`
	High   uint64 `json:"high_water_bytes"`
	// Pauses counts the pauses since the guard was made.
	Pauses int64 `json:"pauses"`
	// Known is false until the free space was read once.
	Known bool `json:"known"`
}

// Guard pauses a role's writes while the free space of its data
// directory's file system is low. Check reads the free space (at most
// once per Interval) and reports whether the role is paused: it pauses
// when the free space falls below the low-water mark and resumes when it
// is back at the high-water mark. A Guard is safe for concurrent use; a
// nil *Guard is never paused.
type Guard struct {
	cfg    Config
	mu     sync.Mutex
	next   time.Time
	st     Status
	warned bool
}

// NewGuard returns a guard of cfg.Dir. It reads nothing yet.
func NewGuard(cfg Config) *Guard {
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	if cfg.Read == nil {
		cfg.Read = Read
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Role == "" {
		cfg.Role = "diskspace"
	}
	return &Guard{cfg: cfg, st: Status{Dir: cfg.Dir}}
}

// Interval is how often the guard reads the free space (0 for nil).
func (g *Guard) Interval() time.Duration {
	if g == nil {
		return 0
	}
	return g.cfg.Interval
}

// Check reads the free space when it is due at now and reports whether
// the role is paused.
func (g *Guard) Check(now time.Time) bool {
	if g == nil {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.next.IsZero() && now.Before(g.next) {
		return g.st.Paused
	}
	g.next = now.Add(g.cfg.Interval)
	free, total, err := g.cfg.Read(g.cfg.Dir)
	if err != nil || total == 0 {
		if !g.warned {
			g.warned = true
			g.cfg.Logger.Warn(g.cfg.Role+": cannot read the free disk space; no pause on a full disk", "dir", g.cfg.Dir, "err", err)
		}
		return g.st.Paused
	}
	low, high := g.marks(total)
	g.st.Free, g.st.Total, g.st.Low, g.st.High, g.st.Known = free, total, low, high, true
	switch {
	case !g.st.Paused && free < low:
		g.st.Paused = true
		g.st.Pauses++
		g.cfg.Logger.Warn(g.cfg.Role+": disk full: paused (writes held until the free space is back at the high-water mark)",
			"dir", g.cfg.Dir, "free_bytes", free, "low_water_bytes", low, "high_water_bytes", high)
	case g.st.Paused && free >= high:
		g.st.Paused = false
		g.cfg.Logger.Info(g.cfg.Role+": disk space back: resumed", "dir", g.cfg.Dir, "free_bytes", free, "high_water_bytes", high)
	}
	return g.st.Paused
}

// marks are the low- and high-water marks of a file system of total
// bytes.
func (g *Guard) marks(total uint64) (low, high uint64) {
	low = g.cfg.Low
	if low == 0 {
		low = DefaultLow(total)
	}
	high = g.cfg.High
	if high < low {
		high = 2 * low
	}
	return low, high
}

// Paused reports whether the role is paused, as of the last Check.
func (g *Guard) Paused() bool {
	if g == nil {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.st.Paused
}

// Status returns the guard's state as of the last Check.
func (g *Guard) Status() Status {
	if g == nil {
		return Status{}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.st
}

// Watch reads the guard every Interval until ctx ends and calls changed
// each time the pause starts (full true) or ends (full false). It returns
// when ctx ends or changed returns an error (the role's loop has stopped).
func (g *Guard) Watch(ctx context.Context, changed func(full bool) error) {
	full := false
	t := time.NewTicker(g.Interval())
	defer t.Stop()
	for {
		if g.Check(time.Now()) != full {
			full = !full
			if err := changed(full); err != nil {
				return
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Wait returns once the role is not paused (at once if it is not),
// checking every Interval, or ctx's error when ctx ends first.
func (g *Guard) Wait(ctx context.Context) error {
	for g.Check(time.Now()) {
		t := time.NewTimer(g.cfg.Interval)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
	return nil
}
