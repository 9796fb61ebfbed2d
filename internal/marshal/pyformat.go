package marshal

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// FormatPython returns v as a Python expression that evaluates to the same
// value under both Python 2 and Python 3 (eval with no names beyond the
// builtins), and that ast.literal_eval reads wherever the value allows:
//
//	None, True, False           as is
//	int, long                   decimal digits, no L suffix
//	float                       shortest repr that reads back exactly; 1e999
//	                            and -1e999 for the infinities, float('nan')
//	complex                     (1.5+2j); complex(re, im) when a part is NaN
//	                            or a signed zero, which (a+bj) cannot keep
//	str (bytes)                 b'...' with \t \n \r \\ \' and \xNN escapes
//	unicode                     u'...' with \xNN, \uNNNN, \UNNNNNNNN escapes
//	tuple                       (), (x,), (x, y)
//	list, dict                  [x, y], {k: v}
//	set                         {x, y}; set() when empty
//	frozenset                   frozenset({x, y}); frozenset() when empty
//	StopIteration, Ellipsis     the names StopIteration and Ellipsis
//
// ast.literal_eval reads everything but NaN, frozensets, StopIteration and
// Ellipsis in Python 3.9+, and no set in Python 2. ParsePython reads all
// of it back.
func FormatPython(v Value) string {
	return string(AppendPython(nil, v))
}

// AppendPython appends FormatPython(v) to dst.
func AppendPython(dst []byte, v Value) []byte {
	switch v := v.(type) {
	case None:
		return append(dst, "None"...)
	case Bool:
		if v {
			return append(dst, "True"...)
		}
		return append(dst, "False"...)
	case Int:
		return strconv.AppendInt(dst, int64(v), 10)
	case Long:
		if v.Int == nil {
			return append(dst, "<nil long>"...)
		}
		return v.Int.Append(dst, 10)
	case Float:
		return appendPyFloat(dst, float64(v))
	case Complex:
		re, im := real(v), imag(v)
		if math.IsNaN(re) || math.IsNaN(im) || (re == 0 && math.Signbit(re)) || (im == 0 && math.Signbit(im)) {
			dst = append(dst, "complex("...)
			dst = appendPyFloat(dst, re)
			dst = append(dst, ", "...)
			dst = appendPyFloat(dst, im)
			return append(dst, ')')
		}
		dst = append(dst, '(')
		dst = appendPyFloat(dst, re)
		if im >= 0 {
			dst = append(dst, '+')
		} else {
			dst = append(dst, '-')
		}
		dst = appendPyFloat(dst, math.Abs(im))
		return append(dst, "j)"...)
	case Bytes:
		return appendPyBytes(dst, v)
	case Unicode:
		return appendPyUnicode(dst, string(v))
	case Tuple:
		if len(v) == 1 {
			dst = AppendPython(append(dst, '('), v[0])
			return append(dst, ",)"...)
		}
		return appendPySeq(append(dst, '('), v, ')')
	case List:
		return appendPySeq(append(dst, '['), v, ']')
	case Dict:
		dst = append(dst, '{')
		for i, p := range v {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = AppendPython(dst, p.Key)
			dst = append(dst, ": "...)
			dst = AppendPython(dst, p.Value)
		}
		return append(dst, '}')
	case Set:
		if len(v) == 0 {
			return append(dst, "set()"...)
		}
		return appendPySeq(append(dst, '{'), v, '}')
	case FrozenSet:
		if len(v) == 0 {
			return append(dst, "frozenset()"...)
		}
		dst = appendPySeq(append(dst, "frozenset({"...), v, '}')
		return append(dst, ')')
	case StopIteration:
		return append(dst, "StopIteration"...)
	case Ellipsis:
		return append(dst, "Ellipsis"...)
	case nil:
		return append(dst, "<nil>"...)
	}
	return fmt.Appendf(dst, "<%T>", v)
}

func appendPySeq(dst []byte, elems []Value, end byte) []byte {
	for i, e := range elems {
		if i > 0 {
			dst = append(dst, ", "...)
		}
		dst = AppendPython(dst, e)
	}
	return append(dst, end)
}

// appendPyFloat writes f as Python's repr does (shortest digits that read
// back; exponent form below 1e-4 and from 1e16), with 1e999, -1e999 and
// float('nan') for the values that have no literal.
func appendPyFloat(dst []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "float('nan')"...)
	case math.IsInf(f, 1):
		return append(dst, "1e999"...)
	case math.IsInf(f, -1):
		return append(dst, "-1e999"...)
	}
	var buf [32]byte
	e := strconv.AppendFloat(buf[:0], f, 'e', -1, 64)
	i := strings.LastIndexByte(string(e), 'e')
	exp, _ := strconv.Atoi(string(e[i+1:]))
	if exp < -4 || exp >= 16 {
		return append(dst, e...)
	}
	start := len(dst)
	dst = strconv.AppendFloat(dst, f, 'f', -1, 64)
	if !strings.ContainsRune(string(dst[start:]), '.') {
		dst = append(dst, ".0"...)
	}
	return dst
}

const hexDigits = "0123456789abcdef"

func appendPyBytes(dst []byte, b []byte) []byte {
	dst = append(dst, "b'"...)
	for _, c := range b {
		switch {
		case c == '\\' || c == '\'':
			dst = append(dst, '\\', c)
		case c == '\t':
			dst = append(dst, `\t`...)
		case c == '\n':
			dst = append(dst, `\n`...)
		case c == '\r':
			dst = append(dst, `\r`...)
		case c < 0x20 || c >= 0x7F:
			dst = append(dst, '\\', 'x', hexDigits[c>>4], hexDigits[c&15])
		default:
			dst = append(dst, c)
		}
	}
	return append(dst, '\'')
}

func appendPyUnicode(dst []byte, s string) []byte {
	dst = append(dst, "u'"...)
	b := []byte(s)
	for len(b) > 0 {
		c, n := decodeWTF8(b)
		if n == 0 { // not UTF-8: cannot happen for a decoded Unicode
			c, n = utf8.RuneError, 1
		}
		b = b[n:]
		switch {
		case c == '\\' || c == '\'':
			dst = append(dst, '\\', byte(c))
		case c == '\t':
			dst = append(dst, `\t`...)
		case c == '\n':
			dst = append(dst, `\n`...)
		case c == '\r':
			dst = append(dst, `\r`...)
		case c < 0x20 || (c >= 0x7F && c < 0x100):
			dst = append(dst, '\\', 'x', hexDigits[c>>4], hexDigits[c&15])
		case c < 0x7F:
			dst = append(dst, byte(c))
		case c < 0x10000:
			dst = append(dst, '\\', 'u')
			for sh := 12; sh >= 0; sh -= 4 {
				dst = append(dst, hexDigits[(c>>sh)&15])
			}
		default:
			dst = append(dst, '\\', 'U')
			for sh := 28; sh >= 0; sh -= 4 {
				dst = append(dst, hexDigits[(c>>sh)&15])
			}
		}
	}
	return append(dst, '\'')
}
