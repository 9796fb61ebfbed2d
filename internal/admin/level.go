package admin

import (
	"fmt"
	"io"
	"log/slog"
	"sync"
)

// Level is a process's log level: the MS-FSCADM bitmask of
// GetLogLevel/SetLogLevel (2.2.3.5) mapped onto an slog.LevelVar, which
// the process's logger reads.
type Level struct {
	mu   sync.Mutex
	mask int
	v    *slog.LevelVar
}

// NewLevel returns the level l: the mask holds l and every level above it
// (debug adds info, warning, error and critical).
func NewLevel(l slog.Level) *Level {
	a := &Level{v: new(slog.LevelVar)}
	a.v.Set(l)
	switch {
	case l <= slog.LevelDebug:
		a.mask = LogDebug | LogInfo | LogWarning | LogError | LogCritical
	case l <= slog.LevelInfo:
		a.mask = LogInfo | LogWarning | LogError | LogCritical
	case l <= slog.LevelWarn:
		a.mask = LogWarning | LogError | LogCritical
	default:
		a.mask = LogError | LogCritical
	}
	return a
}

// Leveler is what the process's slog handler reads its level from.
func (a *Level) Leveler() slog.Leveler { return a.v }

// Mask returns the bitmask.
func (a *Level) Mask() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.mask
}

// SetMask sets the bitmask; the slog level becomes the most verbose level
// it asks for (verbose counts as debug).
func (a *Level) SetMask(m int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.mask = m
	switch {
	case m&(LogDebug|LogVerbose) != 0:
		a.v.Set(slog.LevelDebug)
	case m&LogInfo != 0:
		a.v.Set(slog.LevelInfo)
	case m&LogWarning != 0:
		a.v.Set(slog.LevelWarn)
	default:
		a.v.Set(slog.LevelError)
	}
}

// NewLogger returns a text logger on w at the named level (debug, info,
// warn or error) with the Level the admin API changes.
func NewLogger(w io.Writer, level string) (*slog.Logger, *Level, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(level)); err != nil {
		return nil, nil, fmt.Errorf("bad --log-level %q (want debug, info, warn or error)", level)
	}
	al := NewLevel(lvl)
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: al.v})), al, nil
}
