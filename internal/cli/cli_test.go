package cli_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/trawl/trawl/internal/cli"
	"github.com/trawl/trawl/internal/cli/clitest"
)

// TestMain dispatches to the command table and maps what a command
// returns to an exit status: nil 0, ErrUsage 2, ExitError its code, any
// other error 1 with "trawl NAME: error" on stderr.
func TestMainDispatch(t *testing.T) {
	cmds := []cli.Command{
		{Name: "ok", Summary: "succeeds", Run: func(ctx context.Context, env *cli.Env, args []string) error {
			_, err := env.Stdout.Write([]byte(strings.Join(args, "+")))
			return err
		}},
		{Name: "fail", Summary: "fails", Run: func(context.Context, *cli.Env, []string) error { return errors.New("boom") }},
		{Name: "usage", Summary: "misused", Run: func(context.Context, *cli.Env, []string) error { return cli.ErrUsage }},
		{Name: "exit", Summary: "exits 3", Run: func(context.Context, *cli.Env, []string) error { return cli.ExitError{Code: 3} }},
		{Name: "flags", Summary: "has flags", Run: func(_ context.Context, env *cli.Env, args []string) error {
			fs := cli.NewFlagSet(env, "flags", "flags [--n N]", "A command with a flag.")
			fs.Int("n", 1, "a number")
			return cli.ParseFlags(fs, args)
		}},
	}
	for _, tc := range []struct {
		args           []string
		code           int
		stdout, stderr string
	}{
		{[]string{"ok", "a", "b"}, 0, "a+b", ""},
		{[]string{"fail"}, 1, "", "trawl fail: boom\n"},
		{[]string{"usage"}, 2, "", ""},
		{[]string{"exit"}, 3, "", ""},
		{[]string{"flags", "--n", "x"}, 2, "", "invalid value"},
		{[]string{"flags", "--help"}, 0, "", "usage: trawl flags [--n N]\n\nA command with a flag.\n\nflags:\n"},
		{[]string{"help", "flags"}, 0, "", "-n int"},
		{[]string{"help"}, 0, "  exit         exits 3\n", ""},
		{nil, 2, "", "commands:\n"},
		{[]string{"fial"}, 2, "", `trawl: unknown command "fial" (did you mean "fail"?)`},
	} {
		code, out, errOut := clitest.Run(context.Background(), cmds, "", tc.args...)
		if code != tc.code || !strings.Contains(out, tc.stdout) || !strings.Contains(errOut, tc.stderr) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want %d, %q, %q", tc.args, code, out, errOut, tc.code, tc.stdout, tc.stderr)
		}
	}
}

// TestGroup runs a command's subcommands and prints its usage without
// one (exit 2), for help (exit 0) and for an unknown one (exit 2).
func TestGroup(t *testing.T) {
	cmd := cli.Command{Name: "grp", Run: func(ctx context.Context, env *cli.Env, args []string) error {
		return cli.Group(ctx, env, "grp", "USAGE\n", map[string]func(context.Context, *cli.Env, []string) error{
			"sub": func(_ context.Context, env *cli.Env, args []string) error {
				_, err := env.Stdout.Write([]byte("sub " + strings.Join(args, " ")))
				return err
			}}, args)
	}}
	for _, tc := range []struct {
		args           []string
		code           int
		stdout, stderr string
	}{
		{[]string{"grp", "sub", "x"}, 0, "sub x", ""},
		{[]string{"grp"}, 2, "", "USAGE\n"},
		{[]string{"grp", "--help"}, 0, "", "USAGE\n"},
		{[]string{"grp", "nope"}, 2, "", "trawl grp: unknown subcommand \"nope\"\n\nUSAGE\n"},
	} {
		code, out, errOut := clitest.Run(context.Background(), []cli.Command{cmd}, "", tc.args...)
		if code != tc.code || out != tc.stdout || errOut != tc.stderr {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want %d, %q, %q", tc.args, code, out, errOut, tc.code, tc.stdout, tc.stderr)
		}
	}
}

// TestRepeated collects every value of a repeated flag.
func TestRepeated(t *testing.T) {
	env := &cli.Env{Stderr: &clitest.Buffer{}}
	fs := cli.NewFlagSet(env, "x", "x", "x")
	var r cli.Repeated
	fs.Var(&r, "v", "value")
	if err := cli.ParseFlags(fs, []string{"-v", "a", "-v", "b"}); err != nil || r.String() != "a,b" {
		t.Errorf("%v %q", err, r)
	}
}

// TestVersion prints the linked version with Go's.
func TestVersion(t *testing.T) {
	code, out, _ := clitest.Run(context.Background(), []cli.Command{cli.VersionCommand("1.2.3")}, "", "version")
	if code != 0 || !strings.HasPrefix(out, "trawl 1.2.3") || !strings.Contains(out, " (go") {
		t.Errorf("exit %d: %q", code, out)
	}
}
