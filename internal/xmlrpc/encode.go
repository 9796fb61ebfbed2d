package xmlrpc

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"
	"unicode/utf8"
)

const header = "<?xml version=\"1.0\"?>\n"

// maxEncodeDepth bounds the nesting the encoder follows, so that a value
// the decoder would refuse is not written either.
const maxEncodeDepth = DefaultMaxDepth

// EncodeCall returns the <methodCall> of method with params.
func EncodeCall(method string, params ...Value) ([]byte, error) {
	if method == "" {
		return nil, errors.New("xmlrpc: empty method name")
	}
	b := make([]byte, 0, 256)
	b = append(b, header...)
	b = append(b, "<methodCall>\n<methodName>"...)
	var err error
	if b, err = appendText(b, method); err != nil {
		return nil, fmt.Errorf("xmlrpc: method name: %w", err)
	}
	b = append(b, "</methodName>\n<params>\n"...)
	for i, p := range params {
		b = append(b, "<param>"...)
		if b, err = AppendValue(b, p); err != nil {
			return nil, fmt.Errorf("xmlrpc: param %d: %w", i+1, err)
		}
		b = append(b, "</param>\n"...)
	}
	b = append(b, "</params>\n</methodCall>\n"...)
	return b, nil
}

// EncodeResponse returns the <methodResponse> carrying v.
func EncodeResponse(v Value) ([]byte, error) {
	b := make([]byte, 0, 256)
	b = append(b, header...)
	b = append(b, "<methodResponse>\n<params>\n<param>"...)
	var err error
	if b, err = AppendValue(b, v); err != nil {
		return nil, fmt.Errorf("xmlrpc: response: %w", err)
	}
	b = append(b, "</param>\n</params>\n</methodResponse>\n"...)
	return b, nil
}

// EncodeFault returns the fault <methodResponse> of f. A fault string XML
// cannot carry has the offending characters replaced by U+FFFD.
func EncodeFault(f *Fault) []byte {
	msg := f.String
	if _, err := appendText(nil, msg); err != nil {
		msg = sanitize(msg)
	}
	b, err := EncodeResponseFault(f.Code, msg)
	if err != nil { // cannot happen: msg is clean
		b, _ = EncodeResponseFault(f.Code, "unencodable fault")
	}
	return b
}

// EncodeResponseFault returns a fault response with code and msg.
func EncodeResponseFault(code int, msg string) ([]byte, error) {
	b := make([]byte, 0, 256+len(msg))
	b = append(b, header...)
	b = append(b, "<methodResponse>\n<fault>\n"...)
	var err error
	b, err = AppendValue(b, Struct{
		{Name: "faultCode", Value: Int(code)},
		{Name: "faultString", Value: String(msg)},
	})
	if err != nil {
		return nil, err
	}
	b = append(b, "\n</fault>\n</methodResponse>\n"...)
	return b, nil
}

func sanitize(s string) string {
	out := make([]rune, 0, len(s))
	for i, w := 0, 0; i < len(s); i += w {
		r, n := utf8.DecodeRuneInString(s[i:])
		w = n
		if (r == utf8.RuneError && n == 1) || !xmlChar(r) {
			r = utf8.RuneError
		}
		out = append(out, r)
	}
	return string(out)
}

// AppendValue appends <value>...</value> for v to dst.
func AppendValue(dst []byte, v Value) ([]byte, error) {
	return appendValue(dst, v, 1)
}

