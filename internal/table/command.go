package table

import (
	"context"
	"fmt"

	"github.com/trawl/trawl/internal/cli"
)

// Command is trawl table; register adds the functions of the table
// programs beyond the package's own (the web analyzer's).
func Command(register func(*Registry)) cli.Command {
	return cli.Command{Name: "table", Summary: "run a table program: sort, split, merge, reduce, pythontasks (MS-FSFDMW)",
		Run: func(ctx context.Context, env *cli.Env, args []string) error {
			return runCommand(ctx, env, args, register)
		}}
}

// runCommand runs one program of the table engine. It writes nothing on
// stderr unless it fails: a dmake master takes any stderr as a failure.
func runCommand(ctx context.Context, env *cli.Env, args []string, register func(*Registry)) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprintf(env.Stderr, "usage: trawl table sort|split|merge|reduce|pythontasks ARGS\n\n"+
			"  sort -S <MB>M -T . [-m] [-u] [-kS[,E][n][r]]... IN... -o OUT      (jsort2.exe)\n"+
			"  split IN (-o PREFIX:KEY:N)... [--splitfunction2 F]               (split.pyc)\n"+
			"  merge (-i FILE:COLS:KEY){2,3} -o PREFIX:KEY:N -l F [-r]          (merge.pyc)\n"+
			"  reduce -i FILE:COLS:KEY -o PREFIX:KEY:N [-l F] [--funcvars=V]    (reduce.pyc)\n"+
			"  pythontasks F ARGS...                                            (pythontasks.pyc)\n"+
			"  serve      one program after another, as JSON lines on stdin  (for dmake workers)\n")
		if len(args) == 0 {
			return cli.ErrUsage
		}
		return cli.ExitError{Code: 0}
	}
	reg := NewRegistry()
	register(reg)
	return Main(ctx, args, reg)
}
