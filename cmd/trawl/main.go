// Command trawl is a distributed enterprise web crawler implementing the FAST
// Search crawler specifications (MS-FSCCFG, MS-FSCMT, MS-FSCADM, MS-FSCDFT,
// MS-FSFDMW).
//
// The binary is a set of subcommands. A role's command (run, multinode,
// node, dupserver, ...) lives in its own file in this package: it parses
// its flags and wires the role's packages together. A tool's command
// (config, marshal, cmt, store, export, webfarm, admin, table, webanalyzer)
// and the dmake and distributor commands live beside the package they drive
// (internal/cli is their contract) and are only listed here, with what they
// take from this package (the registry opener, the dmake builds). Run
// "trawl help" for the list.
package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/trawl/trawl/internal/cli"
)

// command is one trawl subcommand of this package.
type command struct {
	name    string
	summary string
	// run executes the command with the arguments after its name. It
	// returns an error to print (exit 1), or errUsage (exit 2).
	run func(ctx context.Context, env *cmdEnv, args []string) error
}

// cmdEnv is what a command may touch of the outside world; tests replace it.
type cmdEnv struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
}

// cli is env as internal/cli sees it; the process's signals reach it.
func (env *cmdEnv) cli() *cli.Env {
	return &cli.Env{Stdin: env.stdin, Stdout: env.stdout, Stderr: env.stderr, Notify: notify}
}

func notify(c chan<- os.Signal, sig ...os.Signal) func() {
	signal.Notify(c, sig...)
	return func() { signal.Stop(c) }
}

// repeated is a repeatable string flag.
type repeated = cli.Repeated

// errUsage reports bad command-line usage; the flag package has already
// printed the details.
var errUsage = cli.ErrUsage

// exitError carries a specific exit code without printing anything more.
type exitError struct{ code int }

func (e exitError) Error() string { return cli.ExitError{Code: e.code}.Error() }

// commandTable lists every subcommand. Each command's file adds itself in an
// init function through register (tools.go adds the tools); nothing else
// mutates the table.
var commandTable = map[string]cli.Command{}

func register(c *command) {
	registerCLI(cli.Command{Name: c.name, Summary: c.summary, Run: func(ctx context.Context, e *cli.Env, args []string) error {
		err := c.run(ctx, &cmdEnv{stdin: e.Stdin, stdout: e.Stdout, stderr: e.Stderr}, args)
		var ee exitError
		if errors.As(err, &ee) {
			return cli.ExitError{Code: ee.code}
		}
		return err
	}})
}

func registerCLI(c cli.Command) {
	if _, dup := commandTable[c.Name]; dup {
		panic("trawl: duplicate command " + c.Name)
	}
	commandTable[c.Name] = c
}

// newFlagSet returns a flag set for a subcommand whose -h/--help prints the
// usage line, the summary and every flag.
func newFlagSet(env *cmdEnv, name, usage, summary string) *flag.FlagSet {
	return cli.NewFlagSet(env.cli(), name, usage, summary)
}

// parseFlags parses args with fs; -h prints usage and exits 0.
func parseFlags(fs *flag.FlagSet, args []string) error { return cli.ParseFlags(fs, args) }

// runMain runs trawl with args (without the program name) and returns the
// process exit code.
func runMain(ctx context.Context, env *cmdEnv, args []string) int {
	cmds := make([]cli.Command, 0, len(commandTable))
	for _, c := range commandTable {
		cmds = append(cmds, c)
	}
	return cli.Main(ctx, env.cli(), cmds, args)
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	env := &cmdEnv{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr}
	os.Exit(runMain(ctx, env, os.Args[1:]))
}
