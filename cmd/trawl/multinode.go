package main

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"

	"github.com/trawl/trawl/internal/multinode"
)

func init() {
	register(&command{name: "multinode", summary: "run the multinode scheduler (routes sites to node schedulers, DNS, crawl-IP grants)", run: runMultinode})
}

// mnsStrings is a repeatable string flag.
type mnsStrings []string

func (s *mnsStrings) String() string     { return strings.Join(*s, ",") }
func (s *mnsStrings) Set(v string) error { *s = append(*s, v); return nil }

func runMultinode(ctx context.Context, env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "multinode", "multinode [flags]",
		"Run the multinode scheduler of MS-FSCMT: node schedulers connect to it (by default on port 13001,\n"+
			"the base port + 1), receive the crawl collections of --config, ask it to resolve host names and to\n"+
			"crawl IP addresses, and send it the links to sites they do not crawl; it routes each site to one\n"+
			"node scheduler, persists the routes under --data and forwards the URIs. Stops on SIGINT/SIGTERM.")
	listen := fs.String("listen", "", "address to listen on for node schedulers (default \":<base-port+1>\")")
	basePort := fs.Int("base-port", 13000, "base port: node schedulers connect to base+1")
	data := fs.String("data", "./data", "directory of the routing database and the collections' log files")
	var configs mnsStrings
	fs.Var(&configs, "config", "crawl configuration file (MS-FSCCFG XML); repeatable")
	hostsFile := fs.String("hosts-file", "", "resolve host names from this file (/etc/hosts format) instead of the system resolver")
	hostsFallback := fs.Bool("hosts-fallback", false, "with --hosts-file, ask the system resolver for names the file lacks")
	dnsWorkers := fs.Int("dns-workers", multinode.DefaultDNSWorkers, "concurrent DNS lookups")
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn or error")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(env.stderr, "trawl multinode: unexpected argument %q\n", fs.Arg(0))
		return errUsage
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		fmt.Fprintf(env.stderr, "trawl multinode: bad --log-level %q\n", *logLevel)
		return errUsage
	}
	addr := *listen
	if addr == "" {
		if *basePort < 0 || *basePort > 65534 {
			fmt.Fprintf(env.stderr, "trawl multinode: --base-port %d out of range\n", *basePort)
			return errUsage
		}
		addr = ":" + strconv.Itoa(*basePort+1)
	}
	log := slog.New(slog.NewTextHandler(env.stderr, &slog.HandlerOptions{Level: level}))
	specs, err := multinode.SpecsFromFiles(configs)
	if err != nil {
		return err
	}
	srv := &multinode.Server{
		Listen:        addr,
		Data:          *data,
		HostsFile:     *hostsFile,
		HostsFallback: *hostsFallback,
		Logger:        log,
		Collections:   specs,
		DNSWorkers:    *dnsWorkers,
	}
	if err := srv.Run(ctx); err != nil {
		return err
	}
	log.Info("multinode: stopped")
	return nil
}
