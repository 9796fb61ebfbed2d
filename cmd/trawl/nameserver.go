package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/trawl/trawl/internal/diskspace"
	"github.com/trawl/trawl/internal/distrib/etcdreg"
	"github.com/trawl/trawl/internal/distrib/nameserver"
	"github.com/trawl/trawl/internal/distrib/wire"
	"github.com/trawl/trawl/internal/tlsconf"
)

func init() {
	register(&command{name: "nameserver", summary: "run the name server of the content distributors (MS-FSCDFT)", run: runNameserver})
}

func runNameserver(ctx context.Context, env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "nameserver", "nameserver [--base-port N | --listen ADDR] [--data DIR] [--ping-interval D] [--log-level LEVEL]",
		"Run the name server: content distributors and indexers bind their object references (AORs) in it\n"+
			"and resolve each other through it. Bindings are kept in DIR/nameserver/bindings.log and survive a\n"+
			"restart; an object that fails three pings in a row is dropped.")
	basePort := fs.Int("base-port", 13000, "base port; the name server listens on base+4")
	listen := fs.String("listen", "", "address to listen on (default: port base+4 on every interface)")
	data := fs.String("data", "./data", "data directory")
	ping := fs.Duration("ping-interval", 5*time.Second, "how often every bound object is pinged")
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn or error")
	tlsf := tlsconf.Register(fs)
	df := diskspace.Register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	tc, err := loadTLS(env, "nameserver", tlsf)
	if err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(env.stderr, "trawl nameserver: unexpected argument %q\n", fs.Arg(0))
		return errUsage
	}
	log, err := roleLogger(env, "nameserver", *logLevel)
	if err != nil {
		return err
	}
	addr, err := roleAddr(env, "nameserver", *listen, *basePort, wire.PortNameServer)
	if err != nil {
		return err
	}
	disk, err := df.Guard(*data, "nameserver", log)
	if err != nil {
		return err
	}
	s, err := nameserver.NewServer(nameserver.ServerConfig{Listen: addr, Dir: filepath.Join(*data, "nameserver"), PingInterval: *ping, Logger: log, TLS: tc, Disk: disk})
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "nameserver listening on %s\n", s.Addr())
	return s.Run(ctx)
}

// roleLogger returns a text logger on stderr at level.
func roleLogger(env *cmdEnv, cmd, level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(strings.ToLower(level))); err != nil {
		fmt.Fprintf(env.stderr, "trawl %s: bad --log-level %q\n", cmd, level)
		return nil, errUsage
	}
	return slog.New(slog.NewTextHandler(env.stderr, &slog.HandlerOptions{Level: l})), nil
}

// roleAddr returns listen, or ":base+offset".
func roleAddr(env *cmdEnv, cmd, listen string, base, offset int) (string, error) {
	if listen != "" {
		return listen, nil
	}
	port := base + offset
	if port <= 0 || port > 65535 {
		fmt.Fprintf(env.stderr, "trawl %s: --base-port %d gives port %d\n", cmd, base, port)
		return "", errUsage
	}
	return net.JoinHostPort("", strconv.Itoa(port)), nil
}

// openRegistry returns the registry of --nameserver HOST:PORT or
// --registry etcd://HOST:PORT,...; close releases it.
func openRegistry(env *cmdEnv, cmd, ns, registry string) (reg nameserver.Registry, close func(), err error) {
	return openRegistryTLS(env, cmd, ns, registry, nil)
}

// openRegistryTLS is openRegistry with mutual TLS to the name server (or
// to etcd, over https) when tc is not nil.
func openRegistryTLS(env *cmdEnv, cmd, ns, registry string, tc *tlsconf.Config) (reg nameserver.Registry, close func(), err error) {
	switch {
	case ns != "" && registry != "":
		fmt.Fprintf(env.stderr, "trawl %s: give --nameserver or --registry, not both\n", cmd)
		return nil, nil, errUsage
	case registry != "":
		eps, err := etcdreg.ParseURL(registry)
		if err != nil {
			fmt.Fprintf(env.stderr, "trawl %s: %v\n", cmd, err)
			return nil, nil, errUsage
		}
		r, err := etcdreg.New(eps, etcdreg.Options{TLS: tc.Client("")})
		if err != nil {
			return nil, nil, err
		}
		return r, func() { r.Close() }, nil
	case ns != "":
		return nameserver.NewClient(ns, &wire.Client{Dialer: tc.Dialer(nil)}), func() {}, nil
	}
	fmt.Fprintf(env.stderr, "trawl %s: --nameserver HOST:PORT or --registry etcd://HOST:PORT is required\n", cmd)
	return nil, nil, errUsage
}
