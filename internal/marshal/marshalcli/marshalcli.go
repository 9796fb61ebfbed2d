// Package marshalcli is the trawl marshal command: it converts between
// pyfastmarshal (MS-FSWCU) bytes and Python literals with internal/marshal.
package marshalcli

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/trawl/trawl/internal/cli"
	"github.com/trawl/trawl/internal/marshal"
)

// Command is trawl marshal.
func Command() cli.Command {
	return cli.Command{Name: "marshal", Summary: "convert pyfastmarshal (MS-FSWCU) data to and from Python literals", Run: run}
}

// maxInput caps what trawl marshal reads from stdin.
const maxInput = 256 << 20

const usage = `usage: trawl marshal <decode|encode> [flags]

Convert between pyfastmarshal (MS-FSWCU, CPython 2 marshal version 2) bytes
and Python literals.

subcommands:
  decode   read marshal bytes on stdin, print the value as a Python literal
  encode   read a Python literal on stdin, write its marshal bytes

Run "trawl marshal <subcommand> --help" for its flags.
`

func run(ctx context.Context, env *cli.Env, args []string) error {
	return cli.Group(ctx, env, "marshal", usage, map[string]func(context.Context, *cli.Env, []string) error{
		"decode": decode, "encode": encode}, args)
}

func readInput(r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxInput+1))
	if err != nil {
		return nil, fmt.Errorf("reading stdin: %w", err)
	}
	if len(data) > maxInput {
		return nil, fmt.Errorf("input larger than %d bytes", maxInput)
	}
	return data, nil
}

func decode(_ context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlagSet(env, "marshal decode", "marshal decode [--hex] [--all]",
		"Read marshal bytes on stdin and print the value as a Python literal that python2 and\n"+
			"python3 evaluate to the same value (ast.literal_eval reads most values; see the\n"+
			"marshal package). Bytes after the value are an error unless --all is given.")
	hexIn := fs.Bool("hex", false, "stdin holds hexadecimal digits (whitespace ignored), not raw bytes")
	all := fs.Bool("all", false, "decode a concatenation of values, printing one per line")
	if err := cli.ParseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(env.Stderr, "trawl marshal decode: unexpected argument %q\n", fs.Arg(0))
		return cli.ErrUsage
	}
	data, err := readInput(env.Stdin)
	if err != nil {
		return err
	}
	if *hexIn {
		if data, err = hex.DecodeString(strings.Join(strings.Fields(string(data)), "")); err != nil {
			return fmt.Errorf("bad hex input: %w", err)
		}
	}
	if !*all {
		v, err := marshal.Decode(data)
		if err != nil {
			return fmt.Errorf("decode: %w", err)
		}
		fmt.Fprintln(env.Stdout, marshal.FormatPython(v))
		return nil
	}
	if len(data) == 0 {
		return errors.New("decode: empty input")
	}
	for off := 0; off < len(data); {
		v, n, err := marshal.DecodeLimits(data[off:], marshal.DefaultLimits())
		if err != nil {
			var de *marshal.DecodeError
			if errors.As(err, &de) {
				de.Offset += off
			}
			return fmt.Errorf("decode: %w", err)
		}
		fmt.Fprintln(env.Stdout, marshal.FormatPython(v))
		off += n
	}
	return nil
}

func encode(_ context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlagSet(env, "marshal encode", "marshal encode [--hex]",
		"Read a Python literal on stdin (the language trawl marshal decode prints: b'..' or '..'\n"+
			"for str, u'..' for unicode, ints, longs, floats, complex, tuples, lists, dicts, sets,\n"+
			"frozensets, None, True, False, Ellipsis, StopIteration) and write its marshal bytes.")
	hexOut := fs.Bool("hex", false, "write hexadecimal digits and a newline, not raw bytes")
	if err := cli.ParseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(env.Stderr, "trawl marshal encode: unexpected argument %q\n", fs.Arg(0))
		return cli.ErrUsage
	}
	data, err := readInput(env.Stdin)
	if err != nil {
		return err
	}
	v, err := marshal.ParsePython(string(data))
	if err != nil {
		return fmt.Errorf("encode: %w", err)
	}
	out, err := marshal.Encode(v)
	if err != nil {
		return fmt.Errorf("encode: %w", err)
	}
	if *hexOut {
		_, err = fmt.Fprintln(env.Stdout, hex.EncodeToString(out))
	} else {
		_, err = env.Stdout.Write(out)
	}
	return err
}
