package wacli_test

import (
	"context"
	"strings"
	"testing"

	"github.com/trawl/trawl/internal/cli"
	"github.com/trawl/trawl/internal/cli/clitest"
	"github.com/trawl/trawl/internal/webanalyzer/wacli"
)

// TestUsage: without a subcommand (or an unknown one) the command prints
// the four usages (exit 2), with --help too (exit 0); a subcommand's bad
// flags are usage errors and clicks refuses a --from that is no date.
func TestUsage(t *testing.T) {
	cmds := []cli.Command{wacli.Command(wacli.Deps{})}
	for _, tc := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"webanalyzer"}, 2, "usage: trawl webanalyzer dump --data DIR --out DIR\n"},
		{[]string{"webanalyzer", "nope"}, 2, "       trawl webanalyzer clicks --data DIR"},
		{[]string{"webanalyzer", "--help"}, 0, "       trawl webanalyzer ranks --data DIR\n"},
		{[]string{"webanalyzer", "dump", "--data", t.TempDir()}, 2, "usage: trawl webanalyzer dump --data DIR --out DIR"},
		{[]string{"webanalyzer", "run", "--help"}, 0, "-local-workers int"},
		{[]string{"webanalyzer", "ranks", "extra"}, 2, "usage: trawl webanalyzer ranks --data DIR"},
		{[]string{"webanalyzer", "clicks", "--from", "yesterday"}, 1, "trawl webanalyzer: webanalyzer clicks: --from \"yesterday\" is not YYYY-MM-DD"},
	} {
		code, out, errOut := clitest.Run(context.Background(), cmds, "", tc.args...)
		if code != tc.code || out != "" || !strings.Contains(errOut, tc.stderr) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want %d, stderr with %q", tc.args, code, out, errOut, tc.code, tc.stderr)
		}
	}
}
