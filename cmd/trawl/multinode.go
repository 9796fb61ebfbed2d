package main

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/trawl/trawl/internal/admin"
	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/collstore"
	"github.com/trawl/trawl/internal/diskspace"
	"github.com/trawl/trawl/internal/multinode"
	"github.com/trawl/trawl/internal/multinode/mnsadmin"
)

func init() {
	register(&command{name: "multinode", summary: "run the multinode scheduler (routes sites to node schedulers, DNS, crawl-IP grants)", run: runMultinode})
}

func runMultinode(ctx context.Context, env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "multinode", "multinode [flags]",
		"Run the multinode scheduler of MS-FSCMT: node schedulers connect to it (by default on port 13001,\n"+
			"the base port + 1), receive the crawl collections of --config, ask it to resolve host names and to\n"+
			"crawl IP addresses, and send it the links to sites they do not crawl; it routes each site to one\n"+
			"node scheduler, persists the routes under --data and forwards the URIs. Stops on SIGINT/SIGTERM.")
	listen := fs.String("listen", "", "address to listen on for node schedulers (default \":<base-port+1>\")")
	basePort := fs.Int("base-port", 13000, "base port: node schedulers connect to base+1")
	data := fs.String("data", "./data", "directory of the routing database and the collections' log files")
	var configs repeated
	fs.Var(&configs, "config", "crawl configuration file (MS-FSCCFG XML); repeatable")
	hostsFile := fs.String("hosts-file", "", "resolve host names from this file (/etc/hosts format) instead of the system resolver")
	hostsFallback := fs.Bool("hosts-fallback", false, "with --hosts-file, ask the system resolver for names the file lacks")
	dnsServer := fs.String("dns-server", "", "send the resolver's DNS queries to this server (HOST:PORT) instead of those of /etc/resolv.conf")
	dnsWorkers := fs.Int("dns-workers", multinode.DefaultDNSWorkers, "concurrent DNS lookups")
	dnsTTL := fs.Duration("dns-ttl", multinode.DefaultDNSTTL, "the longest a DNS answer is kept (its records' TTL when shorter; always this for a hosts file)")
	dnsMinTTL := fs.Duration("dns-min-ttl", multinode.DefaultDNSMinTTL, "the least time a DNS answer is kept, whatever its records' TTL")
	keepalive := fs.Duration("keepalive", multinode.DefaultKeepAlive, "keep-alive period of the node scheduler links; a node that leaves two in a row unanswered is dropped")
	var allow repeated
	fs.Var(&allow, "allow", "CIDR prefix or address node schedulers may connect from (repeatable; default: any)")
	waitNodes := fs.Int("wait-nodes", 0, "hold routing at start until this many node schedulers registered (0: route at once)")
	waitNodesTimeout := fs.Duration("wait-nodes-timeout", time.Minute, "with --wait-nodes, start routing anyway after this long")
	nodeTimeout := fs.Duration("node-timeout", 0, "reroute the sites of a node scheduler that stays away this long (0: only on --reroute)")
	reroute := fs.String("reroute", "", "ask the multinode scheduler running on --data to reroute the sites of node scheduler ID (one that will not come back), then exit")
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn or error")
	adminListen := fs.String("admin-listen", "", "address of the HTTP interface: XML-RPC admin API, status page, metrics (default 127.0.0.1:<base-port>; \"off\" disables it)")
	var adm adminFlags
	adm.register(fs)
	df := diskspace.Register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	tc, err := loadTLS(env, "multinode", adm.tlsFlags)
	if err != nil {
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
	log, level, err := admin.NewLogger(env.stderr, *logLevel)
	if err != nil {
		fmt.Fprintf(env.stderr, "trawl multinode: %v\n", err)
		return errUsage
	}
	adm.level, adm.tls = level, tc
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
	specs, err := multinode.SpecsFromFiles(configs)
	if err != nil {
		return err
	}
	disk, err := df.Guard(*data, "multinode", log)
	if err != nil {
		return err
	}
	// The collections added over the admin API before a restart
	// (internal/collstore; the saved copy wins over --config).
	store := collstore.Store{Dir: collstore.Dir(*data)}
	specs = mnsadmin.WithSaved(specs, store, log)
	srv := &multinode.Server{
		Listen:        addr,
		TLS:           tc,
		Data:          *data,
		HostsFile:     *hostsFile,
		DNSServer:     *dnsServer,
		HostsFallback: *hostsFallback,
		Logger:        log,
		Collections:   specs,
		DNSWorkers:    *dnsWorkers,
		Allow:         al,
		Config: multinode.Config{KeepAlive: *keepalive, WaitNodes: *waitNodes, WaitNodesTimeout: *waitNodesTimeout,
			NodeTimeout: *nodeTimeout, DNSTTL: *dnsTTL, DNSMinTTL: *dnsMinTTL},
		RerouteRequests: *data != "",
		Disk:            disk,
	}
	if addr := admin.ListenAddr(*adminListen, *basePort); addr != "" {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		opts := adm.options(log)
		opts.Configs, opts.Store = configs, store
		b := mnsadmin.New(&mnsadmin.Engine{MNS: srv, NodeClient: nodeAdminClient(tc)}, mnsadmin.Configs(specs), opts)
		h := newAdminHTTP(b, adm, nil)
		if disk != nil {
			h.SetDisk(disk.Status)
		}
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
