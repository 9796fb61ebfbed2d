package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/admin"
	"github.com/trawl/trawl/internal/dmake"
	"github.com/trawl/trawl/internal/index"
	"github.com/trawl/trawl/internal/store"
	"github.com/trawl/trawl/internal/webanalyzer"
)

func init() {
	register(&command{name: "webanalyzer", summary: "link analysis of a crawl on dmake: dump, run, ranks (MS-FSFDMW)", run: runWebanalyzer})
}

func runWebanalyzer(ctx context.Context, env *cmdEnv, args []string) error {
	if len(args) > 0 {
		switch args[0] {
		case "dump":
			return runWADump(ctx, env, args[1:])
		case "run":
			return runWARun(ctx, env, args[1:])
		case "ranks":
			return runWARanks(ctx, env, args[1:])
		case "clicks":
			return runWAClicks(ctx, env, args[1:])
		}
	}
	fmt.Fprintf(env.stderr, "usage: trawl webanalyzer dump --data DIR --out DIR\n"+
		"       trawl webanalyzer run --data DIR [--worker HOST:PORT]... [--nameserver HOST:PORT] [flags]\n"+
		"       trawl webanalyzer ranks --data DIR\n"+
		"       trawl webanalyzer clicks --data DIR [--from YYYY-MM-DD] [--worker HOST:PORT]...\n")
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
		return exitError{0}
	}
	return errUsage
}

func runWADump(ctx context.Context, env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "webanalyzer dump", "webanalyzer dump --data DIR --out DIR [--collection C]",
		"Write a crawl's link graph as the web analyzer's input tables (layouts in internal/webanalyzer's\n"+
			"documentation), reading DIR/node, the crawl store, read-only (the crawl must not be running).")
	data := fs.String("data", "./data", "trawl run's data directory")
	out := fs.String("out", "", "directory to write the tables to")
	coll := fs.String("collection", "", "collection (default: the only one in the store)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *out == "" || fs.NArg() > 0 {
		fs.Usage()
		return errUsage
	}
	ds, err := webanalyzer.DumpData(*data, *coll, *out, time.Time{}, time.Now())
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "%d pages, %d links, %d pages without links, %d URLs, %d equivalences, %d deletes\n",
		ds.Pages, ds.Links, ds.NoLinks, ds.URLs, ds.Equivalences, ds.Deletes)
	return nil
}

func runWARun(ctx context.Context, env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "webanalyzer run", "webanalyzer run --data DIR [--worker HOST:PORT]... [flags]",
		"Analyse a crawl's link graph on dmake: dump what changed since the last run, compact the logs,\n"+
			"normalize links through duplicates and redirects, compute the static rank (PageRank), the site\n"+
			"rank and the anchor text, and keep the tables in DIR/webanalyzer/state. An embedded master drives\n"+
			"--local-workers workers of this process and every --worker (trawl dmake worker).")
	data := fs.String("data", "./data", "trawl run's data directory")
	coll := fs.String("collection", "", "collection (default: the only one in the store)")
	var workers repeated
	fs.Var(&workers, "worker", "HOST:PORT of a further dmake worker (repeatable)")
	ns := fs.String("nameserver", "", "HOST:PORT of a name server: every dmake worker bound there is used too")
	registry := fs.String("registry", "", "etcd://HOST:PORT,... registry of dmake workers (instead of --nameserver)")
	local := fs.Int("local-workers", 1, "workers started in this process (at least 1)")
	rounds := fs.Int("rounds", 30, "rounds of the static rank iteration")
	damping := fs.Float64("damping", webanalyzer.DefaultDamping, "PageRank damping factor")
	parts := fs.Int("partitions", 3, "parts the rank iteration is split into")
	slots := fs.Int("slots", 2, "targets a worker runs at once")
	full := fs.Bool("full", false, "ignore the last run's state and analyse everything again")
	toIndex := fs.Bool("index", true, "give the documents of DIR/index (when there is one) their rank and anchor text")
	tables := fs.String("tables", "", "analyse this dump directory (trawl webanalyzer dump's layout) instead of DIR/node")
	self := fs.String("trawl", "", "trawl binary the workers run table programs with (default: this one)")
	logLevel := fs.String("log-level", "warn", "log level: debug, info, warn or error")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return errUsage
	}
	log, _, err := admin.NewLogger(env.stderr, *logLevel)
	if err != nil {
		return err
	}
	if *self == "" {
		if *self, err = os.Executable(); err != nil {
			return err
		}
	}
	// The local workers are always there: the registry's may be none.
	if workers, err = discoverWorkers(ctx, env, "webanalyzer run", workers, *ns, *registry, 0, time.Minute, log); err != nil {
		return err
	}
	rs, err := webanalyzer.Run(ctx, webanalyzer.RunOptions{Data: *data, Collection: *coll, LocalWorkers: *local,
		Workers: workers, Self: *self, Full: *full, Tables: *tables, Slots: *slots, Logger: log, Progress: env.stdout,
		Build: webanalyzer.BuildOptions{Rounds: *rounds, Damping: *damping, Partitions: *parts}, Builder: dmakeBuild})
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "done: incremental %v, rank kept %v, dump %v, build %v\n", rs.Incremental, rs.RankReused,
		rs.DumpTime.Round(time.Millisecond), rs.BuildTime.Round(time.Millisecond))
	dir := filepath.Join(*data, "index")
	if _, err := os.Stat(dir); err != nil || !*toIndex || *tables != "" {
		return nil
	}
	ix, err := index.Open(dir, index.Options{})
	if err != nil {
		return fmt.Errorf("webanalyzer: the index (is trawl run still running?): %w", err)
	}
	defer ix.Close()
	is, err := webanalyzer.ApplyToIndex(ctx, ix, rs.Dump.Collection, webanalyzer.StateDir(*data))
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "index: %d documents updated with rank and anchor text, %d analysed URLs not indexed\n", is.Updated, is.NotIndexed)
	return nil
}

func runWARanks(ctx context.Context, env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "webanalyzer ranks", "webanalyzer ranks --data DIR",
		"Print every URL the last webanalyzer run analysed: URL, TAB, static rank (PageRank, summing to 1),\n"+
			"TAB, site rank (the sum of the static ranks of the URL's site), highest static rank first.")
	data := fs.String("data", "./data", "trawl run's data directory")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return errUsage
	}
	ranks, err := webanalyzer.Ranks(webanalyzer.StateDir(*data))
	if err != nil {
		return err
	}
	for _, r := range ranks {
		if _, err := fmt.Fprintf(env.stdout, "%s\t%.6g\t%.6g\n", r.URL, r.Static, r.SiteRank); err != nil {
			return err
		}
	}
	return nil
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
