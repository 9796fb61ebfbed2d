package marshal

import (
	"math"
	"strconv"
	"unicode/utf8"
)

// Python's text forms that the marshal format carries: the repr of a
// float (code f) and the UTF-8 of unicode (code u) as CPython accepts it,
// surrogates included (WTF-8).

// parseReprFloat parses what CPython's float repr (or %.17g) writes:
// [sign] digits [. digits] [e [sign] digits], or [sign] inf, infinity or
// nan in any case. An overflowing number is an infinity, as in C's strtod.
func parseReprFloat(b []byte) (float64, bool) {
	s := string(b)
	body := s
	if len(body) > 0 && (body[0] == '+' || body[0] == '-') {
		body = body[1:]
	}
	switch lower := asciiLower(body); lower {
	case "inf", "infinity":
		if s[0] == '-' {
			return math.Inf(-1), true
		}
		return math.Inf(1), true
	case "nan":
		return math.NaN(), true
	}
	i, digits := 0, 0
	for i < len(body) && isDigit(body[i]) {
		i, digits = i+1, digits+1
	}
	if i < len(body) && body[i] == '.' {
		i++
		for i < len(body) && isDigit(body[i]) {
			i, digits = i+1, digits+1
		}
	}
	if digits == 0 {
		return 0, false
	}
	if i < len(body) && (body[i] == 'e' || body[i] == 'E') {
		i++
		if i < len(body) && (body[i] == '+' || body[i] == '-') {
			i++
		}
		e := 0
		for i < len(body) && isDigit(body[i]) {
			i, e = i+1, e+1
		}
		if e == 0 {
			return 0, false
		}
	}
	if i != len(body) {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func asciiLower(s string) string {
	if len(s) > 8 {
		return ""
	}
	var b [8]byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b[i] = c
	}
	return string(b[:len(s)])
}

// validPyUTF8 reports whether b is UTF-8 as CPython's decoder of marshal's
// unicode accepts it: standard UTF-8, plus surrogate code points encoded
// in three bytes (Python 2's codec and Python 3's "surrogatepass").
func validPyUTF8(b []byte) bool {
	if utf8.Valid(b) {
		return true
	}
	for len(b) > 0 {
		if b[0] < utf8.RuneSelf {
			b = b[1:]
			continue
		}
		_, n := decodeWTF8(b)
		if n == 0 {
			return false
		}
		b = b[n:]
	}
	return true
}

// validPyUTF8String is validPyUTF8 for a string.
func validPyUTF8String(s string) bool {
	return utf8.ValidString(s) || validPyUTF8([]byte(s))
}

// decodeWTF8 decodes one code point from b, allowing surrogates. It
// returns n == 0 for an invalid sequence.
func decodeWTF8(b []byte) (rune, int) {
	if len(b) >= 3 && b[0] == 0xED && b[1] >= 0xA0 && b[1] <= 0xBF && b[2]&0xC0 == 0x80 {
		return rune(b[0]&0x0F)<<12 | rune(b[1]&0x3F)<<6 | rune(b[2]&0x3F), 3
	}
	c, n := utf8.DecodeRune(b)
	if c == utf8.RuneError && n <= 1 {
		return 0, 0
	}
	return c, n
}

// appendWTF8 appends c as UTF-8, encoding a surrogate as its three bytes.
func appendWTF8(dst []byte, c rune) []byte {
	if 0xD800 <= c && c <= 0xDFFF {
		return append(dst, 0xED, byte(0x80|(c>>6)&0x3F), byte(0x80|c&0x3F))
	}
	return utf8.AppendRune(dst, c)
}
