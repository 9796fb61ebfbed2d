package webanalyzer

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/trawl/trawl/internal/clicks"
)

// AutoOptions configure an Auto: the runs' options, and how it learns that
// a refresh cycle ended.
type AutoOptions struct {
	Run RunOptions
	// Cycles returns how many refresh cycles have started (the sum of the
	// node scheduler's refresh_cycles counters): a rise means the previous
	// cycle ended.
	Cycles func() int64
	// Poll is how often Cycles is read (1 s if 0).
	Poll time.Duration
	// Feed, if set, is given each successful run's ranks and anchor text
	// (RankFeed.Queue) for the index of the run's collection.
	Feed *RankFeed
	// Clicks, if set, is the click build (internal/clicks) run after each
	// analysis run, successful or not; its Progress and Logger are the
	// analysis run's.
	Clicks *clicks.RunOptions
}

// LastRun is what the status page shows of the web analyzer.
type LastRun struct {
	// Runs counts the runs that ended, Errors those that failed.
	Runs, Errors int
	// Running is set while a run goes on (Start is then its start).
	Running bool
	// Start and Duration are the last run's (the running one's start).
	Start    time.Time
	Duration time.Duration
	// Incremental, Ranked (URLs with a static rank), Links (links in the
	// compacted link table) and Changed (links dumped for this run)
	// describe the last run that succeeded; Err is the last run's error.
	Incremental bool
	RankReused  bool
	Ranked      int
	Links       int
	Changed     int
	Err         string
	// Queued is the number of partial updates (rank and anchor text) the
	// last successful run queued for the index (AutoOptions.Feed).
	Queued int
	// ClickRuns counts the click builds that ended, ClickQueries is the
	// last successful one's (query, URL) relevance records, ClickErr the
	// last one's error.
	ClickRuns, ClickQueries int
	ClickErr                string
}

// Auto runs the web analyzer after each refresh cycle of a running crawl
// (trawl run), one run at a time, and keeps what the last one did. Its
// progress lines go to the log.
type Auto struct {
	o    AutoOptions
	mu   sync.Mutex
	last LastRun
	run  sync.Mutex // one run at a time
}

// NewAuto returns an Auto.
func NewAuto(o AutoOptions) *Auto {
	if o.Poll <= 0 {
		o.Poll = time.Second
	}
	if o.Run.Logger == nil {
		o.Run.Logger = slog.New(slog.DiscardHandler)
	}
	return &Auto{o: o}
}

// Last returns what the last run did.
func (a *Auto) Last() LastRun {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.last
}

// Run watches the refresh cycles until ctx ends, and runs the analysis
// each time one ends (a cycle that ends while a run goes on is analysed
// by the next run, which sees its changes too).
func (a *Auto) Run(ctx context.Context) error {
	var seen int64
	t := time.NewTicker(a.o.Poll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		c := a.o.Cycles()
		if seen > 0 && c > seen {
			a.o.Run.Logger.Info("webanalyzer: a refresh cycle ended; running the analysis", "cycles", c)
			a.RunNow(ctx)
		}
		if c > seen {
			seen = c
		}
	}
}

// RunNow runs the analysis once and returns its error (also kept in Last).
func (a *Auto) RunNow(ctx context.Context) error {
	a.run.Lock()
	defer a.run.Unlock()
	start := time.Now()
	a.mu.Lock()
	a.last.Running, a.last.Start = true, start
	a.mu.Unlock()
	log := a.o.Run.Logger
	o := a.o.Run
	o.Progress = &logLines{log: log}
	rs, err := Run(ctx, o)
	var ranked, links, queued int
	if err == nil {
		state := StateDir(o.Data)
		ranked, err = countLines(filepath.Join(state, OutRank))
		if err == nil {
			links, err = countLines(filepath.Join(state, Compacted(TableLinks)))
		}
		if err == nil && a.o.Feed != nil {
			queued, err = a.o.Feed.Queue(ctx, rs.Dump.Collection, state)
		}
	}
	if a.o.Clicks != nil {
		a.clicks(ctx, o.Progress)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.last.Running, a.last.Duration = false, time.Since(start)
	a.last.Runs++
	if err != nil {
		a.last.Errors++
		a.last.Err = err.Error()
		log.Warn("webanalyzer: run failed", "err", err, "duration", a.last.Duration.Round(time.Millisecond))
		return err
	}
	a.last.Err = ""
	a.last.Incremental, a.last.RankReused, a.last.Ranked, a.last.Links, a.last.Changed = rs.Incremental, rs.RankReused, ranked, links, rs.Dump.Links
	a.last.Queued = queued
	log.Info("webanalyzer: run done", "incremental", rs.Incremental, "rank_kept", rs.RankReused, "ranked", ranked, "links", links,
		"changed_links", rs.Dump.Links, "queued_for_index", queued, "duration", a.last.Duration.Round(time.Millisecond))
	return nil
}

// clicks runs the click build and keeps what it did in Last.
func (a *Auto) clicks(ctx context.Context, progress io.Writer) {
	co := *a.o.Clicks
	co.Logger, co.Progress = a.o.Run.Logger, progress
	if logs, _ := filepath.Glob(filepath.Join(clicks.LogDir(co.Data), "*")); len(logs) == 0 {
		return // nothing logged yet
	}
	rs, err := clicks.Run(ctx, co)
	a.mu.Lock()
	defer a.mu.Unlock()
	a.last.ClickRuns++
	if err != nil {
		a.last.ClickErr = err.Error()
		co.Logger.Warn("webanalyzer: click build failed", "err", err)
		return
	}
	a.last.ClickErr, a.last.ClickQueries = "", rs.Queries
	co.Logger.Info("webanalyzer: click build done", "log_files", rs.LogFiles, "relevance_records", rs.Queries)
}

// logLines turns progress lines into log records.
type logLines struct {
	log *slog.Logger
	buf bytes.Buffer
}

func (l *logLines) Write(p []byte) (int, error) {
	l.buf.Write(p)
	for {
		line, err := l.buf.ReadString('\n')
		if err != nil {
			l.buf.WriteString(line)
			return len(p), nil
		}
		l.log.Info("webanalyzer: " + strings.TrimSuffix(line, "\n"))
	}
}

func countLines(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("webanalyzer: %w", err)
	}
	defer f.Close()
	n := 0
	buf := make([]byte, 1<<16)
	for {
		k, err := f.Read(buf)
		n += bytes.Count(buf[:k], []byte{'\n'})
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, fmt.Errorf("webanalyzer: %w", err)
		}
	}
}
