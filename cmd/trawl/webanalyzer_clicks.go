package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/trawl/trawl/internal/admin"
	"github.com/trawl/trawl/internal/clicks"
	"github.com/trawl/trawl/internal/dmake"
)

func runWAClicks(ctx context.Context, env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "webanalyzer clicks", "webanalyzer clicks --data DIR [--from YYYY-MM-DD] [--worker HOST:PORT]... [flags]",
		"Compute the click relevance on dmake from the searches and result clicks the search page logged in\n"+
			"DIR/clicks/log: clicks per query and URL, local and global counts, from --from on; the result\n"+
			"(DIR/clicks/state/relevance.final) boosts each URL for the queries it was clicked for, read by the\n"+
			"search page of trawl run and trawl search --serve as soon as it changes. An embedded master drives\n"+
			"--local-workers workers of this process and every --worker (trawl dmake worker).")
	data := fs.String("data", "./data", "trawl run's data directory")
	from := fs.String("from", "", "count what was logged from this day on, YYYY-MM-DD (default: --days before today)")
	days := fs.Int("days", 90, "without --from, count the last DAYS days")
	var workers repeated
	fs.Var(&workers, "worker", "HOST:PORT of a further dmake worker (repeatable)")
	local := fs.Int("local-workers", 1, "workers started in this process (at least 1)")
	slots := fs.Int("slots", 2, "targets a worker runs at once")
	self := fs.String("trawl", "", "trawl binary the workers run table programs with (default: this one)")
	logLevel := fs.String("log-level", "warn", "log level: debug, info, warn or error")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 || *days < 0 {
		fs.Usage()
		return errUsage
	}
	if *from == "" {
		*from = time.Now().UTC().AddDate(0, 0, -*days).Format(time.DateOnly)
	} else if _, err := time.Parse(time.DateOnly, *from); err != nil {
		return fmt.Errorf("webanalyzer clicks: --from %q is not YYYY-MM-DD", *from)
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
	rs, err := clicks.Run(ctx, clicks.RunOptions{Data: *data, FromDate: *from, LocalWorkers: *local, Workers: workers,
		Self: *self, Slots: *slots, Builder: dmake.LocalBuild, Logger: log, Progress: env.stdout})
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "done: %d log files, %d (query, URL) relevance records in %s\n", rs.LogFiles, rs.Queries, clicks.StateDir(*data))
	return nil
}
