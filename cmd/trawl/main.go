// Command trawl is a distributed enterprise web crawler implementing the FAST
// Search crawler specifications (MS-FSCCFG, MS-FSCMT, MS-FSCADM, MS-FSCDFT,
// MS-FSFDMW).
//
// The binary is a set of subcommands; each one lives in its own file in this
// package, parses its own flags and calls into internal/. Run "trawl help" for
// the list.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"

	"github.com/trawl/trawl/internal/config"
)

// command is one trawl subcommand.
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

// repeated is a repeatable string flag.
type repeated []string

func (r *repeated) String() string     { return strings.Join(*r, ",") }
func (r *repeated) Set(s string) error { *r = append(*r, s); return nil }

// errUsage reports bad command-line usage; the flag package has already
// printed the details.
var errUsage = errors.New("usage")

// exitError carries a specific exit code without printing anything more.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

// commandTable lists every subcommand. Each command's file adds itself in an
// init function through register; nothing else mutates the table.
var commandTable = map[string]*command{}

func register(c *command) {
	if _, dup := commandTable[c.name]; dup {
		panic("trawl: duplicate command " + c.name)
	}
	commandTable[c.name] = c
}

// newFlagSet returns a flag set for a subcommand whose -h/--help prints the
// usage line, the summary and every flag.
func newFlagSet(env *cmdEnv, name, usage, summary string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	fs.Usage = func() {
		fmt.Fprintf(env.stderr, "usage: trawl %s\n\n%s\n", usage, summary)
		hasFlags := false
		fs.VisitAll(func(*flag.Flag) { hasFlags = true })
		if hasFlags {
			fmt.Fprintf(env.stderr, "\nflags:\n")
			fs.PrintDefaults()
		}
	}
	return fs
}

// parseFlags parses args with fs; -h prints usage and exits 0.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitError{0}
		}
		return errUsage
	}
	return nil
}

func usage(w io.Writer) {
	fmt.Fprintf(w, "trawl: a distributed enterprise web crawler\n\nusage: trawl <command> [flags] [args]\n\ncommands:\n")
	names := make([]string, 0, len(commandTable))
	for n := range commandTable {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-12s %s\n", n, commandTable[n].summary)
	}
	fmt.Fprintf(w, "\nRun \"trawl <command> --help\" for a command's flags.\n")
}

// runMain runs trawl with args (without the program name) and returns the
// process exit code.
func runMain(ctx context.Context, env *cmdEnv, args []string) int {
	if len(args) == 0 {
		usage(env.stderr)
		return 2
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		if len(args) > 1 {
			if c, ok := commandTable[args[1]]; ok {
				return exitCode(env, c.name, c.run(ctx, env, []string{"--help"}))
			}
		}
		usage(env.stdout)
		return 0
	}
	c, ok := commandTable[args[0]]
	if !ok {
		fmt.Fprintf(env.stderr, "trawl: unknown command %q%s\n", args[0], suggestCommand(args[0]))
		usage(env.stderr)
		return 2
	}
	return exitCode(env, c.name, c.run(ctx, env, args[1:]))
}

func exitCode(env *cmdEnv, name string, err error) int {
	var ee exitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.code
	case errors.Is(err, errUsage):
		return 2
	default:
		fmt.Fprintf(env.stderr, "trawl %s: %v\n", name, err)
		return 1
	}
}

// suggestCommand returns ` (did you mean "x"?)` for a near-miss command name.
func suggestCommand(name string) string {
	names := make([]string, 0, len(commandTable))
	for n := range commandTable {
		names = append(names, n)
	}
	return config.Suggest(name, names)
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	env := &cmdEnv{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr}
	os.Exit(runMain(ctx, env, os.Args[1:]))
}
