// Package dmakecli is the trawl dmake command: a distributed make worker
// (dmake worker) or build master (dmake run) of internal/dmake. The
// registry of workers (the name server or etcd) is opened by cmd/trawl
// (Deps).
package dmakecli

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/trawl/trawl/internal/admin"
	"github.com/trawl/trawl/internal/cli"
	"github.com/trawl/trawl/internal/dmake"
	"github.com/trawl/trawl/internal/tlsconf"
)

// Deps are what the command takes from cmd/trawl.
type Deps struct {
	// Version is trawl's, which a worker reports to its master.
	Version string
	// OpenRegistry returns the registry of --nameserver HOST:PORT or
	// --registry etcd://HOST:PORT,... (after a message, ErrUsage when they
	// are wrong); close releases it.
	OpenRegistry func(env *cli.Env, cmd, ns, registry string) (reg dmake.Registry, close func(), err error)
}

// Command is trawl dmake.
func Command(d Deps) cli.Command {
	return cli.Command{Name: "dmake", Summary: "run a distributed make worker or build master (MS-FSFDMW)", Run: d.run}
}

func (d Deps) run(ctx context.Context, env *cli.Env, args []string) error {
	if len(args) > 0 {
		switch args[0] {
		case "worker":
			return d.worker(ctx, env, args[1:])
		case "run", "master":
			return d.master(ctx, env, args[1:])
		}
	}
	fmt.Fprintf(env.Stderr, "usage: trawl dmake worker --base-port N --data DIR [--nameserver HOST:PORT] [flags]\n"+
		"       trawl dmake run BUILDFILE (--worker HOST:PORT... | --nameserver HOST:PORT) [flags]\n")
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
		return cli.ExitError{Code: 0}
	}
	return cli.ErrUsage
}

func (d Deps) worker(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlagSet(env, "dmake worker", "dmake worker [--base-port N | --listen ADDR] [--data DIR] [--allow CIDR]... [--allow-shell] [--nameserver HOST:PORT]",
		"Run a distributed make worker (MS-FSFDMW protocol client): it listens on base+310 for a master,\n"+
			"binds itself as fdmworker/HOST:PORT in the name server (--nameserver or --registry) if given,\n"+
			"runs the tasks the master sends inside --data, and moves files to other workers when told.\n"+
			"Shell tasks run only the table programs (trawl table ...) unless --allow-shell is given.")
	basePort := fs.Int("base-port", 13000, "base port; the worker listens on base+310")
	listen := fs.String("listen", "", "address to listen on (default 127.0.0.1:base+310)")
	data := fs.String("data", "./data", "directory the worker works in")
	var allow cli.Repeated
	fs.Var(&allow, "allow", "CIDR prefix or address masters may connect from (repeatable; default: loopback only)")
	allowShell := fs.Bool("allow-shell", false, "let shell tasks run any program, not only the table programs")
	diskCheck := fs.Duration("disk-check", 10*time.Second, "how often free disk space is checked against the disk limit")
	cut := fs.Int64("fault-cut-transfer", 0, "fault injection: cut the first outgoing transfer after this many bytes")
	throttle := fs.Int64("fault-throttle-transfer", 0, "fault injection: send every outgoing transfer at most this many bytes per second")
	freeFile := fs.String("fault-free-mb-file", "", "fault injection: read the free disk space (MB) from this file when it exists")
	ns := fs.String("nameserver", "", "HOST:PORT of the name server to bind this worker in as fdmworker/HOST:PORT")
	registry := fs.String("registry", "", "etcd://HOST:PORT,... registry to bind this worker in (instead of --nameserver)")
	advertise := fs.String("advertise", "", "host masters dial this worker at, as bound in the registry (default: the listening host)")
	rebind := fs.Duration("rebind", dmake.DefaultRebind, "how often the worker binds itself in the registry again")
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn or error")
	tlsf := tlsconf.Register(fs)
	if err := cli.ParseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(env.Stderr, "trawl dmake worker: unexpected argument %q\n", fs.Arg(0))
		return cli.ErrUsage
	}
	reg, closeReg, err := d.registry(env, "dmake worker", *ns, *registry)
	if err != nil {
		return err
	}
	defer closeReg()
	tc, err := cli.LoadTLS(env, "dmake worker", tlsf)
	if err != nil {
		return err
	}
	log, _, err := admin.NewLogger(env.Stderr, *logLevel)
	if err != nil {
		return err
	}
	addr := *listen
	if addr == "" {
		port := *basePort + dmake.PortOffset
		if port <= 0 || port > 65535 {
			fmt.Fprintf(env.Stderr, "trawl dmake worker: --base-port %d gives port %d\n", *basePort, port)
			return cli.ErrUsage
		}
		addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	}
	o := dmake.WorkerOptions{Addr: addr, Dir: *data, Allow: allow, AllowShell: *allowShell, Logger: log, TLS: tc,
		DiskCheck: *diskCheck, CutTransfer: *cut, Throttle: *throttle, Version: d.Version, Rebind: *rebind, Advertise: *advertise,
		Ready: func(a string) { fmt.Fprintf(env.Stdout, "listening %s\n", a) }}
	if reg != nil {
		o.Registry = reg
	}
	if *freeFile != "" {
		o.FreeSpace = dmake.FreeSpaceFromFile(*freeFile)
	}
	return dmake.RunWorker(ctx, o)
}

