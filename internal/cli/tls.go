package cli

import (
	"fmt"

	"github.com/trawl/trawl/internal/tlsconf"
)

// LoadTLS loads the mutual-TLS flags of command cmd (internal/tlsconf):
// nil without them, ErrUsage (after a message on env's stderr) when they
// are wrong.
func LoadTLS(env *Env, cmd string, f *tlsconf.Flags) (*tlsconf.Config, error) {
	tc, err := f.Load()
	if err != nil {
		fmt.Fprintf(env.Stderr, "trawl %s: %v\n", cmd, err)
		return nil, ErrUsage
	}
	return tc, nil
}
