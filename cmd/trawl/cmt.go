package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"strconv"
	"strings"
	"unicode"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/marshal"
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
		text, err := io.ReadAll(in)
		if err != nil {
			return err
		}
		text = bytes.Map(func(r rune) rune {
			if unicode.IsSpace(r) {
				return -1
			}
			return r
		}, text)
		raw := make([]byte, hex.DecodedLen(len(text)))
		if _, err := hex.Decode(raw, text); err != nil {
			return fmt.Errorf("%s: bad hex: %v", name, err)
		}
		in = bytes.NewReader(raw)
	}

	fr := cmt.NewFrameReader(in, *maxFrame)
	dec := cmt.NewDecoder(marshal.Limits{})
	for n := 1; ; n++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		start := fr.Offset()
		body, err := fr.ReadFrame()
		if err == io.EOF {
			if n == 1 {
				fmt.Fprintf(env.stdout, "no frames\n")
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %v", name, err)
		}
		if n > 1 {
			fmt.Fprintln(env.stdout)
		}
		f, err := dec.Decode(body)
		var uce *cmt.UnknownCommandError
		switch {
		case errors.As(err, &uce):
			fmt.Fprintf(env.stdout, "frame %d at byte %d: %d bytes, priority %s\n", n, start, len(body), uce.Priority)
			fmt.Fprintf(env.stdout, "unknown command %d\n  %s\n", int32(uce.Code), marshal.FormatPython(uce.Dict))
		case err != nil:
			fmt.Fprintf(env.stdout, "frame %d at byte %d: %d bytes\n", n, start, len(body))
			fmt.Fprintf(env.stdout, "malformed: %v\n", err)
		default:
			fmt.Fprintf(env.stdout, "frame %d at byte %d: %d bytes, priority %s\n", n, start, len(body), f.Priority)
			fmt.Fprintf(env.stdout, "%s (%d) %s\n", f.Message.Code(), int32(f.Message.Code()), reflect.TypeOf(f.Message).Elem().Name())
			var b strings.Builder
			printFields(&b, reflect.ValueOf(f.Message).Elem(), "  ")
			fmt.Fprint(env.stdout, b.String())
		}
	}
}

var (
	stringerType = reflect.TypeFor[fmt.Stringer]()
	dictType     = reflect.TypeFor[marshal.Dict]()
	uriType      = reflect.TypeFor[cmt.URIStructure]()
	extraType    = reflect.TypeFor[cmt.ExtraItem]()
)

// noneIfNil names the slice fields where nil stands for None on the wire;
// any other nil slice is an empty list.
var noneIfNil = map[string]bool{"Addrs": true, "Destinations": true}

// printFields writes the fields of struct v, one per line, nested values
// indented below their name.
func printFields(b *strings.Builder, v reflect.Value, indent string) {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		fv := v.Field(i)
		switch {
		case t == uriType && f.Name == "Port" && fv.Int() == cmt.NoPort:
			fmt.Fprintf(b, "%s%s: None\n", indent, f.Name)
		case fv.Kind() == reflect.Slice && fv.IsNil() && !noneIfNil[f.Name]:
			fmt.Fprintf(b, "%s%s: []\n", indent, f.Name)
		default:
			printValue(b, f.Name, fv, indent)
		}
	}
}

func printValue(b *strings.Builder, name string, v reflect.Value, indent string) {
	if s, ok := scalarText(v); ok {
		fmt.Fprintf(b, "%s%s: %s\n", indent, name, s)
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		fmt.Fprintf(b, "%s%s:\n", indent, name)
		printFields(b, v, indent+"  ")
	case reflect.Slice:
		if v.IsNil() {
			fmt.Fprintf(b, "%s%s: None\n", indent, name)
			return
		}
		if v.Len() == 0 {
			fmt.Fprintf(b, "%s%s: []\n", indent, name)
			return
		}
		fmt.Fprintf(b, "%s%s:\n", indent, name)
		for i := range v.Len() {
			printValue(b, "["+strconv.Itoa(i)+"]", v.Index(i), indent+"  ")
		}
	default:
		fmt.Fprintf(b, "%s%s: %v\n", indent, name, v.Interface())
	}
}

// scalarText returns the one-line text of v when it has one.
func scalarText(v reflect.Value) (string, bool) {
	switch v.Type() {
	case dictType:
		return marshal.FormatPython(v.Interface().(marshal.Dict)), true
	case extraType:
		x := v.Interface().(cmt.ExtraItem)
		return x.Key.String() + ": " + x.Value.String(), true
	}
	if v.Type().Implements(stringerType) {
		s := v.Interface().(fmt.Stringer).String()
		switch v.Kind() {
		case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			if n := strconv.FormatInt(v.Int(), 10); n != s && !strings.HasPrefix(s, n+" ") {
				return n + " (" + s + ")", true
			}
		case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			if n := fmt.Sprintf("0x%x", v.Uint()); s != "0" {
				return n + " (" + s + ")", true
			}
		}
		return s, true
	}
	switch v.Kind() {
	case reflect.String:
		return strconv.Quote(v.String()), true
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return fmt.Sprint(v.Interface()), true
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.String && !v.IsNil() {
			parts := make([]string, v.Len())
			for i := range parts {
				parts[i] = strconv.Quote(v.Index(i).String())
			}
			return "[" + strings.Join(parts, ", ") + "]", true
		}
	}
	return "", false
}
