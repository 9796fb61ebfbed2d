package marshal

import (
	"errors"
	"fmt"
	"math"
	"math/big"
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

// ParsePython parses the Python expression language FormatPython writes,
// and a little more: strings in single or double quotes with prefixes b, u
// or none (a plain '...' is a str, as in Python 2), Python's escapes
// (\\ \' \" \a \b \f \n \r \t \v, octal, \xNN; \uNNNN and \UNNNNNNNN in
// unicode), integers in decimal, 0x, 0o and 0b with an optional L suffix
// and sign, floats, imaginary numbers and (a+bj), tuples, lists, dicts,
// sets, set([...]) and frozenset([...]) (with a list, tuple or set inside),
// float('nan'), float('inf'), complex(re, im), ... and the names None,
// True, False, Ellipsis and StopIteration. Errors name the byte offset.
func ParsePython(s string) (Value, error) {
	p := pyParser{s: s}
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i != len(p.s) {
		return nil, p.errorf("unexpected %s after the value", p.what())
	}
	return v, nil
}

type pyParser struct {
	s string
	i int
}

var errParse = errors.New("marshal: bad Python literal")

func (p *pyParser) errorf(format string, args ...any) error {
	return fmt.Errorf("%w: %s at byte %d", errParse, fmt.Sprintf(format, args...), p.i)
}

func (p *pyParser) what() string {
	if p.i >= len(p.s) {
		return "end of input"
	}
	c, _ := utf8.DecodeRuneInString(p.s[p.i:])
	return strconv.QuoteRune(c)
}

func (p *pyParser) space() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r', '\f', '\v':
			p.i++
		default:
			return
		}
	}
}

// eat consumes c (after spaces) and reports whether it was there.
func (p *pyParser) eat(c byte) bool {
	p.space()
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *pyParser) expect(c byte) error {
	if !p.eat(c) {
		return p.errorf("expected %q, found %s", c, p.what())
	}
	return nil
}

func isIdentStart(c byte) bool {
	return c == '_' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
}

func (p *pyParser) ident() string {
	start := p.i
	for p.i < len(p.s) && (isIdentStart(p.s[p.i]) || isDigit(p.s[p.i])) {
		p.i++
	}
	return p.s[start:p.i]
}

// maxParseDepth keeps every parsed value encodable: a dict one level
// short of CPython's limit still loads.
const maxParseDepth = DefaultMaxDepth - 1

func (p *pyParser) value(depth int) (Value, error) {
	depth++
	if depth > maxParseDepth {
		return nil, p.errorf("nesting deeper than %d levels", maxParseDepth)
	}
	p.space()
	if p.i >= len(p.s) {
		return nil, p.errorf("expected a value, found end of input")
	}
	c := p.s[p.i]
	switch {
	case c == '(':
		return p.paren(depth)
	case c == '[':
		p.i++
		elems, err := p.items(depth, ']')
		if err != nil {
			return nil, err
		}
		return List(elems), nil
	case c == '{':
		return p.brace(depth)
	case c == '\'' || c == '"':
		return p.str(false, false)
	case c == '-' || c == '+' || c == '.' || isDigit(c):
		if strings.HasPrefix(p.s[p.i:], "...") {
			p.i += 3
			return Ellipsis{}, nil
		}
		return p.number()
	case isIdentStart(c):
		start := p.i
		name := p.ident()
		if p.i < len(p.s) && (p.s[p.i] == '\'' || p.s[p.i] == '"') {
			switch strings.ToLower(name) {
			case "b":
				return p.str(true, false)
			case "u":
				return p.str(false, true)
			}
			p.i = start
			return nil, p.errorf("unknown string prefix %q", name)
		}
		switch name {
		case "None":
			return None{}, nil
		case "True":
			return Bool(true), nil
		case "False":
			return Bool(false), nil
		case "Ellipsis":
			return Ellipsis{}, nil
		case "StopIteration":
			return StopIteration{}, nil
		case "set", "frozenset":
			return p.setCall(depth, name)
		case "float":
			return p.floatCall()
		case "complex":
			return p.complexCall()
		}
		p.i = start
		return nil, p.errorf("unknown name %q", name)
	}
	return nil, p.errorf("unexpected %s", p.what())
}

// items reads comma-separated values up to end, allowing a trailing comma.
func (p *pyParser) items(depth int, end byte) ([]Value, error) {
	var elems []Value
	for {
		if p.eat(end) {
			return elems, nil
		}
		v, err := p.value(depth)
		if err != nil {
			return nil, err
		}
		elems = append(elems, v)
		if p.eat(end) {
			return elems, nil
		}
		if err := p.expect(','); err != nil {
			return nil, err
		}
	}
}

