package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"testing"

	"github.com/trawl/trawl/internal/dmake"
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

// start wires the web analyzer to the running crawl (its store, its
// refresh cycles, its feeding chain, the status page); without --once it
// runs after each refresh cycle until closed. It is nil when off.
func (f *runWAFlags) start(ctx context.Context, env *cmdEnv, o *runOptions, e *engine, log *slog.Logger) (*wacli.Online, error) {
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
	cycles := func() int64 {
		var n int64
		for _, c := range e.ns.Stats() {
			n += c["refresh_cycles"]
		}
		return n
	}
	w, err := wacli.StartOnline(ctx, wacli.OnlineConfig{Data: o.data, Once: o.once, Rounds: f.rounds, Local: f.local, Self: self,
		Build: dmakeBuild, BuildClicks: dmake.LocalBuild, WithStore: e.ns.WithStore, Cycles: cycles, Dial: e.search.Dialer(), Logger: log})
	if err != nil {
		return nil, err
	}
	e.admin.Backend.SetAnalyses(w.Status)
	return w, nil
}
