package dupserver

import (
	"log/slog"
	"strings"

	"github.com/trawl/trawl/internal/testenv"
)

// logBuffer collects log records for assertions; safe for concurrent use.
type logBuffer struct{ testenv.Buffer }

func (l *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(&l.Buffer, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func (l *logBuffer) contains(s string) bool { return strings.Contains(l.String(), s) }

func (l *logBuffer) reset() { l.Reset() }
