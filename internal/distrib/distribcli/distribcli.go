// Package distribcli is the trawl distributor command (a content
// distributor of internal/distrib, master or backup) and trawl
// distributors (the feeding chain registered in the name server). The
// registry and the role's logger come from cmd/trawl (Deps).
package distribcli

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/trawl/trawl/internal/cli"
	"github.com/trawl/trawl/internal/distrib"
	"github.com/trawl/trawl/internal/distrib/nameserver"
	"github.com/trawl/trawl/internal/distrib/wire"
	"github.com/trawl/trawl/internal/tlsconf"
)

// Deps are what the commands take from cmd/trawl.
type Deps struct {
	// OpenRegistry returns the registry of --nameserver HOST:PORT or
	// --registry etcd://HOST:PORT,..., with mutual TLS to the name server
	// when tc is not nil (after a message, ErrUsage when they are wrong);
	// close releases it.
	OpenRegistry func(env *cli.Env, cmd, ns, registry string, tc *tlsconf.Config) (reg nameserver.Registry, close func(), err error)
	// Logger returns the role's logger on stderr at level (ErrUsage after
	// a message when level is wrong).
	Logger func(env *cli.Env, cmd, level string) (*slog.Logger, error)
}

// Command is trawl distributor.
func Command(d Deps) cli.Command {
	return cli.Command{Name: "distributor", Summary: "run a content distributor (MS-FSCDFT): master or backup, elected through the name server", Run: d.distributor}
}

// StatusCommand is trawl distributors.
func StatusCommand(d Deps) cli.Command {
	return cli.Command{Name: "distributors", Summary: "show the content distributors (master, sessions, load) and the indexers (documents)", Run: d.distributors}
}

func (d Deps) distributor(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlagSet(env, "distributor", "distributor --id N (--nameserver HOST:PORT | --registry etcd://HOST:PORT,...) [--base-port N] [--host HOST] [--collection C]... [--log-level LEVEL]",
		"Run a content distributor. It binds its objects in the name server on base+390 (base+391 for sessions\n"+
			"of external clients), becomes master if none is registered and a backup otherwise, pings the master\n"+
			"and takes over after three failed pings. A master that cannot confirm its binding for --lease steps down.")
	id := fs.Int64("id", -1, "node_id of this distributor (unique, >= 0)")
	ns := fs.String("nameserver", "", "HOST:PORT of the name server (its base+4)")
	registry := fs.String("registry", "", "etcd://HOST:PORT[,HOST:PORT...]: etcd as the registry instead of the name server")
	basePort := fs.Int("base-port", 13000, "base port; objects on base+390 and base+391 (0: two ports the system chooses, found through the name server)")
	host := fs.String("host", "", "host name put in this distributor's object references (default: the host name)")
	listen := fs.String("listen", "", "address to listen on (default: every interface)")
	fs.String("data", "./data", "data directory (a distributor keeps no state of its own there)")
	checkMaster := fs.Duration("check-master", 5*time.Second, `the master's "check master status" period`)
	pingMaster := fs.Duration("ping-master", 5*time.Second, `a backup's "check for master" __ping period`)
	lease := fs.Duration("lease", 0, "how long a master places sessions without confirming its binding in the registry\n"+
		"(0: 2 x --ping-master, shorter than a backup's takeover; 1.5 x --check-master when that is not longer than --check-master)")
	var colls cli.Repeated
	fs.Var(&colls, "collection", "a content collection of the collection holder (repeatable; none: every collection)")
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn or error")
	tlsf := tlsconf.Register(fs)
	if err := cli.ParseFlags(fs, args); err != nil {
		return err
	}
	tc, err := cli.LoadTLS(env, "distributor", tlsf)
	if err != nil {
		return err
	}
	if fs.NArg() > 0 || *id < 0 {
		fmt.Fprintf(env.Stderr, "trawl distributor: --id N (>= 0) is required\n")
		return cli.ErrUsage
	}
	if *basePort+wire.PortExternal > 65535 || *basePort < 0 {
		fmt.Fprintf(env.Stderr, "trawl distributor: bad --base-port %d\n", *basePort)
		return cli.ErrUsage
	}
	log, err := d.Logger(env, "distributor", *logLevel)
	if err != nil {
		return err
	}
	reg, closeReg, err := d.OpenRegistry(env, "distributor", *ns, *registry, tc)
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
			CheckMaster: *checkMaster, PingMaster: *pingMaster, Lease: *lease},
		Listen:   *listen,
		AnyPort:  *basePort == 0,
		Registry: reg,
		Logger:   log,
		TLS:      tc,
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "distributor %d listening on %s\n", *id, s.Addr())
	return s.Run(ctx)
}

func (d Deps) distributors(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlagSet(env, "distributors", "distributors (--nameserver HOST:PORT | --registry etcd://HOST:PORT,...) [--json] [--timeout D]",
		"Show the feeding chain registered in the name server: which content distributor is master, the sessions\n"+
			"operations in flight and load (the two added up) of each, and each indexer partition with its document count.")
	ns := fs.String("nameserver", "", "HOST:PORT of the name server")
	registry := fs.String("registry", "", "etcd://HOST:PORT[,HOST:PORT...]: etcd as the registry")
	asJSON := fs.Bool("json", false, "print JSON")
	timeout := fs.Duration("timeout", 10*time.Second, "give up when the survey takes longer (a registry that cannot be reached)")
	tlsf := tlsconf.Register(fs)
	if err := cli.ParseFlags(fs, args); err != nil {
		return err
	}
	if *timeout <= 0 {
		fmt.Fprintf(env.Stderr, "trawl distributors: --timeout must be positive\n")
		return cli.ErrUsage
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	tc, err := cli.LoadTLS(env, "distributors", tlsf)
	if err != nil {
		return err
	}
	reg, closeReg, err := d.OpenRegistry(env, "distributors", *ns, *registry, tc)
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
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(s)
	}
	master := s.Master
	if master == "" {
		master = "none"
	}
	fmt.Fprintf(env.Stdout, "master %s\n", master)
	for _, d := range s.Distributor {
		role := "backup"
		if d.Master {
			role = "master"
		}
		if d.Err != "" {
			fmt.Fprintf(env.Stdout, "distributor %d %s %s: %s\n", d.NodeID, d.Addr, role, d.Err)
			continue
		}
		fmt.Fprintf(env.Stdout, "distributor %d %s %s sessions %d operations-in-flight %d load %d\n", d.NodeID, d.Addr, role, d.Sessions, d.Operations, d.Load)
	}
	for _, ix := range s.Indexers {
		if ix.Err != "" {
			fmt.Fprintf(env.Stdout, "indexer %s %s: %s\n", ix.Partition, ix.Addr, ix.Err)
			continue
		}
		fmt.Fprintf(env.Stdout, "indexer %s %s documents %d\n", ix.Partition, ix.Addr, ix.Documents)
	}
	return nil
}
