// Package farmcli is the trawl webfarm command: it serves a
// deterministic synthetic web (internal/webfarm) on loopback for tests and
// benchmarks, or prints what a correct crawl of it fetches.
package farmcli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/trawl/trawl/internal/cli"
	"github.com/trawl/trawl/internal/webfarm"
)

// Command is trawl webfarm.
func Command() cli.Command {
	return cli.Command{Name: "webfarm", Summary: "serve a deterministic synthetic web on loopback for tests and benchmarks", Run: run}
}

func run(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlagSet(env, "webfarm", "webfarm [flags]",
		"Serve a seeded synthetic web: --hosts virtual sites, each on its own 127.1.x.y address (some sharing\n"+
			"one), all on --port, with robots.txt, sitemaps, redirects, duplicates, traps, slow and broken pages.\n"+
			"Serves until interrupted; SIGUSR1 moves the farm to its next refresh cycle.\n"+
			"--expect prints the URLs a correct crawl under --write-config's configuration fetches, and exits.")
	hosts := fs.Int("hosts", 10, "number of virtual sites")
	pages := fs.Int("pages", 1000, "number of ordinary pages in all, spread evenly over the hosts")
	pagesPerHost := fs.Int("pages-per-host", 0, "ordinary pages per host (overrides --pages)")
	seed := fs.Int64("seed", 1, "seed: the same seed serves the same web")
	port := fs.Int("port", 8080, "TCP port of every host (0: pick one free on every address)")
	shared := fs.Int("shared-ip", -1, "hosts sharing another host's address (-1: a tenth of --hosts)")
	domain := fs.String("domain", "farm.test", "domain of the host names (siteNNNN.<domain>)")
	features := fs.String("features", "default", "features of every host: \"default\" (common on all, one heavier feature on\n"+
		"one host in ten), or a comma list of: common, all, robots, crawl-delay, robots-errors, sitemap,\n"+
		"cross-links, redirects, meta-refresh, link-kinds, duplicates, files, errors, meta-robots, base,\n"+
		"changes, calendar, deep-paths, slow, stall, large")
	largeBytes := fs.Int64("large-bytes", 4<<20, "size of the large page in bytes")
	slowDelay := fs.Duration("slow-delay", 100*time.Millisecond, "pause between the chunks of a slow page")
	stallMax := fs.Duration("stall-max", 0, "end a stalled response after this long (0: when the client goes away)")
	cycle := fs.Int("cycle", 0, "refresh cycle to serve (content changes per cycle)")
	agent := fs.String("robots-agent", "trawl", "product token some robots.txt files address")
	hostsFile := fs.String("hosts-file", "", "write the host names in /etc/hosts format to this file")
	logFile := fs.String("log", "", "append every request as a JSON line to this file")
	logCap := fs.Int("log-cap", 1000000, "requests kept in memory (0: all)")
	expect := fs.Bool("expect", false, "print the expected URL set (sorted, one per line) and exit")
	writeConfig := fs.String("write-config", "", "write an MS-FSCCFG crawl configuration for the farm to this file")
	depth := fs.Int("depth", -1, "crawl: crawlmode DEPTH:n (-1: FULL)")
	cutOff := fs.Int64("cut-off", 0, "crawl: cut_off in bytes (0: none)")
	maxRedirects := fs.Int("max-redirects", 10, "crawl: max_redirects")
	sitemaps := fs.Bool("sitemaps", false, "crawl: use_sitemaps")
	delay := fs.Float64("delay", 0, "crawl: delay between requests to a site, in seconds")
	fetchTimeout := fs.Int("fetch-timeout", 10, "crawl: fetch_timeout in seconds")
	if err := cli.ParseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(env.Stderr, "trawl webfarm: unexpected argument %q\n", fs.Arg(0))
		return cli.ErrUsage
	}
	if *hosts < 1 {
		fmt.Fprintln(env.Stderr, "trawl webfarm: --hosts must be at least 1")
		return cli.ErrUsage
	}
	pph := *pagesPerHost
	if pph <= 0 {
		pph = max(1, *pages / *hosts)
	}
	cfg := webfarm.DefaultConfig(*seed, *hosts, pph)
	if *features != "default" {
		fset, err := webfarm.ParseFeatures(*features)
		if err != nil {
			return err
		}
		cfg.Features, cfg.HostFeatures = fset, nil
	}
	if *shared >= 0 {
		cfg.SharedIPHosts = *shared
	}
	cfg.Port, cfg.Domain, cfg.LargeBytes = *port, *domain, *largeBytes
	cfg.SlowDelay, cfg.StallMax, cfg.RobotsAgent, cfg.LogCap = *slowDelay, *stallMax, *agent, *logCap
	if *expect && *port == 0 {
		return errors.New("--expect needs a fixed --port (the URLs contain it)")
	}
	if *logFile != "" && !*expect {
		lf, err := os.OpenFile(*logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		defer lf.Close()
		cfg.LogWriter = lf
	}
	farm, err := webfarm.New(cfg)
	if err != nil {
		return err
	}
	farm.SetCycle(*cycle)
	crawl := func() webfarm.Crawl {
		c := farm.DefaultCrawl()
		c.MaxDepth, c.CutOff, c.MaxRedirects, c.UseSitemaps = *depth, *cutOff, *maxRedirects, *sitemaps
		return c
	}
	if *expect {
		urls, err := farm.Expect(crawl())
		if err != nil {
			return err
		}
		for _, u := range urls {
			if _, err := fmt.Fprintln(env.Stdout, u); err != nil {
				return err
			}
		}
		return nil
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := farm.Start(sctx); err != nil {
		return err
	}
	defer farm.Close()
	if *hostsFile != "" {
		if err := farm.WriteHostsFile(*hostsFile); err != nil {
			return err
		}
	}
	if *writeConfig != "" {
		out, err := os.Create(*writeConfig)
		if err != nil {
			return err
		}
		werr := webfarm.WriteCrawlXML(out, crawl(), webfarm.XMLOptions{Delay: *delay, FetchTimeout: *fetchTimeout})
		if cerr := out.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return werr
		}
	}
	fmt.Fprintf(env.Stderr, "trawl webfarm: %d hosts x %d pages, seed %d, port %d, cycle %d; first site %s\n",
		*hosts, pph, *seed, farm.Port(), farm.Cycle(), farm.StartURLs()[0])
	usr1, stop := env.Signals(syscall.SIGUSR1)
	defer stop()
	for {
		select {
		case <-ctx.Done():
			total, _ := farm.RequestCount()
			if err := farm.Close(); err != nil {
				return err
			}
			fmt.Fprintf(env.Stderr, "trawl webfarm: stopped after %d requests\n", total)
			return nil
		case <-usr1:
			farm.SetCycle(farm.Cycle() + 1)
			fmt.Fprintf(env.Stderr, "trawl webfarm: now serving cycle %d\n", farm.Cycle())
		}
	}
}
