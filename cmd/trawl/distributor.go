package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/trawl/trawl/internal/distrib"
	"github.com/trawl/trawl/internal/distrib/nameserver"
	"github.com/trawl/trawl/internal/distrib/wire"
	"github.com/trawl/trawl/internal/tlsconf"
)

func init() {
	register(&command{name: "distributor", summary: "run a content distributor (MS-FSCDFT): master or backup, elected through the name server", run: runDistributor})
}

func runDistributor(ctx context.Context, env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "distributor", "distributor --id N (--nameserver HOST:PORT | --registry etcd://HOST:PORT,...) [--base-port N] [--host HOST] [--collection C]... [--log-level LEVEL]",
		"Run a content distributor. It binds its objects in the name server on base+390 (base+391 for sessions\n"+
			"of external clients), becomes master if none is registered and a backup otherwise, pings the master\n"+
			"and takes over after three failed pings.")
	id := fs.Int64("id", -1, "node_id of this distributor (unique, >= 0)")
	ns := fs.String("nameserver", "", "HOST:PORT of the name server (its base+4)")
	registry := fs.String("registry", "", "etcd://HOST:PORT[,HOST:PORT...]: etcd as the registry instead of the name server")
	basePort := fs.Int("base-port", 13000, "base port; objects on base+390 and base+391")
	host := fs.String("host", "", "host name put in this distributor's object references (default: the host name)")
	listen := fs.String("listen", "", "address to listen on (default: every interface)")
	fs.String("data", "./data", "data directory (a distributor keeps no state of its own there)")
	checkMaster := fs.Duration("check-master", 5*time.Second, `the master's "check master status" period`)
	pingMaster := fs.Duration("ping-master", 5*time.Second, `a backup's "check for master" __ping period`)
	var colls repeated
	fs.Var(&colls, "collection", "a content collection of the collection holder (repeatable; none: every collection)")
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn or error")
	tlsf := tlsconf.Register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	tc, err := loadTLS(env, "distributor", tlsf)
	if err != nil {
		return err
	}
	if fs.NArg() > 0 || *id < 0 {
		fmt.Fprintf(env.stderr, "trawl distributor: --id N (>= 0) is required\n")
		return errUsage
	}
	if *basePort+wire.PortExternal > 65535 || *basePort <= 0 {
		fmt.Fprintf(env.stderr, "trawl distributor: bad --base-port %d\n", *basePort)
		return errUsage
	}
	log, err := roleLogger(env, "distributor", *logLevel)
	if err != nil {
		return err
	}
	reg, closeReg, err := openRegistryTLS(env, "distributor", *ns, *registry, tc)
	if err != nil {
		return err
	}
	defer closeReg()
	if *host == "" {
		if *host, err = os.Hostname(); err != nil {
			return err
		}
	}
	s, err := distrib.NewServer(distrib.ServerConfig{
		Config: distrib.Config{NodeID: *id, Host: *host, BasePort: *basePort, Collections: colls,
			CheckMaster: *checkMaster, PingMaster: *pingMaster},
		Listen:   *listen,
		Registry: reg,
		Logger:   log,
		TLS:      tc,
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "distributor %d listening on %s\n", *id, s.Addr())
	return s.Run(ctx)
}

// distribFeeding is the content client of trawl node and trawl run with
// --nameserver: sessions from the master distributor found through the
// name server at ns.
func distribFeeding(ns string, log *slog.Logger) *distrib.Client {
	return distribFeedingTLS(ns, log, nil)
}

// distribFeedingTLS is distribFeeding with mutual TLS when tc is not nil.
func distribFeedingTLS(ns string, log *slog.Logger, tc *tlsconf.Config) *distrib.Client {
	cl := distrib.NewClient(nameserver.NewClient(ns, &wire.Client{Dialer: tc.Dialer(nil)}), log.With("role", "distrib-client"))
	cl.Control.Dialer, cl.Data.Dialer = tc.Dialer(nil), tc.Dialer(nil)
	return cl
}

func init() {
	register(&command{name: "distributors", summary: "show the content distributors (master, sessions, load) and the indexers (documents)", run: runDistributors})
}

func runDistributors(ctx context.Context, env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "distributors", "distributors (--nameserver HOST:PORT | --registry etcd://HOST:PORT,...) [--json]",
		"Show the feeding chain registered in the name server: which content distributor is master, the sessions\n"+
			"operations in flight and load (the two added up) of each, and each indexer partition with its document count.")
	ns := fs.String("nameserver", "", "HOST:PORT of the name server")
	registry := fs.String("registry", "", "etcd://HOST:PORT[,HOST:PORT...]: etcd as the registry")
	asJSON := fs.Bool("json", false, "print JSON")
	tlsf := tlsconf.Register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	tc, err := loadTLS(env, "distributors", tlsf)
	if err != nil {
		return err
	}
	reg, closeReg, err := openRegistryTLS(env, "distributors", *ns, *registry, tc)
	if err != nil {
		return err
	}
	defer closeReg()
	cl := &wire.Client{Timeout: 5 * time.Second, Dialer: tc.Dialer(nil)}
	defer cl.Close()
	s, err := distrib.Take(ctx, reg, cl)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(env.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(s)
	}
	master := s.Master
	if master == "" {
		master = "none"
	}
	fmt.Fprintf(env.stdout, "master %s\n", master)
	for _, d := range s.Distributor {
		role := "backup"
		if d.Master {
			role = "master"
		}
		if d.Err != "" {
			fmt.Fprintf(env.stdout, "distributor %d %s %s: %s\n", d.NodeID, d.Addr, role, d.Err)
			continue
		}
		fmt.Fprintf(env.stdout, "distributor %d %s %s sessions %d operations-in-flight %d load %d\n", d.NodeID, d.Addr, role, d.Sessions, d.Operations, d.Load)
	}
	for _, ix := range s.Indexers {
		if ix.Err != "" {
			fmt.Fprintf(env.stdout, "indexer %s %s: %s\n", ix.Partition, ix.Addr, ix.Err)
			continue
		}
		fmt.Fprintf(env.stdout, "indexer %s %s documents %d\n", ix.Partition, ix.Addr, ix.Documents)
	}
	return nil
}
