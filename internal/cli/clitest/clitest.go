// Package clitest runs trawl commands in a test, without a process: the
// command table of cli.Main holds the commands under test, stdin is a
// string and stdout and stderr are captured.
package clitest

import (
	"context"
	"strings"

	"github.com/trawl/trawl/internal/cli"
	"github.com/trawl/trawl/internal/testenv"
)

// Run runs "trawl args..." over cmds with stdin and returns the exit
// status and what was written on stdout and stderr.
func Run(ctx context.Context, cmds []cli.Command, stdin string, args ...string) (code int, stdout, stderr string) {
	var out, errb Buffer
	env := &cli.Env{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb}
	code = cli.Main(ctx, env, cmds, args)
	return code, out.String(), errb.String()
}

// Buffer is a bytes.Buffer that a command's goroutines may write to while
// the test reads it.
type Buffer = testenv.Buffer
