package main

import (
	"fmt"

	"github.com/trawl/trawl/internal/tlsconf"
)

// loadTLS loads the mutual-TLS flags of command cmd (internal/tlsconf):
// nil without them, errUsage (after a message) when they are wrong.
func loadTLS(env *cmdEnv, cmd string, f *tlsconf.Flags) (*tlsconf.Config, error) {
	tc, err := f.Load()
	if err != nil {
		fmt.Fprintf(env.stderr, "trawl %s: %v\n", cmd, err)
		return nil, errUsage
	}
	return tc, nil
}
