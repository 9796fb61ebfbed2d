package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/cmt/cmtdump"
)

func init() {
	register(&command{name: "cmt", summary: "inspect MS-FSCMT traffic (decode captured frames)", run: runCmt})
}

const cmtUsage = `usage: trawl cmt <subcommand> [flags] [args]

Tools for the MS-FSCMT protocol between multinode scheduler, node
schedulers and duplicate servers.

subcommands:
  decode [FILE]   print the messages of a capture of frames
`

func runCmt(ctx context.Context, env *cmdEnv, args []string) error {
	if len(args) == 0 {
		fmt.Fprint(env.stderr, cmtUsage)
		return errUsage
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(env.stdout, cmtUsage)
		return nil
	case "decode":
		return runCmtDecode(ctx, env, args[1:])
	}
	fmt.Fprintf(env.stderr, "trawl cmt: unknown subcommand %q\n\n%s", args[0], cmtUsage)
	return errUsage
}

func runCmtDecode(ctx context.Context, env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "cmt decode", "cmt decode [--hex] [--max-frame N] [FILE]",
		"Read MS-FSCMT frames (a capture of one direction of a connection: frames back to back,\n"+
			"each a 4-byte big-endian length and a marshalled (message, priority) tuple) from FILE,\n"+
			"or standard input, and print each message by name with its fields. Messages with an\n"+
			"unknown command code or bad contents are printed as such and decoding goes on; a frame\n"+
			"that is cut short or over the size limit stops it (exit status 1).")
	hexIn := fs.Bool("hex", false, "the input is hexadecimal text (whitespace ignored)")
	maxFrame := fs.Int("max-frame", cmt.DefaultMaxFrame, "largest frame `bytes` accepted")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		fmt.Fprintf(env.stderr, "trawl cmt decode: at most one FILE\n")
		fs.Usage()
		return errUsage
	}
	var in io.Reader = env.stdin
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
		if in, err = cmtdump.FromHex(in, name); err != nil {
			return err
		}
	}
	return cmtdump.Dump(ctx, env.stdout, in, name, *maxFrame)
}
