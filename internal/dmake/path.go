package dmake

import (
	"fmt"
	"path"
	"strconv"
	"strings"
)

// Expand replaces the environment-variable references of a path name
// (2.2.1.2) with lookup's values: $NAME (NAME of letters, digits, '_' and
// '-'), ${NAME}, and $$ for a literal $. A reference to an unknown
// variable, a "${" without its "}", and a lone "$" are left as they are.
// Text between single quotes is not expanded and keeps its quotes; an
// unmatched quote is dropped and the rest copied verbatim. These are the
// rules of CPython 2's ntpath.expandvars, which the spec's grammar
// describes.
func Expand(s string, lookup func(string) (string, bool)) string {
	if !strings.ContainsAny(s, "$'") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '\'':
			rest := s[i+1:]
			if j := strings.IndexByte(rest, '\''); j >= 0 {
				b.WriteByte('\'')
				b.WriteString(rest[:j+1])
				i += j + 1
			} else {
				b.WriteString(rest)
				i = len(s)
			}
		case '$':
			switch {
			case i+1 < len(s) && s[i+1] == '$':
				b.WriteByte('$')
				i++
			case i+1 < len(s) && s[i+1] == '{':
				rest := s[i+2:]
				j := strings.IndexByte(rest, '}')
				if j < 0 {
					b.WriteString(s[i:])
					i = len(s)
					break
				}
				name := rest[:j]
				if v, ok := lookup(name); ok {
					b.WriteString(v)
				} else {
					b.WriteString("${" + name + "}")
				}
				i += 2 + j
			default:
				j := i + 1
				for j < len(s) && isVarChar(s[j]) {
					j++
				}
				name := s[i+1 : j]
				if v, ok := lookup(name); ok && name != "" {
					b.WriteString(v)
				} else {
					b.WriteString("$" + name)
				}
				i = j - 1
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func isVarChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// Slashes turns both separators of a path name (2.2.1.2: '/' or '\', mixed
// freely) into '/'.
func Slashes(p string) string { return strings.ReplaceAll(p, `\`, "/") }

// Resolve expands p with lookup, normalizes its separators and makes it
// absolute against cwd (itself absolute, '/'-separated). The result is
// cleaned.
func Resolve(cwd, p string, lookup func(string) (string, bool)) string {
	p = Slashes(Expand(p, lookup))
	if !path.IsAbs(p) {
		p = path.Join(cwd, p)
	}
	return path.Clean(p)
}

// Within reports whether p (absolute, clean) is root or below it.
func Within(root, p string) bool {
	return p == root || strings.HasPrefix(p, strings.TrimSuffix(root, "/")+"/")
}

// TransferKey builds the transfer key of a netsink/netsource pair (2.2.1.3):
// "-" path "-" random, the random part a 64-bit number in base 10.
func TransferKey(p string, random uint64) string {
	return "-" + p + "-" + strconv.FormatUint(random, 10)
}

// ParseTransferKey splits a transfer key into its path and random parts.
func ParseTransferKey(k string) (string, uint64, error) {
	if !strings.HasPrefix(k, "-") {
		return "", 0, fmt.Errorf("dmake: transfer key %q does not start with '-'", truncate([]byte(k)))
	}
	i := strings.LastIndexByte(k, '-')
	if i <= 0 {
		return "", 0, fmt.Errorf("dmake: transfer key %q has no random part", truncate([]byte(k)))
	}
	r, err := strconv.ParseUint(k[i+1:], 10, 64)
	if err != nil {
		return "", 0, fmt.Errorf("dmake: transfer key %q: bad random part", truncate([]byte(k)))
	}
	return k[1:i], r, nil
}
