package cli_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trawl/trawl/internal/cli"
	"github.com/trawl/trawl/internal/cli/clitest"
	"github.com/trawl/trawl/internal/tlsconf"
)

// TestLoadTLS: without TLS flags LoadTLS returns nil and says nothing;
// with wrong ones it prints "trawl CMD: <why>" on stderr and returns
// ErrUsage (exit 2).
func TestLoadTLS(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.pem")
	if _, err := os.Stat(missing); err == nil {
		t.Fatal("missing.pem exists")
	}
	for _, tc := range []struct {
		name  string
		flags *tlsconf.Flags
		want  string
	}{
		{"none", &tlsconf.Flags{}, ""},
		{"nil", nil, ""},
		{"partial", &tlsconf.Flags{Cert: "c.pem"}, "trawl node: tlsconf: --tls-cert, --tls-key and --tls-ca go together\n"},
		{"server name alone", &tlsconf.Flags{ServerName: "x"}, "trawl node: tlsconf: --tls-server-name without"},
		{"unreadable", &tlsconf.Flags{Cert: missing, Key: missing, CA: missing}, "trawl node: tlsconf: certificate " + missing},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stderr := &clitest.Buffer{}
			cfg, err := cli.LoadTLS(&cli.Env{Stderr: stderr}, "node", tc.flags)
			if cfg != nil {
				t.Fatalf("config %v, want nil", cfg)
			}
			if tc.want == "" {
				if err != nil || stderr.String() != "" {
					t.Fatalf("err %v, stderr %q; want nil and nothing", err, stderr.String())
				}
				return
			}
			if !errors.Is(err, cli.ErrUsage) {
				t.Fatalf("err %v, want ErrUsage", err)
			}
			if !strings.HasPrefix(stderr.String(), tc.want) {
				t.Fatalf("stderr %q, want it to begin %q", stderr.String(), tc.want)
			}
		})
	}
}
