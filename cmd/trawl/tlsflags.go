package main

import (
	"strings"

	"github.com/trawl/trawl/internal/admin"
	"github.com/trawl/trawl/internal/cli"
	"github.com/trawl/trawl/internal/tlsconf"
)

// loadTLS is cli.LoadTLS for cmd/trawl's commands.
func loadTLS(env *cmdEnv, cmd string, f *tlsconf.Flags) (*tlsconf.Config, error) {
	return cli.LoadTLS(env.cli(), cmd, f)
}

// nodeAdminClient is how the multinode scheduler reaches the node
// schedulers' HTTP interfaces: with mutual TLS over https when tc is set
// (nil: mnsadmin's default, plain http).
func nodeAdminClient(tc *tlsconf.Config) func(hp admin.HostPort) *admin.Client {
	if tc == nil {
		return nil
	}
	return func(hp admin.HostPort) *admin.Client {
		return admin.NewClient("https://"+hp.String()+admin.Path, tc.HTTPClient(hp.String(), 0))
	}
}

// listenMessage is admin.ListenMessage with https URLs when the HTTP
// interface runs mutual TLS.
func listenMessage(cmd, addr string, tc *tlsconf.Config) string {
	msg := admin.ListenMessage(cmd, addr)
	if tc != nil {
		msg = strings.ReplaceAll(msg, "http://", "https://")
	}
	return msg
}
