// Package cli is the contract of a trawl subcommand: what it may touch of
// the outside world (Env), how it says that its command line is wrong
// (ErrUsage) or exits with a given status (ExitError), its flag set, and
// the dispatch of a table of commands (Main) or of a command's
// subcommands (Group). cmd/trawl holds the table and the process: the
// standard streams, the signals and the exit status; a command that is a
// tool rather than a role (trawl config, marshal, cmt, store, export,
// webfarm, admin, table, webanalyzer), and trawl dmake and distributor,
// live beside the package they drive and are tested there without a
// process.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/trawl/trawl/internal/config"
)

// Env is what a command may touch of the outside world; tests replace it.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Notify relays the signals sig to c (os/signal.Notify) until stop is
	// called; nil relays nothing.
	Notify func(c chan<- os.Signal, sig ...os.Signal) (stop func())
}

// Signals returns a channel that receives sig, and the function that
// stops the relay.
func (e *Env) Signals(sig ...os.Signal) (<-chan os.Signal, func()) {
	c := make(chan os.Signal, 1)
	if e.Notify == nil {
		return c, func() {}
	}
	return c, e.Notify(c, sig...)
}

// Command is one trawl subcommand.
type Command struct {
	Name    string
	Summary string
	// Run executes the command with the arguments after its name. It
	// returns an error to print (exit 1), ErrUsage (exit 2) or an
	// ExitError.
	Run func(ctx context.Context, env *Env, args []string) error
}

// ErrUsage reports bad command-line usage; the command has already
// printed the details.
var ErrUsage = errors.New("usage")

// ExitError carries a specific exit code without printing anything more.
type ExitError struct{ Code int }

func (e ExitError) Error() string { return fmt.Sprintf("exit %d", e.Code) }

// Repeated is a repeatable string flag.
type Repeated []string

func (r *Repeated) String() string     { return strings.Join(*r, ",") }
func (r *Repeated) Set(s string) error { *r = append(*r, s); return nil }

// NewFlagSet returns a flag set for a subcommand whose -h/--help prints
// the usage line, the summary and every flag.
func NewFlagSet(env *Env, name, usage, summary string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	fs.Usage = func() {
		fmt.Fprintf(env.Stderr, "usage: trawl %s\n\n%s\n", usage, summary)
		hasFlags := false
		fs.VisitAll(func(*flag.Flag) { hasFlags = true })
		if hasFlags {
			fmt.Fprintf(env.Stderr, "\nflags:\n")
			fs.PrintDefaults()
		}
	}
	return fs
}

// Given reports whether flag name was given on the command line (not left
// at its default).
func Given(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}

// ParseFlags parses args with fs; -h prints usage and exits 0.
func ParseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ExitError{0}
		}
		return ErrUsage
	}
	return nil
}

// Group runs the subcommand args[0] of the command cmd ("config"), one of
// subs. Without a subcommand, or with an unknown one, it prints usage on
// stderr (exit 2); help prints it too (exit 0).
func Group(ctx context.Context, env *Env, cmd, usage string, subs map[string]func(context.Context, *Env, []string) error, args []string) error {
	if len(args) == 0 {
		fmt.Fprint(env.Stderr, usage)
		return ErrUsage
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(env.Stderr, usage)
		return ExitError{0}
	}
	if run, ok := subs[args[0]]; ok {
		return run(ctx, env, args[1:])
	}
	fmt.Fprintf(env.Stderr, "trawl %s: unknown subcommand %q\n\n%s", cmd, args[0], usage)
	return ErrUsage
}

// Main runs the command args[0] of cmds with the rest of args and returns
// the process exit status; "help" lists the commands.
func Main(ctx context.Context, env *Env, cmds []Command, args []string) int {
	byName := make(map[string]*Command, len(cmds))
	names := make([]string, 0, len(cmds))
	for i := range cmds {
		byName[cmds[i].Name] = &cmds[i]
		names = append(names, cmds[i].Name)
	}
	sort.Strings(names)
	if len(args) == 0 {
		usage(env.Stderr, byName, names)
		return 2
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		if len(args) > 1 {
			if c, ok := byName[args[1]]; ok {
				return exitCode(env, c.Name, c.Run(ctx, env, []string{"--help"}))
			}
		}
		usage(env.Stdout, byName, names)
		return 0
	}
	c, ok := byName[args[0]]
	if !ok {
		fmt.Fprintf(env.Stderr, "trawl: unknown command %q%s\n", args[0], config.Suggest(args[0], names))
		usage(env.Stderr, byName, names)
		return 2
	}
	return exitCode(env, c.Name, c.Run(ctx, env, args[1:]))
}

func usage(w io.Writer, cmds map[string]*Command, names []string) {
	fmt.Fprintf(w, "trawl: a distributed enterprise web crawler\n\nusage: trawl <command> [flags] [args]\n\ncommands:\n")
	for _, n := range names {
		fmt.Fprintf(w, "  %-12s %s\n", n, cmds[n].Summary)
	}
	fmt.Fprintf(w, "\nRun \"trawl <command> --help\" for a command's flags.\n")
}

func exitCode(env *Env, name string, err error) int {
	var ee ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.Code
	case errors.Is(err, ErrUsage):
		return 2
	default:
		fmt.Fprintf(env.Stderr, "trawl %s: %v\n", name, err)
		return 1
	}
}
