package urls

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// idnaProfile is UTS #46 ToASCII as the WHATWG URL Standard calls it
// ("domain to ASCII" with beStrict false): the lookup mapping,
// nontransitional, Bidi and joiner checks on, STD3 rules, hyphen checks
// and DNS length checks off. It is immutable.
var idnaProfile = idna.New(
	idna.MapForLookup(),
	idna.BidiRule(),
	idna.Transitional(false),
	idna.StrictDomainName(false),
	idna.CheckHyphens(false),
	idna.VerifyDNSLength(false),
)

// parseHost is the WHATWG host parser for special URLs; it returns the
// serialized host.
func parseHost(s string) (string, error) {
	if s[0] == '[' {
		if len(s) < 2 || s[len(s)-1] != ']' {
			return "", invalid("unterminated IPv6 address")
		}
		a, ok := parseIPv6(s[1 : len(s)-1])
		if !ok {
			return "", invalid("bad IPv6 address %q", truncate(s))
		}
		return "[" + formatIPv6(a) + "]", nil
	}
	domain := percentDecode(s)
	if !utf8.ValidString(domain) {
		return "", invalid("host is not UTF-8")
	}
	ascii, err := domainToASCII(domain)
	if err != nil {
		return "", err
	}
	for i := 0; i < len(ascii); i++ {
		if forbiddenDomain(ascii[i]) {
			return "", invalid("forbidden character %q in host", ascii[i])
		}
	}
	if endsInNumber(ascii) {
		v, ok := parseIPv4(ascii)
		if !ok {
			return "", invalid("bad IPv4 address %q", truncate(ascii))
		}
		return formatIPv4(v), nil
	}
	return ascii, nil
}

func domainToASCII(d string) (string, error) {
	fast := true
	for i := 0; i < len(d); i++ {
		if d[i] >= 0x80 {
			fast = false
			break
		}
	}
	if fast {
		// ASCII without punycode labels: UTS #46 mapping is lower-casing.
		for _, label := range strings.Split(d, ".") {
			if len(label) >= 4 && strings.EqualFold(label[:4], "xn--") {
				fast = false
				break
			}
		}
	}
	var out string
	if fast {
		out = strings.ToLower(d)
	} else {
		var err error
		out, err = idnaProfile.ToASCII(d)
		if err != nil {
			return "", invalid("bad domain name: %v", err)
		}
	}
	if out == "" {
		return "", invalid("empty host")
	}
	return out, nil
}

// forbiddenDomain reports a forbidden domain code point (ASCII part).
func forbiddenDomain(c byte) bool {
	if c <= 0x20 || c == 0x7f {
		return true
	}
	switch c {
	case '#', '%', '/', ':', '<', '>', '?', '@', '[', '\\', ']', '^', '|':
		return true
	}
	return false
}

// percentDecode decodes every valid %XX escape and leaves the rest as is.
func percentDecode(s string) string {
	i := strings.IndexByte(s, '%')
	if i < 0 {
		return s
	}
	b := make([]byte, 0, len(s))
	b = append(b, s[:i]...)
	for ; i < len(s); i++ {
		c := s[i]
		if c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			b = append(b, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
			continue
		}
		b = append(b, c)
	}
	return string(b)
}

func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

// endsInNumber is the WHATWG "ends in a number checker".
func endsInNumber(s string) bool {
	parts := strings.Split(s, ".")
	if parts[len(parts)-1] == "" {
		if len(parts) == 1 {
			return false
		}
		parts = parts[:len(parts)-1]
	}
	last := parts[len(parts)-1]
	if last != "" {
		all := true
		for i := 0; i < len(last); i++ {
			if !isDigit(last[i]) {
				all = false
				break
			}
		}
		if all {
			return true
		}
	}
	if len(last) >= 2 && last[0] == '0' && (last[1]|0x20) == 'x' {
		for i := 2; i < len(last); i++ {
			if !isHex(last[i]) {
				return false
			}
		}
		return true
	}
	return false
}

// parseIPv4Number parses one part of an IPv4 host (decimal, 0x hex or 0
// octal); values above 2^32 are reported as not ok.
func parseIPv4Number(s string) (uint64, bool) {
	if s == "" {
		return 0, false
	}
	base := 10
	switch {
	case len(s) >= 2 && s[0] == '0' && (s[1]|0x20) == 'x':
		base, s = 16, s[2:]
	case len(s) >= 2 && s[0] == '0':
		base, s = 8, s[1:]
	}
	if s == "" {
		return 0, true
	}
	var v uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		var d uint64
		switch {
		case isDigit(c):
			d = uint64(c - '0')
		case base == 16 && isHex(c):
			d = uint64(unhex(c))
		default:
			return 0, false
		}
		if d >= uint64(base) {
			return 0, false
		}
		v = v*uint64(base) + d
		if v > 1<<32 {
			return v, false
		}
	}
	return v, true
}

