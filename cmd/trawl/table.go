package main

import (
	"context"
	"fmt"

	"github.com/trawl/trawl/internal/clicks"
	"github.com/trawl/trawl/internal/table"
	"github.com/trawl/trawl/internal/webanalyzer"
)

func init() {
	register(&command{name: "table", summary: "run a table program: sort, split, merge, reduce, pythontasks (MS-FSFDMW)", run: runTable})
}

// runTable runs one program of the table engine. It writes nothing on
// stderr unless it fails: a dmake master takes any stderr as a failure.
func runTable(ctx context.Context, env *cmdEnv, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprintf(env.stderr, "usage: trawl table sort|split|merge|reduce|pythontasks ARGS\n\n"+
			"  sort -S <MB>M -T . [-m] [-u] [-kS[,E][n][r]]... IN... -o OUT      (jsort2.exe)\n"+
			"  split IN (-o PREFIX:KEY:N)... [--splitfunction2 F]               (split.pyc)\n"+
			"  merge (-i FILE:COLS:KEY){2,3} -o PREFIX:KEY:N -l F [-r]          (merge.pyc)\n"+
			"  reduce -i FILE:COLS:KEY -o PREFIX:KEY:N [-l F] [--funcvars=V]    (reduce.pyc)\n"+
			"  pythontasks F ARGS...                                            (pythontasks.pyc)\n")
		if len(args) == 0 {
			return errUsage
		}
		return exitError{0}
	}
	reg := table.NewRegistry()
	webanalyzer.Register(reg)
	clicks.Register(reg)
	return table.Main(ctx, args, reg)
}
