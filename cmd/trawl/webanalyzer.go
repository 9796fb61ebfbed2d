package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/admin"
	"github.com/trawl/trawl/internal/dmake"
	"github.com/trawl/trawl/internal/store"
	"github.com/trawl/trawl/internal/webanalyzer"
	"github.com/trawl/trawl/internal/webanalyzer/wacli"
)

func init() {
	registerCLI(wacli.Command(wacli.Deps{Build: dmakeBuild, BuildClicks: dmake.LocalBuild,
		Discover: dmakeDeps().DiscoverWorkers}))
}

// dmakeBuild runs the web analyzer's builds on the dmake engine.
func dmakeBuild(ctx context.Context, b webanalyzer.BuildRun) error {
	return dmake.LocalBuild(ctx, b.Work, b.Text, b.Local, b.Remote, b.Self, b.Slots, b.Logger, b.TargetDone)
}

// runWAFlags are trawl run's web analyzer flags (registered by runRun).
type runWAFlags struct {
	mode   string
	rounds int
	local  int
}

func registerRunWebanalyzer(fs *flag.FlagSet) *runWAFlags {
	f := &runWAFlags{}
	fs.StringVar(&f.mode, "webanalyzer", "auto", "run the web analyzer (link analysis on dmake) after each refresh cycle: on, off, or auto\n"+
		"(on, except with --once or --demo; with on and --once it runs once when the crawl is complete)")
	fs.IntVar(&f.rounds, "webanalyzer-rounds", 30, "rounds of the web analyzer's static rank iteration")
	fs.IntVar(&f.local, "webanalyzer-workers", 1, "dmake workers the web analyzer starts in this process")
	return f
}

// runWA is the web analyzer of a trawl run: nil when off.
type runWA struct {
	auto *webanalyzer.Auto
	once bool
	stop func()
}

// start wires the web analyzer to the running crawl (its store, its
// refresh cycles, the status page); without --once it runs after each
// refresh cycle until stop. It is nil when off.
func (f *runWAFlags) start(ctx context.Context, env *cmdEnv, o *runOptions, e *engine, log *slog.Logger) (*runWA, error) {
	// auto is off inside a go test binary: its executable cannot run the
	// table programs the workers start (it would run the tests again).
	on := f.mode == "on" || f.mode == "auto" && !o.once && !testing.Testing()
	switch {
	case f.mode != "on" && f.mode != "off" && f.mode != "auto":
		fmt.Fprintf(env.stderr, "trawl run: --webanalyzer is on, off or auto, not %q\n", f.mode)
		return nil, errUsage
	case !on:
		return nil, nil
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	log = log.With("role", "webanalyzer")
	dump := func(dir string, since, now time.Time) (webanalyzer.DumpStats, error) {
		var ds webanalyzer.DumpStats
		err := e.ns.WithStore(func(st *store.Store) error {
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
	cycles := func() int64 {
		var n int64
		for _, c := range e.ns.Stats() {
			n += c["refresh_cycles"]
		}
		return n
	}
	a := webanalyzer.NewAuto(webanalyzer.AutoOptions{Cycles: cycles, Run: webanalyzer.RunOptions{
		Data: o.data, LocalWorkers: max(f.local, 1), Self: self, Logger: log, Dump: dump, Builder: dmakeBuild,
		Build: webanalyzer.BuildOptions{Rounds: f.rounds, Damping: webanalyzer.DefaultDamping, Partitions: 3}}})
	e.admin.Backend.SetAnalyses(func() []admin.AnalysisStatus {
		l := a.Last()
		s := admin.AnalysisStatus{Name: "webanalyzer", Runs: l.Runs, Failed: l.Errors, Running: l.Running,
			Seconds: l.Duration.Seconds(), Incremental: l.Incremental, RankKept: l.RankReused, Ranked: l.Ranked, Links: l.Links, Changed: l.Changed, Error: l.Err}
		if !l.Start.IsZero() {
			s.Started = float64(l.Start.UnixNano()) / 1e9
		}
		return []admin.AnalysisStatus{s}
	})
	w := &runWA{auto: a, once: o.once, stop: func() {}}
	if !o.once {
		ctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			a.Run(ctx)
		}()
		w.stop = func() { cancel(); <-done }
	}
	return w, nil
}

// complete runs the analysis once when a --once crawl is complete.
func (w *runWA) complete(ctx context.Context, env *cmdEnv) {
	if w == nil || !w.once {
		return
	}
	if err := w.auto.RunNow(ctx); err != nil {
		fmt.Fprintf(env.stderr, "trawl run: web analyzer: %v\n", err)
		return
	}
	l := w.auto.Last()
	fmt.Fprintf(env.stderr, "trawl run: web analyzer: %d pages ranked, %d links, in %v (trawl webanalyzer ranks --data DIR)\n",
		l.Ranked, l.Links, l.Duration.Round(time.Millisecond))
}

// close stops the analyzer after each refresh cycle (a run going on is
// abandoned).
func (w *runWA) close() {
	if w != nil {
		w.stop()
	}
}
