// Package wacli is the trawl webanalyzer command (dump, run, ranks,
// clicks): the link analysis of internal/webanalyzer and the click
// relevance of internal/clicks on dmake. The dmake engine and the registry
// of dmake workers are roles, so cmd/trawl passes them in (Deps). Online
// is the same analysis inside trawl run: after each refresh cycle (or once
// with --once), its ranks fed into the index through the crawl's feeding
// chain, the click build after it, its last run on the status page.
package wacli

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/trawl/trawl/internal/admin"
	"github.com/trawl/trawl/internal/cli"
	"github.com/trawl/trawl/internal/clicks"
	"github.com/trawl/trawl/internal/index"
	"github.com/trawl/trawl/internal/webanalyzer"
)

// Deps are what the command takes from cmd/trawl.
type Deps struct {
	// Build runs the web analyzer's builds on dmake.
	Build func(ctx context.Context, b webanalyzer.BuildRun) error
	// BuildClicks runs the click relevance's build on dmake
	// (dmake.LocalBuild).
	BuildClicks clicks.Builder
	// Discover adds the dmake workers bound in the registry (--nameserver
	// or --registry, when one is given) after workers, waiting up to
	// timeout for min in all.
	Discover func(ctx context.Context, env *cli.Env, cmd string, workers []string, ns, registry string,
		min int, timeout time.Duration, log *slog.Logger) ([]string, error)
}

// Command is trawl webanalyzer.
func Command(d Deps) cli.Command {
	return cli.Command{Name: "webanalyzer", Summary: "link analysis of a crawl on dmake: dump, run, ranks (MS-FSFDMW)", Run: d.run}
}

func (d Deps) run(ctx context.Context, env *cli.Env, args []string) error {
	if len(args) > 0 {
		switch args[0] {
		case "dump":
			return d.dump(ctx, env, args[1:])
		case "run":
			return d.runBuild(ctx, env, args[1:])
		case "ranks":
			return d.ranks(ctx, env, args[1:])
		case "clicks":
			return d.clicks(ctx, env, args[1:])
		}
	}
	fmt.Fprintf(env.Stderr, "usage: trawl webanalyzer dump --data DIR --out DIR\n"+
		"       trawl webanalyzer run --data DIR [--worker HOST:PORT]... [--nameserver HOST:PORT] [flags]\n"+
		"       trawl webanalyzer ranks --data DIR\n"+
		"       trawl webanalyzer clicks --data DIR [--from YYYY-MM-DD] [--worker HOST:PORT]...\n")
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
		return cli.ExitError{Code: 0}
	}
	return cli.ErrUsage
}

func (d Deps) dump(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlagSet(env, "webanalyzer dump", "webanalyzer dump --data DIR --out DIR [--collection C]",
		"Write a crawl's link graph as the web analyzer's input tables (layouts in internal/webanalyzer's\n"+
			"documentation), reading DIR/node, the crawl store, read-only (the crawl must not be running).")
	data := fs.String("data", "./data", "trawl run's data directory")
	out := fs.String("out", "", "directory to write the tables to")
	coll := fs.String("collection", "", "collection (default: the only one in the store)")
	if err := cli.ParseFlags(fs, args); err != nil {
		return err
	}
	if *out == "" || fs.NArg() > 0 {
		fs.Usage()
		return cli.ErrUsage
	}
	ds, err := webanalyzer.DumpData(*data, *coll, *out, time.Time{}, time.Now())
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "%d pages, %d links, %d pages without links, %d URLs, %d equivalences, %d deletes\n",
		ds.Pages, ds.Links, ds.NoLinks, ds.URLs, ds.Equivalences, ds.Deletes)
	return nil
}