func appendValue(b []byte, v Value, depth int) ([]byte, error) {
	if depth > maxEncodeDepth {
		return b, fmt.Errorf("values nested deeper than %d", maxEncodeDepth)
	}
	var err error
	b = append(b, "<value>"...)
	switch x := v.(type) {
	case Int:
		if x >= math.MinInt32 && x <= math.MaxInt32 {
			b = append(b, "<int>"...)
			b = strconv.AppendInt(b, int64(x), 10)
			b = append(b, "</int>"...)
		} else {
			b = append(b, "<i8>"...)
			b = strconv.AppendInt(b, int64(x), 10)
			b = append(b, "</i8>"...)
		}
	case Bool:
		if x {
			b = append(b, "<boolean>1</boolean>"...)
		} else {
			b = append(b, "<boolean>0</boolean>"...)
		}
	case String:
		b = append(b, "<string>"...)
		if b, err = appendText(b, string(x)); err != nil {
			return b, err
		}
		b = append(b, "</string>"...)
	case Double:
		f := float64(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return b, fmt.Errorf("double %v cannot be written in XML-RPC", f)
		}
		b = append(b, "<double>"...)
		b = AppendDouble(b, f)
		b = append(b, "</double>"...)
	case DateTime:
		b = append(b, "<dateTime.iso8601>"...)
		b = time.Time(x).AppendFormat(b, "20060102T15:04:05")
		b = append(b, "</dateTime.iso8601>"...)
	case Base64:
		b = append(b, "<base64>"...)
		n := base64.StdEncoding.EncodedLen(len(x))
		b = append(b, make([]byte, n)...)
		base64.StdEncoding.Encode(b[len(b)-n:], x)
		b = append(b, "</base64>"...)
	case Array:
		b = append(b, "<array><data>\n"...)
		for _, e := range x {
			if b, err = appendValue(b, e, depth+1); err != nil {
				return b, err
			}
			b = append(b, '\n')
		}
		b = append(b, "</data></array>"...)
	case Struct:
		b = append(b, "<struct>\n"...)
		for _, m := range x {
			b = append(b, "<member>\n<name>"...)
			if b, err = appendText(b, m.Name); err != nil {
				return b, fmt.Errorf("member name: %w", err)
			}
			b = append(b, "</name>\n"...)
			if b, err = appendValue(b, m.Value, depth+1); err != nil {
				return b, fmt.Errorf("member %s: %w", m.Name, err)
			}
			b = append(b, "\n</member>\n"...)
		}
		b = append(b, "</struct>"...)
	case Nil:
		b = append(b, "<nil/>"...)
	case nil:
		return b, errors.New("nil Value")
	default:
		return b, fmt.Errorf("unknown value type %T", v)
	}
	b = append(b, "</value>"...)
	return b, nil
}

// AppendDouble appends f as Python's repr writes a float: the shortest
// digits that read back exactly, always with a decimal point or an
// exponent (40.0, 0.1, 1e+16, 1.5e-05).
func AppendDouble(b []byte, f float64) []byte {
	a := math.Abs(f)
	if a == 0 || (a >= 1e-4 && a < 1e16) {
		start := len(b)
		b = strconv.AppendFloat(b, f, 'f', -1, 64)
		for _, c := range b[start:] {
			if c == '.' {
				return b
			}
		}
		return append(b, ".0"...)
	}
	return strconv.AppendFloat(b, f, 'e', -1, 64)
}

// xmlChar reports whether XML 1.0 allows r in a document.
func xmlChar(r rune) bool {
	return r == 0x09 || r == 0x0A || r == 0x0D ||
		(r >= 0x20 && r <= 0xD7FF) || (r >= 0xE000 && r <= 0xFFFD) ||
		(r >= 0x10000 && r <= 0x10FFFF)
}

// appendText appends s escaped for XML character data. \r is written as a
// character reference, since a parser would turn a raw one into \n.
func appendText(b []byte, s string) ([]byte, error) {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '&':
				b = append(b, "&amp;"...)
			case c == '<':
				b = append(b, "&lt;"...)
			case c == '>':
				b = append(b, "&gt;"...)
			case c == '\r':
				b = append(b, "&#13;"...)
			case c == '\t' || c == '\n' || c >= 0x20:
				b = append(b, c)
			default:
				return b, fmt.Errorf("character %U cannot be written in XML", c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			return b, fmt.Errorf("invalid UTF-8 at byte %d", i)
		}
		if !xmlChar(r) {
			return b, fmt.Errorf("character %U cannot be written in XML", r)
		}
		b = append(b, s[i:i+n]...)
		i += n
	}
	return b, nil
}
