package main

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/trawl/trawl/internal/marshal"
)

func init() {
	register(&command{name: "marshal", summary: "convert pyfastmarshal (MS-FSWCU) data to and from Python literals", run: runMarshal})
}

// maxMarshalInput caps what trawl marshal reads from stdin.
const maxMarshalInput = 256 << 20

const marshalSummary = `Convert between pyfastmarshal (MS-FSWCU, CPython 2 marshal version 2) bytes
and Python literals.

subcommands:
  decode   read marshal bytes on stdin, print the value as a Python literal
  encode   read a Python literal on stdin, write its marshal bytes

Run "trawl marshal <subcommand> --help" for its flags.`

func runMarshal(ctx context.Context, env *cmdEnv, args []string) error {
	if len(args) == 0 {
		fmt.Fprintf(env.stderr, "usage: trawl marshal <decode|encode> [flags]\n\n%s\n", marshalSummary)
		return errUsage
	}
	switch args[0] {
	case "decode":
		return runMarshalDecode(env, args[1:])
	case "encode":
		return runMarshalEncode(env, args[1:])
	case "-h", "-help", "--help", "help":
		fmt.Fprintf(env.stderr, "usage: trawl marshal <decode|encode> [flags]\n\n%s\n", marshalSummary)
		return exitError{0}
	}
	fmt.Fprintf(env.stderr, "trawl marshal: unknown subcommand %q (want decode or encode)\n", args[0])
	return errUsage
}

func readInput(r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxMarshalInput+1))
	if err != nil {
		return nil, fmt.Errorf("reading stdin: %w", err)
	}
	if len(data) > maxMarshalInput {
		return nil, fmt.Errorf("input larger than %d bytes", maxMarshalInput)
	}
	return data, nil
}

func runMarshalDecode(env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "marshal decode", "marshal decode [--hex] [--all]",
		"Read marshal bytes on stdin and print the value as a Python literal that python2 and\n"+
			"python3 evaluate to the same value (ast.literal_eval reads most values; see the\n"+
			"marshal package). Bytes after the value are an error unless --all is given.")
	hexIn := fs.Bool("hex", false, "stdin holds hexadecimal digits (whitespace ignored), not raw bytes")
	all := fs.Bool("all", false, "decode a concatenation of values, printing one per line")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(env.stderr, "trawl marshal decode: unexpected argument %q\n", fs.Arg(0))
		return errUsage
	}
	data, err := readInput(env.stdin)
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
		fmt.Fprintln(env.stdout, marshal.FormatPython(v))
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
		fmt.Fprintln(env.stdout, marshal.FormatPython(v))
		off += n
	}
	return nil
}

func runMarshalEncode(env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "marshal encode", "marshal encode [--hex]",
		"Read a Python literal on stdin (the language trawl marshal decode prints: b'..' or '..'\n"+
			"for str, u'..' for unicode, ints, longs, floats, complex, tuples, lists, dicts, sets,\n"+
			"frozensets, None, True, False, Ellipsis, StopIteration) and write its marshal bytes.")
	hexOut := fs.Bool("hex", false, "write hexadecimal digits and a newline, not raw bytes")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(env.stderr, "trawl marshal encode: unexpected argument %q\n", fs.Arg(0))
		return errUsage
	}
	data, err := readInput(env.stdin)
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
		_, err = fmt.Fprintln(env.stdout, hex.EncodeToString(out))
	} else {
		_, err = env.stdout.Write(out)
	}
	return err
}
