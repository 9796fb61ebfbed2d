package wacli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/trawl/trawl/internal/admin"
	"github.com/trawl/trawl/internal/clicks"
	"github.com/trawl/trawl/internal/feed"
	"github.com/trawl/trawl/internal/store"
	"github.com/trawl/trawl/internal/webanalyzer"
)

// OnlineConfig configures the web analyzer of a running crawl (trawl run).
type OnlineConfig struct {
	Data string
	// Once: the crawl runs once (--once), and Complete runs the analysis
	// when it is complete; else it runs after each refresh cycle.
	Once          bool
	Rounds, Local int
	Self          string // the trawl binary the dmake workers run
	Build         func(ctx context.Context, b webanalyzer.BuildRun) error
	BuildClicks   clicks.Builder
	// WithStore runs fn with the crawl store; Cycles is the sum of the
	// node scheduler's refresh_cycles counters.
	WithStore func(fn func(st *store.Store) error) error
	Cycles    func() int64
	// Dial is the crawl's feeding chain: each run's ranks and anchor text
	// go through it as partial updates (nil: not fed).
	Dial   feed.Dialer
	Logger *slog.Logger
}

// Online is the web analyzer of a running crawl: the analysis after each
// refresh cycle (or once), its ranks fed into the index through the
// feeding chain, and the click build after it.
type Online struct {
	Auto *webanalyzer.Auto
	Feed *webanalyzer.RankFeed // nil when nothing is fed
	once bool
	stop func()
}

// StartOnline starts the web analyzer of a running crawl; Close stops it.
func StartOnline(ctx context.Context, c OnlineConfig) (*Online, error) {
	log := c.Logger.With("role", "webanalyzer")
	dump := func(dir string, since, now time.Time) (webanalyzer.DumpStats, error) {
		var ds webanalyzer.DumpStats
		err := c.WithStore(func(st *store.Store) error {
			coll, err := webanalyzer.OnlyCollection(st)
			if err != nil {
				return err
			}
			ds, err = webanalyzer.Dump(st, dir, webanalyzer.DumpOptions{Collection: coll, Since: since, Now: now})
			ds.Collection = coll
			return err
		})
		return ds, err
	}
	w := &Online{once: c.Once}
	if c.Dial != nil {
		var err error
		if w.Feed, err = webanalyzer.OpenRankFeed(c.Data, c.Dial, log); err != nil {
			return nil, err
		}
	}
	var co *clicks.RunOptions
	if c.BuildClicks != nil {
		co = &clicks.RunOptions{Data: c.Data, LocalWorkers: max(c.Local, 1), Self: c.Self, Builder: c.BuildClicks}
	}
	w.Auto = webanalyzer.NewAuto(webanalyzer.AutoOptions{Cycles: c.Cycles, Feed: w.Feed, Clicks: co, Run: webanalyzer.RunOptions{
		Data: c.Data, LocalWorkers: max(c.Local, 1), Self: c.Self, Logger: log, Dump: dump, Builder: c.Build,
		Build: webanalyzer.BuildOptions{Rounds: c.Rounds, Damping: webanalyzer.DefaultDamping, Partitions: 3}}})
	ctx, cancel := context.WithCancel(ctx)
	var done []chan struct{}
	run := func(fn func(context.Context) error) {
		ch := make(chan struct{})
		done = append(done, ch)
		go func() {
			defer close(ch)
			_ = fn(ctx)
		}()
	}
	if w.Feed != nil {
		run(w.Feed.Run)
	}
	if !c.Once {
		run(w.Auto.Run)
	}
	w.stop = func() {
		cancel()
		for _, ch := range done {
			<-ch
		}
		if w.Feed != nil {
			if err := w.Feed.Close(); err != nil {
				log.Warn("webanalyzer: closing the rank feed", "err", err)
			}
		}
	}
	return w, nil
}

// Status is the status page's "Link analysis" row of w.
func (w *Online) Status() []admin.AnalysisStatus {
	l := w.Auto.Last()
	s := admin.AnalysisStatus{Name: "webanalyzer", Runs: l.Runs, Failed: l.Errors, Running: l.Running,
		Seconds: l.Duration.Seconds(), Incremental: l.Incremental, RankKept: l.RankReused, Ranked: l.Ranked, Links: l.Links,
		Changed: l.Changed, Error: l.Err, RanksQueued: l.Queued, ClickRuns: l.ClickRuns, ClickQueries: l.ClickQueries,
		ClickError: l.ClickErr}
	if w.Feed != nil {
		fs := w.Feed.Stats()
		s.RanksApplied, s.RanksPending = fs.Applied, fs.Pending
	}
	if !l.Start.IsZero() {
		s.Started = float64(l.Start.UnixNano()) / 1e9
	}
	return []admin.AnalysisStatus{s}
}

// FeedWait bounds how long Complete waits for the ranks to reach the index.
const FeedWait = 2 * time.Minute

// Complete runs the analysis once (a --once crawl that is complete), waits
// until its ranks are in the index, and says what it did on out.
func (w *Online) Complete(ctx context.Context, out io.Writer) {
	if w == nil || !w.once {
		return
	}
	if err := w.Auto.RunNow(ctx); err != nil {
		fmt.Fprintf(out, "trawl run: web analyzer: %v\n", err)
		return
	}
	l := w.Auto.Last()
	fmt.Fprintf(out, "trawl run: web analyzer: %d pages ranked, %d links, in %v (trawl webanalyzer ranks --data DIR)\n",
		l.Ranked, l.Links, l.Duration.Round(time.Millisecond))
	if w.Feed == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, FeedWait)
	defer cancel()
	if err := w.Feed.Wait(ctx); err != nil {
		fmt.Fprintf(out, "trawl run: web analyzer: %v\n", err)
		return
	}
	fs := w.Feed.Stats()
	fmt.Fprintf(out, "trawl run: web analyzer: ranks and anchor text of %d pages applied to the index (%d refused)\n", fs.Applied, fs.Rejected)
}

// Close stops the analyzer (a run going on is abandoned) and the rank
// feed (what it has not sent stays in its outbox for the next start).
func (w *Online) Close() {
	if w != nil {
		w.stop()
	}
}
