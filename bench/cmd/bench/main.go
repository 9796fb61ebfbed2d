// Command bench runs the crawler comparison of docs/benchmarks.md: trawl,
// Colly v2, Scrapy, wget and httrack crawl the same `trawl webfarm` (each
// against a fresh farm process whose request log is the measurement), wrk
// replays the expected URL list for the machine's ceiling, and a
// memory-scale run measures resident memory against the number of
// discovered URLs. It writes the "Crawler comparison" section of
// docs/benchmarks.md.
//
// It is normally started by bench/run.sh, which installs the peers, builds
// the binaries and maps the farm's names in /etc/hosts for the peers that
// use the system resolver.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// bench holds the run's settings and results.
type bench struct {
	trawl       string // trawl binary used for the farm
	work        string
	hosts       int
	pages       int
	port        int
	features    string
	robotsAgent string
	conc        int
	perHost     int
	capDur      time.Duration
	fullCap     time.Duration
	wrkDur      time.Duration
	wrkThreads  int

	trawlCrawl, trawlCrawlArgs string
	trawlFull, trawlFullArgs   string
	trawlNote                  string
	colly                      string
	scrapySpider               string
	only                       map[string]bool

	memPoints  []int
	memLinks   int
	memHosts   int
	memCapMiB  int64
	memTimeout time.Duration

	farmNames, farmIPs []string
	expected           map[string]bool
	expectedN          int
	starts             []string
	config             string
	hostsFile          string

	rows     []row
	memRows  []memRow
	profiles []profile
	cmds     []string
	started  time.Time
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run() error {
	b := &bench{started: time.Now()}
	flag.StringVar(&b.trawl, "trawl", "", "trawl binary (serves the webfarm)")
	flag.StringVar(&b.trawlCrawl, "trawl-crawl", "", "trawl binary for the crawl-alone row (default: --trawl)")
	flag.StringVar(&b.trawlCrawlArgs, "trawl-crawl-args", "", "extra `trawl run` flags for the crawl-alone row")
	flag.StringVar(&b.trawlFull, "trawl-full", "", "trawl binary for the full-pipeline row (empty: no such row)")
	flag.StringVar(&b.trawlFullArgs, "trawl-full-args", "", "extra `trawl run` flags for the full-pipeline row")
	flag.StringVar(&b.trawlNote, "trawl-note", "", "note on how the trawl binaries were built")
	flag.StringVar(&b.colly, "colly", "", "collycrawl binary")
	flag.StringVar(&b.scrapySpider, "scrapy-spider", "", "Scrapy spider file")
	flag.StringVar(&b.work, "work", "", "scratch directory")
	flag.IntVar(&b.hosts, "hosts", 200, "webfarm sites")
	flag.IntVar(&b.pages, "pages", 100000, "webfarm ordinary pages in all")
	flag.IntVar(&b.port, "port", 18090, "webfarm port")
	flag.StringVar(&b.features, "features", "robots,cross-links", "webfarm features")
	flag.StringVar(&b.robotsAgent, "robots-agent", "wget", "product token the farm's robots.txt files address")
	flag.IntVar(&b.conc, "concurrency", 64, "total concurrent requests of every crawler")
	flag.IntVar(&b.perHost, "per-host", 2, "concurrent requests per host")
	flag.DurationVar(&b.capDur, "cap", 150*time.Second, "time cap of each crawl")
	flag.DurationVar(&b.fullCap, "full-cap", 150*time.Second, "time cap of trawl's full-pipeline crawl")
	flag.DurationVar(&b.wrkDur, "wrk-duration", 20*time.Second, "wrk run length")
	flag.IntVar(&b.wrkThreads, "wrk-threads", 32, "wrk threads (each on its own farm host; connections are spread over them)")
	only := flag.String("only", "", "comma list of rows to run (wrk,trawl,trawl-full,colly,wget,httrack,scrapy,mem); empty: all")
	points := flag.String("mem-points", "100000,1000000,5000000", "discovered-URL counts of the memory-scale run")
	flag.IntVar(&b.memLinks, "mem-links", 1000, "memory-scale: never-served links per source page")
	flag.IntVar(&b.memHosts, "mem-hosts", 2000, "memory-scale: hosts the never-served links spread over")
	flag.Int64Var(&b.memCapMiB, "mem-cap-mib", 6144, "memory-scale: stop a crawler whose resident memory passes this")
	flag.DurationVar(&b.memTimeout, "mem-timeout", 480*time.Second, "memory-scale: time limit of each point")
	docs := flag.String("docs", "", "docs/benchmarks.md to write the section into (empty: print it)")
	cmdline := flag.String("command", "bench/run.sh", "the command that ran the benchmark, for the report")
	flag.Parse()
	if b.trawl == "" || b.work == "" {
		return errors.New("--trawl and --work are required")
	}
	if *only != "" {
		b.only = map[string]bool{}
		for _, s := range strings.Split(*only, ",") {
			b.only[strings.TrimSpace(s)] = true
		}
	}
	for _, s := range strings.Split(*points, ",") {
		var n int
		if _, err := fmt.Sscan(strings.TrimSpace(s), &n); err != nil || n <= 0 {
			return fmt.Errorf("bad --mem-points entry %q", s)
		}
		b.memPoints = append(b.memPoints, n)
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	if err := os.MkdirAll(b.work, 0o755); err != nil {
		return err
	}
	if err := b.setup(ctx); err != nil {
		return err
	}
	steps := []struct {
		name string
		fn   func(context.Context) error
	}{
		{"wrk", b.runWrk},
		{"trawl", b.runTrawlCrawl},
		{"trawl-full", b.runTrawlFull},
		{"colly", b.runColly},
		{"wget", b.runWget},
		{"httrack", b.runHttrack},
		{"scrapy", b.runScrapy},
		{"mem", b.runMemScale},
	}
	for _, s := range steps {
		if b.only != nil && !b.only[s.name] {
			continue
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		fmt.Fprintf(os.Stderr, "bench: %s (load %s) ...\n", s.name, loadAvg())
		if err := s.fn(ctx); err != nil {
			fmt.Fprintf(os.Stderr, "bench: %s: %v\n", s.name, err)
			b.rows = append(b.rows, row{Name: s.name, Note: "failed: " + err.Error()})
		}
	}
	section := b.report(*cmdline)
	if *docs == "" {
		fmt.Print(section)
		return nil
	}
	if err := writeSection(*docs, section); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "bench: wrote the crawler comparison into %s\n", *docs)
	return nil
}

// setup writes the farm's configuration, hosts file, start URLs and
// expected URL set.
func (b *bench) setup(ctx context.Context) error {
	b.config = filepath.Join(b.work, "farm.xml")
	b.hostsFile = filepath.Join(b.work, "farmhosts")
	// A farm started once writes the crawl configuration and hosts file.
	args := append(b.farmArgs(), "--write-config", b.config, "--hosts-file", b.hostsFile)
	cmd := execCommand(b.trawl, args...)
	if err := cmd.Start(); err != nil {
		return err
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(b.config); err == nil {
			time.Sleep(300 * time.Millisecond) // written before the banner; let it finish
			break
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			return errors.New("webfarm wrote no configuration")
		}
		time.Sleep(100 * time.Millisecond)
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	_ = cmd.Wait()
	var err error
	if b.farmNames, b.farmIPs, err = readHostsFile(b.hostsFile); err != nil {
		return err
	}
	for _, n := range b.farmNames {
		b.starts = append(b.starts, fmt.Sprintf("http://%s:%d/", n, b.port))
	}
	if err := writeLines(filepath.Join(b.work, "starts.txt"), b.starts); err != nil {
		return err
	}
	out, err := execCommand(b.trawl, append(b.farmArgs(), "--expect")...).Output()
	if err != nil {
		return fmt.Errorf("webfarm --expect: %w", err)
	}
	b.expected = map[string]bool{}
	for _, l := range strings.Split(string(out), "\n") {
		if l != "" {
			b.expected[l] = true
		}
	}
	b.expectedN = len(b.expected)
	b.cmds = append(b.cmds, shellJoin(append([]string{"trawl"}, append(b.farmArgs(), "--log", "LOG", "--log-cap", "1")...)))
	fmt.Fprintf(os.Stderr, "bench: %d hosts, %d expected URLs\n", len(b.farmNames), b.expectedN)
	return ctx.Err()
}