func (d Deps) master(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlagSet(env, "dmake run", "dmake run BUILDFILE (--worker HOST:PORT... | --nameserver HOST:PORT | --registry etcd://...) [flags]",
		"Run a build (the build-file format is in internal/dmake's documentation) on the workers named\n"+
			"with --worker, in order (worker 0 is the first --worker), then those bound in the registry as\n"+
			"fdmworker/HOST:PORT, in the order of their names. Exits 0 when every target ran and every kept\n"+
			"file is in place. A restarted master runs the whole build again.")
	var workers cli.Repeated
	fs.Var(&workers, "worker", "HOST:PORT of a worker (repeatable); they come first, before the registry's")
	ns := fs.String("nameserver", "", "HOST:PORT of the name server to find the workers in (fdmworker/...)")
	registry := fs.String("registry", "", "etcd://HOST:PORT,... registry to find the workers in (instead of --nameserver)")
	minWorkers := fs.Int("min-workers", 1, "with a registry: wait until this many workers are known")
	discoverTimeout := fs.Duration("discover-timeout", time.Minute, "with a registry: how long to wait for --min-workers")
	hb := fs.Duration("heartbeat", dmake.DefaultHeartbeatPeriod, "period of request_heartbeat (less than 60s)")
	hbTimeout := fs.Duration("heartbeat-timeout", dmake.DefaultHeartbeatTimeout, "silence after which a worker's work is given to others")
	slots := fs.Int("slots", 2, "targets a worker runs at once")
	compress := fs.Bool("compress", false, "zlib-compress file transfers")
	timeout := fs.Duration("build-timeout", 0, "give the build up after this long (0: no limit)")
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn or error")
	tlsf := tlsconf.Register(fs)
	// The build file may come before or after the flags.
	var file string
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		file, args = args[0], args[1:]
	}
	if err := cli.ParseFlags(fs, args); err != nil {
		return err
	}
	if file == "" && fs.NArg() == 1 {
		file = fs.Arg(0)
	} else if fs.NArg() > 0 {
		fmt.Fprintf(env.Stderr, "trawl dmake run: unexpected argument %q\n", fs.Arg(0))
		return cli.ErrUsage
	}
	if file == "" || len(workers) == 0 && *ns == "" && *registry == "" {
		fmt.Fprintf(env.Stderr, "trawl dmake run: needs a build file and --worker, --nameserver or --registry\n")
		return cli.ErrUsage
	}
	if *hb <= 0 || *hb >= time.Minute {
		fmt.Fprintf(env.Stderr, "trawl dmake run: --heartbeat must be between 0 and 60s\n")
		return cli.ErrUsage
	}
	tc, err := cli.LoadTLS(env, "dmake run", tlsf)
	if err != nil {
		return err
	}
	log, _, err := admin.NewLogger(env.Stderr, *logLevel)
	if err != nil {
		return err
	}
	if workers, err = d.DiscoverWorkers(ctx, env, "dmake run", workers, *ns, *registry, *minWorkers, *discoverTimeout, log); err != nil {
		return err
	}
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	b, err := dmake.ParseBuild(f, len(workers))
	f.Close()
	if err != nil {
		return err
	}
	if *timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *timeout)
		defer cancel()
	}
	return dmake.RunMaster(ctx, dmake.MasterOptions{Logger: log, TLS: tc, MasterConfig: dmake.MasterConfig{
		Workers: workers, Build: b, HeartbeatPeriod: *hb, HeartbeatTimeout: *hbTimeout, Slots: *slots, Compress: *compress}})
}

// registry opens --nameserver or --registry when one is given (nil
// otherwise).
func (d Deps) registry(env *cli.Env, cmd, ns, registry string) (dmake.Registry, func(), error) {
	if ns == "" && registry == "" {
		return nil, func() {}, nil
	}
	return d.OpenRegistry(env, cmd, ns, registry)
}

// DiscoverWorkers adds the workers bound in the registry (if one is given)
// after the --worker ones, waiting up to timeout for min in all.
func (d Deps) DiscoverWorkers(ctx context.Context, env *cli.Env, cmd string, workers []string, ns, registry string,
	min int, timeout time.Duration, log *slog.Logger) ([]string, error) {
	reg, closeReg, err := d.registry(env, cmd, ns, registry)
	if err != nil || reg == nil {
		return workers, err
	}
	defer closeReg()
	dctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	out, err := dmake.DiscoverWorkers(dctx, workers, reg, min, 0, log)
	if err != nil {
		return nil, err
	}
	log.Info("dmake: workers", "workers", strings.Join(out, " "))
	return out, nil
}
