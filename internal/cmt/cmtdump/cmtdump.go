// Package cmtdump prints captured MS-FSCMT traffic for people: each frame
// of a capture (one direction of a connection, frames back to back) with
// its offset, size and priority, and its message by name with every field,
// nested values indented, marshal dictionaries as Python literals
// (marshal.FormatPython). A message with an unknown command code or bad
// contents is printed as such and the dump goes on; a frame cut short or
// over the size limit ends it with an error. trawl cmt decode runs it.
package cmtdump

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"unicode"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/marshal"
)

// FromHex reads hexadecimal text (whitespace ignored) from in and returns
// the bytes it spells; name is used in errors.
func FromHex(in io.Reader, name string) (io.Reader, error) {
	text, err := io.ReadAll(in)
	if err != nil {
		return nil, err
	}
	text = bytes.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return -1
		}
		return r
	}, text)
	raw := make([]byte, hex.DecodedLen(len(text)))
	if _, err := hex.Decode(raw, text); err != nil {
		return nil, fmt.Errorf("%s: bad hex: %v", name, err)
	}
	return bytes.NewReader(raw), nil
}

// Dump prints the frames read from in on w until the end of in; name is
// used in errors.
func Dump(ctx context.Context, w io.Writer, in io.Reader, name string, maxFrame int) error {
	fr := cmt.NewFrameReader(in, maxFrame)
	dec := cmt.NewDecoder(marshal.Limits{})
	for n := 1; ; n++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		start := fr.Offset()
		body, err := fr.ReadFrame()
		if err == io.EOF {
			if n == 1 {
				fmt.Fprintf(w, "no frames\n")
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %v", name, err)
		}
		if n > 1 {
			fmt.Fprintln(w)
		}
		f, err := dec.Decode(body)
		var uce *cmt.UnknownCommandError
		switch {
		case errors.As(err, &uce):
			fmt.Fprintf(w, "frame %d at byte %d: %d bytes, priority %s\n", n, start, len(body), uce.Priority)
			fmt.Fprintf(w, "unknown command %d\n  %s\n", int32(uce.Code), marshal.FormatPython(uce.Dict))
		case err != nil:
			fmt.Fprintf(w, "frame %d at byte %d: %d bytes\n", n, start, len(body))
			fmt.Fprintf(w, "malformed: %v\n", err)
		default:
			fmt.Fprintf(w, "frame %d at byte %d: %d bytes, priority %s\n", n, start, len(body), f.Priority)
			fmt.Fprintf(w, "%s (%d) %s\n", f.Message.Code(), int32(f.Message.Code()), reflect.TypeOf(f.Message).Elem().Name())
			var b strings.Builder
			printFields(&b, reflect.ValueOf(f.Message).Elem(), "  ")
			fmt.Fprint(w, b.String())
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