// paren reads (), (x), (x,), (x, y...) and (a+bj).
func (p *pyParser) paren(depth int) (Value, error) {
	p.i++ // (
	if p.eat(')') {
		return Tuple{}, nil
	}
	first, err := p.value(depth)
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i < len(p.s) && (p.s[p.i] == '+' || p.s[p.i] == '-') {
		v, err := p.complexSum(first)
		if err != nil {
			return nil, err
		}
		if err := p.expect(')'); err != nil {
			return nil, err
		}
		return v, nil
	}
	if p.eat(')') {
		return first, nil
	}
	if err := p.expect(','); err != nil {
		return nil, err
	}
	rest, err := p.items(depth, ')')
	if err != nil {
		return nil, err
	}
	return append(Tuple{first}, rest...), nil
}

// complexSum reads "+ bj" or "- bj" after the real part re.
func (p *pyParser) complexSum(re Value) (Value, error) {
	var r float64
	switch re := re.(type) {
	case Int:
		r = float64(re)
	case Long:
		r, _ = new(big.Float).SetInt(re.Int).Float64()
	case Float:
		r = float64(re)
	default:
		return nil, p.errorf("only a number may be added to an imaginary number")
	}
	neg := p.s[p.i] == '-'
	p.i++
	p.space()
	im, err := p.number()
	if err != nil {
		return nil, err
	}
	c, ok := im.(Complex)
	if !ok || real(c) != 0 {
		return nil, p.errorf("expected an imaginary number after the sign")
	}
	i := imag(c)
	if neg {
		i = -i
	}
	return Complex(complex(r, i)), nil
}

// brace reads {}, {k: v, ...} and {x, y, ...}.
func (p *pyParser) brace(depth int) (Value, error) {
	p.i++ // {
	if p.eat('}') {
		return Dict{}, nil
	}
	first, err := p.value(depth)
	if err != nil {
		return nil, err
	}
	if !p.eat(':') {
		elems := Set{first}
		if !p.eat('}') {
			if err := p.expect(','); err != nil {
				return nil, err
			}
			rest, err := p.items(depth, '}')
			if err != nil {
				return nil, err
			}
			elems = append(elems, rest...)
		}
		for _, e := range elems {
			if !hashable(e) {
				return nil, p.errorf("unhashable set member %s", e.Kind())
			}
		}
		return elems, nil
	}
	d := Dict{}
	key := first
	for {
		v, err := p.value(depth)
		if err != nil {
			return nil, err
		}
		if !hashable(key) {
			return nil, p.errorf("unhashable dict key %s", key.Kind())
		}
		d = append(d, Pair{key, v})
		if p.eat('}') {
			return d, nil
		}
		if err := p.expect(','); err != nil {
			return nil, err
		}
		if p.eat('}') {
			return d, nil
		}
		if key, err = p.value(depth); err != nil {
			return nil, err
		}
		if err := p.expect(':'); err != nil {
			return nil, err
		}
	}
}

// setCall reads the argument list of set(...) or frozenset(...).
func (p *pyParser) setCall(depth int, name string) (Value, error) {
	if err := p.expect('('); err != nil {
		return nil, err
	}
	var elems []Value
	if !p.eat(')') {
		arg, err := p.value(depth)
		if err != nil {
			return nil, err
		}
		switch arg := arg.(type) {
		case List:
			elems = arg
		case Tuple:
			elems = arg
		case Set:
			elems = arg
		case FrozenSet:
			elems = arg
		case Dict:
			if len(arg) != 0 {
				return nil, p.errorf("%s() of a dict is not supported", name)
			}
		default:
			return nil, p.errorf("%s() takes a list, tuple or set literal", name)
		}
		if err := p.expect(')'); err != nil {
			return nil, err
		}
	}
	if elems == nil {
		elems = []Value{}
	}
	for _, e := range elems {
		if !hashable(e) {
			return nil, p.errorf("unhashable %s member %s", name, e.Kind())
		}
	}
	if name == "set" {
		return Set(elems), nil
	}
	return FrozenSet(elems), nil
}

