package cmtdump

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/trawl/trawl/internal/cli"
	"github.com/trawl/trawl/internal/cmt"
)

// Command is trawl cmt.
func Command() cli.Command {
	return cli.Command{Name: "cmt", Summary: "inspect MS-FSCMT traffic (decode captured frames)", Run: run}
}

const usage = `usage: trawl cmt <subcommand> [flags] [args]

Tools for the MS-FSCMT protocol between multinode scheduler, node
schedulers and duplicate servers.

subcommands:
  decode [FILE]   print the messages of a capture of frames
`

func run(ctx context.Context, env *cli.Env, args []string) error {
	return cli.Group(ctx, env, "cmt", usage, map[string]func(context.Context, *cli.Env, []string) error{"decode": decode}, args)
}

func decode(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlagSet(env, "cmt decode", "cmt decode [--hex] [--max-frame N] [FILE]",
		"Read MS-FSCMT frames (a capture of one direction of a connection: frames back to back,\n"+
			"each a 4-byte big-endian length and a marshalled (message, priority) tuple) from FILE,\n"+
			"or standard input, and print each message by name with its fields. Messages with an\n"+
			"unknown command code or bad contents are printed as such and decoding goes on; a frame\n"+
			"that is cut short or over the size limit stops it (exit status 1).")
	hexIn := fs.Bool("hex", false, "the input is hexadecimal text (whitespace ignored)")
	maxFrame := fs.Int("max-frame", cmt.DefaultMaxFrame, "largest frame `bytes` accepted")
	if err := cli.ParseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		fmt.Fprintf(env.Stderr, "trawl cmt decode: at most one FILE\n")
		fs.Usage()
		return cli.ErrUsage
	}
	var in io.Reader = env.Stdin
	name := "standard input"
	if fs.NArg() == 1 && fs.Arg(0) != "-" {
		f, err := os.Open(fs.Arg(0))
		if err != nil {
			return err
		}
		defer f.Close()
		in, name = f, fs.Arg(0)
	}
	if *hexIn {
		var err error
		if in, err = FromHex(in, name); err != nil {
			return err
		}
	}
	return Dump(ctx, env.Stdout, in, name, *maxFrame)
}
