package main

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strconv"

	"github.com/trawl/trawl/internal/admin"
	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/diskspace"
	"github.com/trawl/trawl/internal/dupserver"
	"github.com/trawl/trawl/internal/tlsconf"
)

func init() {
	register(&command{name: "dupserver", summary: "run a duplicate server or a duplicate server replica (MS-FSCMT)", run: runDupserver})
}

func runDupserver(ctx context.Context, env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "dupserver", "dupserver [--listen ADDR | --base-port N] [--data DIR] [--replica HOST:PORT] [--id NODEID] [--replica-mode] [--log-level LEVEL]",
		"Run a duplicate server: node schedulers register document checksums with it (PPDUP_ADD) and learn\n"+
			"which URI owns each one. With --replica it copies every change to its replica before answering.\n"+
			"With --replica-mode it is that replica. The checksum store lives under --data\n"+
			"(DIR/dupserver, or DIR/dupreplica for a replica) and survives restarts.")
	listen := fs.String("listen", "", "address to listen on (default :13002, or :13003 with --replica-mode)")
	basePort := fs.Int("base-port", 13000, "base port; the duplicate server listens on base+2, a replica on base+3")
	data := fs.String("data", "./data", "data directory")
	replica := fs.String("replica", "", "HOST:PORT of this duplicate server's replica")
	id := fs.String("id", "", "node identifier of this duplicate server (default: the host name)")
	replicaMode := fs.Bool("replica-mode", false, "run as a duplicate server replica")
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn or error")
	keepalive := fs.Duration("keepalive", dupserver.DefaultKeepAlive, "keep-alive period of every link; a peer that leaves two in a row unanswered is dropped")
	var allow repeated
	fs.Var(&allow, "allow", "CIDR prefix or address peers may connect from (repeatable; default: any)")
	failoverListen := fs.String("failover-listen", "", "with --replica-mode: address where node schedulers connect when the duplicate server is gone\n(trawl node --dupserver-failover); the first such connection promotes this replica")
	promoteAfter := fs.Duration("promote-after", dupserver.DefaultPromoteAfter, "with --failover-listen: how long the duplicate server must have been gone before a promotion")
	failoverReplica := fs.String("failover-replica", "", "with --failover-listen: the replica address of this server once promoted\n(where the old duplicate server comes back with --replica-mode)")
	dump := fs.Bool("dump", false, "print the checksum store under --data (collection, checksum, owner URI, node) and exit; the server must be stopped")
	tlsf := tlsconf.Register(fs)
	df := diskspace.Register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	tc, err := loadTLS(env, "dupserver", tlsf)
	if err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(env.stderr, "trawl dupserver: unexpected argument %q\n", fs.Arg(0))
		return errUsage
	}
	log, _, err := admin.NewLogger(env.stderr, *logLevel)
	if err != nil {
		fmt.Fprintf(env.stderr, "trawl dupserver: %v\n", err)
		return errUsage
	}
	if *replicaMode && *replica != "" {
		fmt.Fprintf(env.stderr, "trawl dupserver: --replica and --replica-mode exclude each other\n")
		return errUsage
	}
	addr := *listen
	if addr == "" {
		port := *basePort + 2
		if *replicaMode {
			port = *basePort + 3
		}
		if port <= 0 || port > 65535 {
			fmt.Fprintf(env.stderr, "trawl dupserver: --base-port %d gives port %d\n", *basePort, port)
			return errUsage
		}
		addr = net.JoinHostPort("", strconv.Itoa(port))
	}
	sub, role := "dupserver", "dupserver"
	if *replicaMode {
		sub, role = "dupreplica", "dupserver replica"
	}
	if *dump {
		return dupserver.Dump(env.stdout, filepath.Join(*data, sub))
	}
	if !*replicaMode && (*failoverListen != "" || *failoverReplica != "") {
		fmt.Fprintf(env.stderr, "trawl dupserver: --failover-listen and --failover-replica are for --replica-mode\n")
		return errUsage
	}
	al, err := cmt.ParseAllowList(allow)
	if err != nil {
		fmt.Fprintf(env.stderr, "trawl dupserver: %v\n", err)
		return errUsage
	}
	disk, err := df.Guard(*data, role, log)
	if err != nil {
		return err
	}
	s := &dupserver.Server{
		Disk:        disk,
		Listen:      addr,
		TLS:         tc,
		Replica:     *replica,
		ReplicaMode: *replicaMode,
		Data:        filepath.Join(*data, sub),
		NodeID:      *id,
		KeepAlive:   *keepalive,
		Allow:       al,

		FailoverListen:  *failoverListen,
		PromoteAfter:    *promoteAfter,
		FailoverReplica: *failoverReplica,
		Logger:          log,
	}
	return s.Run(ctx)
}