func (d Deps) runBuild(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlagSet(env, "webanalyzer run", "webanalyzer run --data DIR [--worker HOST:PORT]... [flags]",
		"Analyse a crawl's link graph on dmake: dump what changed since the last run, compact the logs,\n"+
			"normalize links through duplicates and redirects, compute the static rank (PageRank), the site\n"+
			"rank and the anchor text, and keep the tables in DIR/webanalyzer/state. An embedded master drives\n"+
			"--local-workers workers of this process and every --worker (trawl dmake worker).")
	data := fs.String("data", "./data", "trawl run's data directory")
	coll := fs.String("collection", "", "collection (default: the only one in the store)")
	var workers cli.Repeated
	fs.Var(&workers, "worker", "HOST:PORT of a further dmake worker (repeatable)")
	ns := fs.String("nameserver", "", "HOST:PORT of a name server: every dmake worker bound there is used too")
	registry := fs.String("registry", "", "etcd://HOST:PORT,... registry of dmake workers (instead of --nameserver)")
	local := fs.Int("local-workers", 1, "workers started in this process (at least 1)")
	rounds := fs.Int("rounds", 30, "rounds of the static rank iteration")
	damping := fs.Float64("damping", webanalyzer.DefaultDamping, "PageRank damping factor")
	parts := fs.Int("partitions", 3, "parts the rank iteration's input tables are split into")
	slots := fs.Int("slots", 2, "targets a worker runs at once")
	full := fs.Bool("full", false, "ignore the last run's state and analyse everything again")
	toIndex := fs.Bool("index", true, "give the documents of DIR/index (when there is one) their rank and anchor text")
	tables := fs.String("tables", "", "analyse this dump directory (trawl webanalyzer dump's layout) instead of DIR/node")
	self := fs.String("trawl", "", "trawl binary the workers run table programs with (default: this one)")
	logLevel := fs.String("log-level", "warn", "log level: debug, info, warn or error")
	if err := cli.ParseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return cli.ErrUsage
	}
	log, _, err := admin.NewLogger(env.Stderr, *logLevel)
	if err != nil {
		return err
	}
	if *self == "" {
		if *self, err = os.Executable(); err != nil {
			return err
		}
	}
	// The local workers are always there: the registry's may be none.
	if workers, err = d.Discover(ctx, env, "webanalyzer run", workers, *ns, *registry, 0, time.Minute, log); err != nil {
		return err
	}
	rs, err := webanalyzer.Run(ctx, webanalyzer.RunOptions{Data: *data, Collection: *coll, LocalWorkers: *local,
		Workers: workers, Self: *self, Full: *full, Tables: *tables, Slots: *slots, Logger: log, Progress: env.Stdout,
		Build: webanalyzer.BuildOptions{Rounds: *rounds, Damping: *damping, Partitions: *parts}, Builder: d.Build})
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "done: incremental %v, rank kept %v, dump %v, build %v\n", rs.Incremental, rs.RankReused,
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
	fst, err := webanalyzer.FeedIndex(ctx, ix, *data, rs.Dump.Collection)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "index: rank and anchor text of %d analysed URLs applied as partial updates (%d refused)\n", fst.Applied, fst.Rejected)
	return nil
}

func (d Deps) ranks(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlagSet(env, "webanalyzer ranks", "webanalyzer ranks --data DIR",
		"Print every URL the last webanalyzer run analysed: URL, TAB, static rank (PageRank, summing to 1),\n"+
			"TAB, site rank (the sum of the static ranks of the URL's site), highest static rank first.")
	data := fs.String("data", "./data", "trawl run's data directory")
	if err := cli.ParseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return cli.ErrUsage
	}
	ranks, err := webanalyzer.Ranks(webanalyzer.StateDir(*data))
	if err != nil {
		return err
	}
	for _, r := range ranks {
		if _, err := fmt.Fprintf(env.Stdout, "%s\t%.6g\t%.6g\n", r.URL, r.Static, r.SiteRank); err != nil {
			return err
		}
	}
	return nil
}

func (d Deps) clicks(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlagSet(env, "webanalyzer clicks", "webanalyzer clicks --data DIR [--from YYYY-MM-DD] [--worker HOST:PORT]... [flags]",
		"Compute the click relevance on dmake from the searches and result clicks the search page logged in\n"+
			"DIR/clicks/log: clicks per query and URL, local and global counts, from --from on; the result\n"+
			"(DIR/clicks/state/relevance.final) boosts each URL for the queries it was clicked for, read by the\n"+
			"search page of trawl run and trawl search --serve as soon as it changes. An embedded master drives\n"+
			"--local-workers workers of this process and every --worker (trawl dmake worker).")
	data := fs.String("data", "./data", "trawl run's data directory")
	from := fs.String("from", "", "count what was logged from this day on, YYYY-MM-DD (default: --days before today)")
	days := fs.Int("days", 90, "without --from, count the last DAYS days")
	var workers cli.Repeated
	fs.Var(&workers, "worker", "HOST:PORT of a further dmake worker (repeatable)")
	local := fs.Int("local-workers", 1, "workers started in this process (at least 1)")
	slots := fs.Int("slots", 2, "targets a worker runs at once")
	self := fs.String("trawl", "", "trawl binary the workers run table programs with (default: this one)")
	logLevel := fs.String("log-level", "warn", "log level: debug, info, warn or error")
	if err := cli.ParseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 || *days < 0 {
		fs.Usage()
		return cli.ErrUsage
	}
	if *from == "" {
		*from = time.Now().UTC().AddDate(0, 0, -*days).Format(time.DateOnly)
	} else if _, err := time.Parse(time.DateOnly, *from); err != nil {
		return fmt.Errorf("webanalyzer clicks: --from %q is not YYYY-MM-DD", *from)
	}
	log, _, err := admin.NewLogger(env.Stderr, *logLevel)
	if err != nil {
		return err
	}
	if *self == "" {
		if *self, err = os.Executable(); err != nil {
			return err
		}
	}
	rs, err := clicks.Run(ctx, clicks.RunOptions{Data: *data, FromDate: *from, LocalWorkers: *local, Workers: workers,
		Self: *self, Slots: *slots, Builder: d.BuildClicks, Logger: log, Progress: env.Stdout})
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "done: %d log files, %d (query, URL) relevance records in %s\n", rs.LogFiles, rs.Queries, clicks.StateDir(*data))
	return nil
}
