package marshal

import (
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"
)

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
