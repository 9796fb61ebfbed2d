package dmakecli_test

import (
	"context"
	"strings"
	"testing"

	"github.com/trawl/trawl/internal/cli"
	"github.com/trawl/trawl/internal/cli/clitest"
	"github.com/trawl/trawl/internal/dmake"
	"github.com/trawl/trawl/internal/dmake/dmakecli"
)

// TestUsage: trawl dmake without a subcommand prints both usages (exit 2,
// 0 for --help); the worker and the master refuse what their command
// lines get wrong before they open anything, and a wrong registry is a
// usage error.
func TestUsage(t *testing.T) {
	opened := 0
	cmds := []cli.Command{dmakecli.Command(dmakecli.Deps{Version: "test",
		OpenRegistry: func(env *cli.Env, cmd, ns, registry string) (dmake.Registry, func(), error) {
			opened++
			return nil, nil, cli.ErrUsage
		}})}
	for _, tc := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"dmake"}, 2, "usage: trawl dmake worker --base-port N --data DIR"},
		{[]string{"dmake", "--help"}, 0, "       trawl dmake run BUILDFILE (--worker HOST:PORT... | --nameserver HOST:PORT) [flags]\n"},
		{[]string{"dmake", "worker", "x"}, 2, "trawl dmake worker: unexpected argument \"x\"\n"},
		{[]string{"dmake", "worker", "--base-port", "70000"}, 2, "trawl dmake worker: --base-port 70000 gives port 70310\n"},
		{[]string{"dmake", "run", "build"}, 2, "trawl dmake run: needs a build file and --worker, --nameserver or --registry\n"},
		{[]string{"dmake", "run", "build", "--worker", "127.0.0.1:1", "--heartbeat", "2m"}, 2, "--heartbeat must be between 0 and 60s"},
		{[]string{"dmake", "run", "build", "--nameserver", "127.0.0.1:1"}, 2, ""},
	} {
		code, out, errOut := clitest.Run(context.Background(), cmds, "", tc.args...)
		if code != tc.code || out != "" || !strings.Contains(errOut, tc.stderr) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want %d, stderr with %q", tc.args, code, out, errOut, tc.code, tc.stderr)
		}
	}
	if opened != 1 {
		t.Errorf("the registry was opened %d times, want once (for --nameserver)", opened)
	}
}