// parseIPv4 is the WHATWG IPv4 parser.
func parseIPv4(s string) (uint32, bool) {
	parts := strings.Split(s, ".")
	if parts[len(parts)-1] == "" && len(parts) > 1 {
		parts = parts[:len(parts)-1]
	}
	if len(parts) > 4 {
		return 0, false
	}
	nums := make([]uint64, len(parts))
	for i, p := range parts {
		n, ok := parseIPv4Number(p)
		if !ok {
			return 0, false
		}
		nums[i] = n
	}
	for _, n := range nums[:len(nums)-1] {
		if n > 255 {
			return 0, false
		}
	}
	last := nums[len(nums)-1]
	if last >= 1<<(8*(5-len(nums))) {
		return 0, false
	}
	v := last
	for i, n := range nums[:len(nums)-1] {
		v += n << (8 * (3 - i))
	}
	return uint32(v), true
}

func formatIPv4(v uint32) string {
	b := make([]byte, 0, 15)
	for i := 3; i >= 0; i-- {
		b = strconv.AppendUint(b, uint64(v>>(8*i)&0xff), 10)
		if i > 0 {
			b = append(b, '.')
		}
	}
	return string(b)
}

// parseIPv6 is the WHATWG IPv6 parser.
func parseIPv6(s string) (a [8]uint16, ok bool) {
	p := 0
	at := func(i int) int {
		if i < len(s) {
			return int(s[i])
		}
		return -1
	}
	piece, compress := 0, -1
	if at(p) == ':' {
		if at(p+1) != ':' {
			return a, false
		}
		p += 2
		piece++
		compress = piece
	}
	for at(p) != -1 {
		if piece == 8 {
			return a, false
		}
		if at(p) == ':' {
			if compress != -1 {
				return a, false
			}
			p++
			piece++
			compress = piece
			continue
		}
		value, length := 0, 0
		for length < 4 && at(p) != -1 && isHex(byte(at(p))) {
			value = value*16 + int(unhex(byte(at(p))))
			p++
			length++
		}
		if at(p) == '.' {
			if length == 0 {
				return a, false
			}
			p -= length
			if piece > 6 {
				return a, false
			}
			seen := 0
			for at(p) != -1 {
				v4 := -1
				if seen > 0 {
					if at(p) == '.' && seen < 4 {
						p++
					} else {
						return a, false
					}
				}
				if at(p) == -1 || !isDigit(byte(at(p))) {
					return a, false
				}
				for at(p) != -1 && isDigit(byte(at(p))) {
					n := at(p) - '0'
					switch v4 {
					case -1:
						v4 = n
					case 0:
						return a, false
					default:
						v4 = v4*10 + n
					}
					if v4 > 255 {
						return a, false
					}
					p++
				}
				a[piece] = a[piece]<<8 | uint16(v4)
				seen++
				if seen == 2 || seen == 4 {
					piece++
				}
			}
			if seen != 4 {
				return a, false
			}
			break
		} else if at(p) == ':' {
			p++
			if at(p) == -1 {
				return a, false
			}
		} else if at(p) != -1 {
			return a, false
		}
		a[piece] = uint16(value)
		piece++
	}
	if compress != -1 {
		swaps := piece - compress
		piece = 7
		for piece != 0 && swaps > 0 {
			a[piece], a[compress+swaps-1] = a[compress+swaps-1], a[piece]
			piece--
			swaps--
		}
	} else if piece != 8 {
		return a, false
	}
	return a, true
}

// formatIPv6 is the WHATWG IPv6 serializer (compresses the first longest
// run of two or more zero pieces; lower-case hex).
func formatIPv6(a [8]uint16) string {
	best, bestLen := -1, 1
	for i := 0; i < 8; {
		if a[i] != 0 {
			i++
			continue
		}
		j := i
		for j < 8 && a[j] == 0 {
			j++
		}
		if j-i > bestLen {
			best, bestLen = i, j-i
		}
		i = j
	}
	b := make([]byte, 0, 39)
	for i := 0; i < 8; i++ {
		if i == best {
			if i == 0 {
				b = append(b, "::"...)
			} else {
				b = append(b, ':')
			}
			i += bestLen - 1
			continue
		}
		b = strconv.AppendUint(b, uint64(a[i]), 16)
		if i != 7 {
			b = append(b, ':')
		}
	}
	return string(b)
}