// floatCall reads float('nan'), float('inf'), float('-inf') or float of
// any float text.
func (p *pyParser) floatCall() (Value, error) {
	if err := p.expect('('); err != nil {
		return nil, err
	}
	p.space()
	var f float64
	if p.i < len(p.s) && (p.s[p.i] == '\'' || p.s[p.i] == '"') {
		sv, err := p.str(true, false)
		if err != nil {
			return nil, err
		}
		text := strings.TrimSpace(string(sv.(Bytes)))
		var ok bool
		if f, ok = parseReprFloat([]byte(text)); !ok {
			return nil, p.errorf("bad float text %q", text)
		}
	} else {
		v, err := p.number()
		if err != nil {
			return nil, err
		}
		if f, err = p.toFloat(v); err != nil {
			return nil, err
		}
	}
	if err := p.expect(')'); err != nil {
		return nil, err
	}
	return Float(f), nil
}

func (p *pyParser) toFloat(v Value) (float64, error) {
	switch v := v.(type) {
	case Int:
		return float64(v), nil
	case Long:
		f, _ := new(big.Float).SetInt(v.Int).Float64()
		return f, nil
	case Float:
		return float64(v), nil
	}
	return 0, p.errorf("expected a real number")
}

// complexCall reads complex(re, im) whose arguments are real numbers or
// float(...) calls.
func (p *pyParser) complexCall() (Value, error) {
	if err := p.expect('('); err != nil {
		return nil, err
	}
	var parts [2]float64
	for k := range parts {
		if k == 1 {
			if err := p.expect(','); err != nil {
				return nil, err
			}
		}
		p.space()
		var v Value
		var err error
		if strings.HasPrefix(p.s[p.i:], "float") {
			p.i += len("float")
			v, err = p.floatCall()
		} else {
			v, err = p.number()
		}
		if err != nil {
			return nil, err
		}
		if parts[k], err = p.toFloat(v); err != nil {
			return nil, err
		}
	}
	if err := p.expect(')'); err != nil {
		return nil, err
	}
	return Complex(complex(parts[0], parts[1])), nil
}

// number reads a signed int, long, float or imaginary literal.
func (p *pyParser) number() (Value, error) {
	p.space()
	neg := false
	for p.i < len(p.s) && (p.s[p.i] == '-' || p.s[p.i] == '+') {
		if p.s[p.i] == '-' {
			neg = !neg
		}
		p.i++
		p.space()
	}
	start := p.i
	if p.i >= len(p.s) || !(isDigit(p.s[p.i]) || p.s[p.i] == '.') {
		return nil, p.errorf("expected a number, found %s", p.what())
	}
	// Integers with a base prefix.
	if p.s[p.i] == '0' && p.i+1 < len(p.s) {
		base := 0
		switch p.s[p.i+1] {
		case 'x', 'X':
			base = 16
		case 'o', 'O':
			base = 8
		case 'b', 'B':
			base = 2
		}
		if base != 0 {
			p.i += 2
			ds := p.i
			for p.i < len(p.s) && isHexDigit(p.s[p.i]) {
				p.i++
			}
			return p.intValue(p.s[ds:p.i], base, neg)
		}
	}
	for p.i < len(p.s) && isDigit(p.s[p.i]) {
		p.i++
	}
	isFloat := false
	if p.i < len(p.s) && p.s[p.i] == '.' {
		isFloat = true
		p.i++
		for p.i < len(p.s) && isDigit(p.s[p.i]) {
			p.i++
		}
	}
	if p.s[start:p.i] == "." {
		p.i = start
		return nil, p.errorf("expected a number")
	}
	if p.i < len(p.s) && (p.s[p.i] == 'e' || p.s[p.i] == 'E') {
		isFloat = true
		p.i++
		if p.i < len(p.s) && (p.s[p.i] == '+' || p.s[p.i] == '-') {
			p.i++
		}
		es := p.i
		for p.i < len(p.s) && isDigit(p.s[p.i]) {
			p.i++
		}
		if es == p.i {
			return nil, p.errorf("exponent without digits")
		}
	}
	text := p.s[start:p.i]
	if p.i < len(p.s) && (p.s[p.i] == 'j' || p.s[p.i] == 'J') {
		p.i++
		f, ok := parseReprFloat([]byte(text))
		if !ok {
			return nil, p.errorf("bad imaginary number %q", text)
		}
		if neg {
			f = -f
		}
		return Complex(complex(0, f)), nil
	}
	if isFloat {
		f, ok := parseReprFloat([]byte(text))
		if !ok {
			return nil, p.errorf("bad float %q", text)
		}
		if neg {
			f = -f
		}
		return Float(f), nil
	}
	if len(text) > 1 && text[0] == '0' && strings.Trim(text, "0") != "" {
		// Python 2 reads 0777 as octal; Python 3 refuses it.
		return p.intValue(text[1:], 8, neg)
	}
	return p.intValue(text, 10, neg)
}

