package clicks

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Builder runs a dmake build: dmake.LocalBuild's signature (only cmd/
// imports a role package). work/w0 holds the inputs and the kept outputs.
type Builder func(ctx context.Context, work, text string, local int, remote []string, self string,
	slots int, log *slog.Logger, targetDone func()) error

// RunOptions configure a click build over a data directory.
type RunOptions struct {
	// Data is the data directory: the logs are in LogDir(Data), the
	// results go to StateDir(Data).
	Data string
	// FromDate ("YYYY-MM-DD") drops what was logged before it; "" keeps
	// everything.
	FromDate     string
	LocalWorkers int      // at least 1
	Workers      []string // further workers (trawl dmake worker)
	Self         string   // the trawl binary the workers run table programs with
	Slots        int      // targets a worker runs at once (default 2)
	Builder      Builder  // required
	Logger       *slog.Logger
	Progress     io.Writer // progress lines, or nil
}

// RunStats is what a run did.
type RunStats struct {
	LogFiles  int
	Targets   int
	Queries   int // query relevance records kept (URLs over all queries)
	BuildTime time.Duration
}

// Run gathers the logs from FromDate on, runs the click build on dmake
// and replaces StateDir's tables with its results.
func Run(ctx context.Context, o RunOptions) (RunStats, error) {
	var rs RunStats
	if o.Builder == nil {
		return rs, errors.New("clicks: no Builder to run the build with")
	}
	if o.LocalWorkers < 1 {
		o.LocalWorkers = 1
	}
	if o.Slots < 1 {
		o.Slots = 2
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	progress := func(format string, a ...any) {
		if o.Progress != nil {
			fmt.Fprintf(o.Progress, format+"\n", a...)
		}
	}
	work := filepath.Join(Dir(o.Data), "work")
	if err := os.RemoveAll(work); err != nil {
		return rs, fmt.Errorf("clicks: %w", err)
	}
	w0 := filepath.Join(work, "w0")
	if err := os.MkdirAll(w0, 0o755); err != nil {
		return rs, fmt.Errorf("clicks: %w", err)
	}
	for kind, in := range map[string]string{KindQueries: InQueries, KindClicks: InClicks, KindURLs: InURLs} {
		n, err := gather(LogDir(o.Data), kind, o.FromDate, filepath.Join(w0, in))
		if err != nil {
			return rs, err
		}
		rs.LogFiles += n
	}
	if err := os.WriteFile(filepath.Join(w0, InURIs), nil, 0o644); err != nil {
		return rs, fmt.Errorf("clicks: %w", err)
	}
	text, n, err := BuildFile(BuildOptions{FromDate: o.FromDate})
	if err != nil {
		return rs, err
	}
	rs.Targets = n
	progress("clicks: %d log files from %q, %d targets", rs.LogFiles, o.FromDate, n)
	start := time.Now()
	if err := o.Builder(ctx, work, text, o.LocalWorkers, o.Workers, o.Self, o.Slots, log, nil); err != nil {
		return rs, fmt.Errorf("clicks: build: %w", err)
	}
	rs.BuildTime = time.Since(start)
	if b, err := os.ReadFile(filepath.Join(w0, OutRelevance)); err == nil {
		rs.Queries = strings.Count(string(b), "\n")
	}
	if err := saveState(w0, StateDir(o.Data)); err != nil {
		return rs, err
	}
	progress("clicks: %d (query, URL) relevance records in %v", rs.Queries, rs.BuildTime.Round(time.Millisecond))
	return rs, nil
}

// gather concatenates the log files DATE.kind of dir with DATE >= from
// into out, oldest first, and returns how many there were.
func gather(dir, kind, from, out string) (int, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*."+kind))
	if err != nil {
		return 0, fmt.Errorf("clicks: %w", err)
	}
	sort.Strings(names)
	w, err := os.Create(out)
	if err != nil {
		return 0, fmt.Errorf("clicks: %w", err)
	}
	n := 0
	for _, name := range names {
		date := strings.TrimSuffix(filepath.Base(name), "."+kind)
		if date < from {
			continue
		}
		if err := appendFile(w, name); err != nil {
			w.Close()
			return 0, err
		}
		n++
	}
	if err := w.Close(); err != nil {
		return 0, fmt.Errorf("clicks: %w", err)
	}
	return n, nil
}

// appendFile copies the complete lines of name to w: a record being
// appended while the build starts is left for the next build.
func appendFile(w io.Writer, name string) error {
	b, err := os.ReadFile(name)
	if err != nil {
		return fmt.Errorf("clicks: %w", err)
	}
	if i := strings.LastIndexByte(string(b), '\n'); i >= 0 {
		_, err = w.Write(b[:i+1])
	} else {
		return nil
	}
	if err != nil {
		return fmt.Errorf("clicks: %w", err)
	}
	return nil
}

// saveState replaces the state directory with the build's kept tables.
func saveState(w0, state string) error {
	next := state + ".next"
	if err := os.RemoveAll(next); err != nil {
		return fmt.Errorf("clicks: %w", err)
	}
	if err := os.MkdirAll(next, 0o755); err != nil {
		return fmt.Errorf("clicks: %w", err)
	}
	for _, f := range Kept() {
		if err := os.Rename(filepath.Join(w0, f), filepath.Join(next, f)); err != nil {
			return fmt.Errorf("clicks: %w", err)
		}
	}
	old := state + ".old"
	os.RemoveAll(old)
	if err := os.Rename(state, old); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("clicks: %w", err)
	}
	if err := os.Rename(next, state); err != nil {
		return fmt.Errorf("clicks: %w", err)
	}
	return os.RemoveAll(old)
}
