package main

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/trawl/trawl/internal/admin"
	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/config"
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
	dnsServer := fs.String("dns-server", "", "send the resolver's DNS queries to this server (HOST:PORT) instead of those of /etc/resolv.conf")
	dnsWorkers := fs.Int("dns-workers", multinode.DefaultDNSWorkers, "concurrent DNS lookups")
	keepalive := fs.Duration("keepalive", multinode.DefaultKeepAlive, "keep-alive period of the node scheduler links; a node that leaves two in a row unanswered is dropped")
	var allow mnsStrings
	fs.Var(&allow, "allow", "CIDR prefix or address node schedulers may connect from (repeatable; default: any)")
	waitNodes := fs.Int("wait-nodes", 0, "hold routing at start until this many node schedulers registered (0: route at once)")
	waitNodesTimeout := fs.Duration("wait-nodes-timeout", time.Minute, "with --wait-nodes, start routing anyway after this long")
	nodeTimeout := fs.Duration("node-timeout", 0, "reroute the sites of a node scheduler that stays away this long (0: only on --reroute)")
	reroute := fs.String("reroute", "", "ask the multinode scheduler running on --data to reroute the sites of node scheduler ID (one that will not come back), then exit")
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn or error")
	adminListen := fs.String("admin-listen", "", "address of the HTTP interface: XML-RPC admin API, status page, metrics (default 127.0.0.1:<base-port>; \"off\" disables it)")
	var adm adminFlags
	adm.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(env.stderr, "trawl multinode: unexpected argument %q\n", fs.Arg(0))
		return errUsage
	}
	if err := adm.checkListen(*adminListen, "--admin-listen"); err != nil {
		fmt.Fprintf(env.stderr, "trawl multinode: %v\n", err)
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
	if *reroute != "" {
		path, err := multinode.RequestReroute(*data, *reroute)
		if err != nil {
			return err
		}
		fmt.Fprintf(env.stdout, "reroute of node scheduler %s requested (%s); the multinode scheduler picks it up within a second\n", *reroute, path)
		return nil
	}
	al, err := cmt.ParseAllowList(allow)
	if err != nil {
		fmt.Fprintf(env.stderr, "trawl multinode: %v\n", err)
		return errUsage
	}
	alevel := newAdminLevel(level)
	log := slog.New(slog.NewTextHandler(env.stderr, &slog.HandlerOptions{Level: alevel.v}))
	specs, err := multinode.SpecsFromFiles(configs)
	if err != nil {
		return err
	}
	// The collections added over the admin API before a restart
	// (run_admin.go; the saved copy wins over --config).
	collDir := collectionsDir(*data)
	specs = withSavedCollections(specs, collDir, log)
	srv := &multinode.Server{
		Listen:        addr,
		Data:          *data,
		HostsFile:     *hostsFile,
		DNSServer:     *dnsServer,
		HostsFallback: *hostsFallback,
		Logger:        log,
		Collections:   specs,
		DNSWorkers:    *dnsWorkers,
		Allow:         al,
		Config: multinode.Config{KeepAlive: *keepalive, WaitNodes: *waitNodes, WaitNodesTimeout: *waitNodesTimeout,
			NodeTimeout: *nodeTimeout},
		RerouteRequests: *data != "",
	}
	if addr := adminAddr(*adminListen, *basePort); addr != "" {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		b := newCrawlAdmin(admin.MultinodeScheduler, srv, nil, alevel, log.With("role", "admin"))
		b.configs = configs
		b.collDir = collDir
		for _, sp := range specs {
			b.known([]*config.Collection{sp.Config})
		}
		h := newAdminHTTP(b, adm)
		errc := make(chan error, 1)
		go func() { errc <- serveAdmin(ctx, env, "multinode", addr, h, nil) }()
		defer func() { cancel(); <-errc }()
	}
	if err := srv.Run(ctx); err != nil {
		return err
	}
	log.Info("multinode: stopped")
	return nil
}