func isHexDigit(c byte) bool {
	return isDigit(c) || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F')
}

// intValue converts digits in base to an Int or Long, consuming an L
// suffix.
func (p *pyParser) intValue(digits string, base int, neg bool) (Value, error) {
	if p.i < len(p.s) && (p.s[p.i] == 'l' || p.s[p.i] == 'L') {
		p.i++
	}
	if digits == "" {
		return nil, p.errorf("number without digits")
	}
	if len(digits) > 100000 {
		return nil, p.errorf("integer literal of %d digits is too long", len(digits))
	}
	b, ok := new(big.Int).SetString(digits, base)
	if !ok {
		return nil, p.errorf("bad base-%d integer %q", base, digits)
	}
	if neg {
		b.Neg(b)
	}
	if b.IsInt64() {
		return Int(b.Int64()), nil
	}
	return Long{b}, nil
}

// str reads a quoted string whose prefix has been consumed; bytes forces a
// str, unicode a unicode; neither gives a str.
func (p *pyParser) str(bytesOnly, unicode bool) (Value, error) {
	start := p.i
	q := p.s[p.i]
	triple := strings.HasPrefix(p.s[p.i:], strings.Repeat(string(q), 3))
	if triple {
		p.i += 3
	} else {
		p.i++
	}
	var out []byte
	for {
		if p.i >= len(p.s) {
			p.i = start
			return nil, p.errorf("unterminated string")
		}
		c := p.s[p.i]
		if c == q {
			if !triple {
				p.i++
				break
			}
			if strings.HasPrefix(p.s[p.i:], strings.Repeat(string(q), 3)) {
				p.i += 3
				break
			}
		}
		if c == '\n' && !triple {
			return nil, p.errorf("newline inside a string")
		}
		if c != '\\' {
			if c >= utf8.RuneSelf {
				if !unicode {
					return nil, p.errorf("non-ASCII character in a byte string")
				}
				r, n := utf8.DecodeRuneInString(p.s[p.i:])
				if r == utf8.RuneError && n <= 1 {
					return nil, p.errorf("invalid UTF-8 in a string")
				}
				out = append(out, p.s[p.i:p.i+n]...)
				p.i += n
				continue
			}
			out = append(out, c)
			p.i++
			continue
		}
		// An escape.
		p.i++
		if p.i >= len(p.s) {
			return nil, p.errorf("unterminated string")
		}
		e := p.s[p.i]
		p.i++
		switch e {
		case '\n':
		case '\\', '\'', '"':
			out = append(out, e)
		case 'a':
			out = append(out, '\a')
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'v':
			out = append(out, '\v')
		case '0', '1', '2', '3', '4', '5', '6', '7':
			v := rune(e - '0')
			for k := 0; k < 2 && p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '7'; k++ {
				v = v*8 + rune(p.s[p.i]-'0')
				p.i++
			}
			switch {
			case unicode:
				out = appendWTF8(out, v)
			case v > 0377:
				return nil, p.errorf("octal escape beyond \\377 in a byte string")
			default:
				out = append(out, byte(v))
			}
		case 'x', 'u', 'U':
			n := 2
			switch e {
			case 'u':
				n = 4
			case 'U':
				n = 8
			}
			if e != 'x' && !unicode {
				out = append(out, '\\', e)
				continue
			}
			if len(p.s)-p.i < n {
				return nil, p.errorf("truncated \\%c escape", e)
			}
			v, err := strconv.ParseUint(p.s[p.i:p.i+n], 16, 32)
			if err != nil || !isHexString(p.s[p.i:p.i+n]) {
				return nil, p.errorf("bad \\%c escape", e)
			}
			p.i += n
			switch {
			case !unicode:
				out = append(out, byte(v))
			case v > utf8.MaxRune:
				return nil, p.errorf("\\U escape beyond U+10FFFF")
			default:
				out = appendWTF8(out, rune(v))
			}
		default:
			// Not an escape: the backslash stays, and the next character
			// is read as any other.
			out = append(out, '\\')
			p.i--
		}
	}
	if unicode {
		return Unicode(out), nil
	}
	if out == nil {
		out = []byte{}
	}
	return Bytes(out), nil
}

func isHexString(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isHexDigit(s[i]) {
			return false
		}
	}
	return true
}

// hashable reports whether Python could hash v: no list, dict or set,
// also inside a tuple.
func hashable(v Value) bool {
	switch v := v.(type) {
	case List, Dict, Set:
		return false
	case Tuple:
		for _, e := range v {
			if !hashable(e) {
				return false
			}
		}
	}
	return true
}
