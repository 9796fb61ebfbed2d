package main

import (
	"log/slog"

	"github.com/trawl/trawl/internal/cli"
	"github.com/trawl/trawl/internal/distrib"
	"github.com/trawl/trawl/internal/distrib/distribcli"
	"github.com/trawl/trawl/internal/distrib/nameserver"
	"github.com/trawl/trawl/internal/distrib/wire"
	"github.com/trawl/trawl/internal/tlsconf"
)

func init() {
	d := distribcli.Deps{Logger: func(env *cli.Env, cmd, level string) (*slog.Logger, error) {
		return roleLogger(&cmdEnv{stdin: env.Stdin, stdout: env.Stdout, stderr: env.Stderr}, cmd, level)
	}, OpenRegistry: func(env *cli.Env, cmd, ns, registry string, tc *tlsconf.Config) (nameserver.Registry, func(), error) {
		return openRegistryTLS(&cmdEnv{stdin: env.Stdin, stdout: env.Stdout, stderr: env.Stderr}, cmd, ns, registry, tc)
	}}
	registerCLI(distribcli.Command(d))
	registerCLI(distribcli.StatusCommand(d))
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
