package distribcli_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/trawl/trawl/internal/cli"
	"github.com/trawl/trawl/internal/cli/clitest"
	"github.com/trawl/trawl/internal/distrib/distribcli"
	"github.com/trawl/trawl/internal/distrib/nameserver"
	"github.com/trawl/trawl/internal/tlsconf"
)

// TestUsage: trawl distributor refuses a missing --id and a bad
// --base-port before it opens the registry; trawl distributors passes its
// --nameserver to the registry opener, whose usage error is its exit 2.
func TestUsage(t *testing.T) {
	var opened []string
	d := distribcli.Deps{
		Logger: func(env *cli.Env, cmd, level string) (*slog.Logger, error) { return slog.New(slog.DiscardHandler), nil },
		OpenRegistry: func(env *cli.Env, cmd, ns, registry string, tc *tlsconf.Config) (nameserver.Registry, func(), error) {
			opened = append(opened, cmd+" "+ns)
			return nil, nil, cli.ErrUsage
		}}
	cmds := []cli.Command{distribcli.Command(d), distribcli.StatusCommand(d)}
	for _, tc := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"distributor"}, 2, "trawl distributor: --id N (>= 0) is required\n"},
		{[]string{"distributor", "--id", "1", "--base-port", "65500"}, 2, "trawl distributor: bad --base-port 65500\n"},
		{[]string{"distributor", "--id", "1", "--base-port", "-1"}, 2, "trawl distributor: bad --base-port -1\n"},
		{[]string{"distributor", "--help"}, 0, "usage: trawl distributor --id N"},
		{[]string{"distributors", "--nameserver", "127.0.0.1:1"}, 2, ""},
	} {
		code, out, errOut := clitest.Run(context.Background(), cmds, "", tc.args...)
		if code != tc.code || out != "" || !strings.Contains(errOut, tc.stderr) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want %d, stderr with %q", tc.args, code, out, errOut, tc.code, tc.stderr)
		}
	}
	if strings.Join(opened, ",") != "distributors 127.0.0.1:1" {
		t.Errorf("registries opened: %q", opened)
	}
}
