package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"

	"github.com/trawl/trawl/internal/admin"
	"github.com/trawl/trawl/internal/diskspace"
	"github.com/trawl/trawl/internal/feed"
	"github.com/trawl/trawl/internal/nodesched"
)

func init() {
	register(&command{name: "node", summary: "run a node scheduler: crawl the sites the multinode scheduler assigns", run: runNode})
}

func runNode(ctx context.Context, env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "node", "node --id ID --multinode HOST:PORT [--dupserver HOST:PORT ...] [flags]",
		"Run a node scheduler (MS-FSCMT 3.1). It connects to the multinode scheduler (sending CMD_UM_INIT first,\n"+
			"reconnecting with backoff), receives its collections and sites from it, resolves host names through it,\n"+
			"registers checksums with the duplicate servers, and keeps its crawl store in --data. Stops on SIGINT/SIGTERM.")
	id := fs.String("id", "", "node scheduler identifier (required)")
	mns := fs.String("multinode", "", "multinode scheduler address HOST:PORT (its base port + 1)")
	var ds repeated
	fs.Var(&ds, "dupserver", "duplicate server address HOST:PORT (repeatable)")
	data := fs.String("data", "./data", "directory of the crawl store")
	basePort := fs.Int("base-port", 13000, "base port; the admin interface announced in CMD_UM_INIT is base+0")
	workers := fs.Int("workers", 64, "concurrent fetches")
	var failover repeated
	fs.Var(&failover, "dupserver-failover", "PRIMARY=REPLICA: when the duplicate server PRIMARY (a --dupserver address) is unreachable,\nuse the failover address of its replica (trawl dupserver --replica-mode --failover-listen) (repeatable)")
	sourceIP := fs.String("source-ip", "", "local IP address of every outgoing connection (fetches and peer links)")
	keepalive := fs.Duration("keepalive", nodesched.KeepaliveInterval, "keep-alive period of the links; a peer that leaves two in a row unanswered is dropped and dialled again")
	statsEvery := fs.Duration("stats-interval", nodesched.StatsInterval, "how often the statistics go to the multinode scheduler (CMD_UM_STAT)")
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn, error")
	keyFile := fs.String("key-file", "", keyFileHelp)
	listen := fs.String("listen", "", "address of the HTTP interface: XML-RPC admin API, status page, metrics (default 127.0.0.1:<base-port>; \"off\" disables it)")
	nameServer := fs.String("nameserver", "", "HOST:PORT of the content distributors' name server: feed the documents through them (MS-FSCDFT)")
	var adm adminFlags
	adm.register(fs)
	df := diskspace.Register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	tc, err := loadTLS(env, "node", adm.tlsFlags)
	if err != nil {
		return err
	}
	if *id == "" || *mns == "" || fs.NArg() > 0 {
		fmt.Fprintln(env.stderr, "trawl node: --id and --multinode are required, and no arguments")
		return errUsage
	}
	if err := adm.checkListen(*listen, "--listen"); err != nil {
		fmt.Fprintf(env.stderr, "trawl node: %v\n", err)
		return errUsage
	}
	log, level, err := admin.NewLogger(env.stderr, *logLevel)
	if err != nil {
		fmt.Fprintf(env.stderr, "trawl node: %v\n", err)
		return errUsage
	}
	adm.level, adm.tls = level, tc
	host, _ := os.Hostname()
	if *sourceIP != "" && net.ParseIP(*sourceIP) == nil {
		fmt.Fprintf(env.stderr, "trawl node: bad --source-ip %q\n", *sourceIP)
		return errUsage
	}
	backups := map[string][]string{}
	for _, f := range failover {
		p, r, ok := strings.Cut(f, "=")
		if !ok || p == "" || r == "" || !slices.Contains(ds, p) {
			fmt.Fprintf(env.stderr, "trawl node: --dupserver-failover %q: want PRIMARY=REPLICA with PRIMARY one of the --dupserver addresses\n", f)
			return errUsage
		}
		backups[p] = append(backups[p], r)
	}
	key, err := passwordKey(*keyFile)
	if err != nil {
		return err
	}
	disk, err := df.Guard(*data, "nodesched", log)
	if err != nil {
		return err
	}
	cfg := nodesched.Config{Disk: disk, NodeID: *id, Key: key, AdminHost: host, AdminPort: int32(*basePort), DataDir: *data,
		MNS: nodesched.TCPDialerFrom(*mns, "multinode "+*mns, *sourceIP, log, tc), Workers: *workers, Logger: log,
		SourceIP: *sourceIP, KeepAlive: *keepalive, StatsInterval: *statsEvery}
	for _, a := range ds {
		cfg.DS = append(cfg.DS, nodesched.FailoverDialer(append([]string{a}, backups[a]...), "dupserver", *sourceIP, log, tc))
	}
	if *nameServer != "" {
		cl := distribFeedingTLS(*nameServer, log, tc)
		defer cl.Close()
		cfg.Feed = &nodesched.FeedConfig{Dial: cl.Dial, Feeder: feed.FeederOptions{Logger: log.With("role", "feeder")}}
	}
	if err := os.MkdirAll(*data, 0o755); err != nil {
		return err
	}
	log.Info("node scheduler starting", "id", *id, "multinode", *mns, "dupservers", len(ds), "data", *data)
	return runNodeWithAdmin(ctx, env, cfg, admin.ListenAddr(*listen, *basePort), adm, log)
}
