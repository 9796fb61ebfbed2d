package urls

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// MaxInputLength caps the length of a raw reference handed to Resolve or
// Normalize; longer input is rejected before any work is done.
const MaxInputLength = 64 << 10

// Errors returned (wrapped) by Resolve and Normalize.
var (
	// ErrUnsupportedScheme: the reference has a scheme other than http,
	// https, ftp, ws or wss.
	ErrUnsupportedScheme = errors.New("urls: unsupported scheme")
	// ErrNoScheme: a relative reference and no base to resolve it against.
	ErrNoScheme = errors.New("urls: relative reference without a base")
	// ErrInvalid: the reference is not a valid URL.
	ErrInvalid = errors.New("urls: invalid URL")
	// ErrTooLong: the input or the result exceeds the length limit.
	ErrTooLong = errors.New("urls: URL too long")
)

// defaultPorts lists the special schemes handled here and their default port.
var defaultPorts = map[string]string{"http": "80", "https": "443", "ftp": "21", "ws": "80", "wss": "443"}

// DefaultPort returns the default port of a supported scheme ("" if none).
func DefaultPort(scheme string) string { return defaultPorts[strings.ToLower(scheme)] }

// parsed is a URL split into its WHATWG components. Only special,
// non-file schemes are represented, so host is never null and path is a list.
type parsed struct {
	scheme      string
	username    string
	password    string
	host        string // serialized host: domain, dotted IPv4 or [IPv6]
	port        string // "" when null
	path        []string
	query       string
	hasQuery    bool
	fragment    string
	hasFragment bool
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, args...)...)
}

// Resolve parses ref, resolving it against base when ref is relative (base
// may be empty), by the WHATWG URL Standard, and returns the href: the
// fragment is kept and percent-encoding is left as WHATWG leaves it. Use
// Normalize for the crawler's canonical form.
func Resolve(ref, base string) (string, error) {
	var b *parsed
	if base != "" {
		var err error
		if b, err = parse(base, nil); err != nil {
			return "", fmt.Errorf("urls: base: %w", err)
		}
	}
	u, err := parse(ref, b)
	if err != nil {
		return "", err
	}
	return u.href(true), nil
}

// trimInput removes leading and trailing C0 controls and spaces and every
// ASCII tab or newline, as the WHATWG basic URL parser does first.
func trimInput(s string) string {
	i, j := 0, len(s)
	for i < j && s[i] <= ' ' {
		i++
	}
	for j > i && s[j-1] <= ' ' {
		j--
	}
	s = s[i:j]
	if strings.ContainsAny(s, "\t\n\r") {
		var b strings.Builder
		b.Grow(len(s))
		for k := 0; k < len(s); k++ {
			if c := s[k]; c != '\t' && c != '\n' && c != '\r' {
				b.WriteByte(c)
			}
		}
		s = b.String()
	}
	return s
}

func isAlpha(c byte) bool { return (c|0x20) >= 'a' && (c|0x20) <= 'z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isHex(c byte) bool   { return isDigit(c) || ((c|0x20) >= 'a' && (c|0x20) <= 'f') }
func isSlash(c byte) bool { return c == '/' || c == '\\' }

// splitScheme returns the lower-cased scheme and the rest when s starts
// with a syntactically valid scheme followed by ':'.
func splitScheme(s string) (scheme, rest string, ok bool) {
	if s == "" || !isAlpha(s[0]) {
		return "", s, false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case isAlpha(c) || isDigit(c) || c == '+' || c == '-' || c == '.':
		case c == ':':
			return strings.ToLower(s[:i]), s[i+1:], true
		default:
			return "", s, false
		}
	}
	return "", s, false
}

// parse is the WHATWG basic URL parser restricted to special non-file
// schemes; base, when not nil, is an already parsed URL.
func parse(input string, base *parsed) (*parsed, error) {
	if len(input) > MaxInputLength {
		return nil, fmt.Errorf("%w: %d bytes", ErrTooLong, len(input))
	}
	s := trimInput(input)
	u := &parsed{}
	scheme, rest, ok := splitScheme(s)
	if ok {
		if _, special := defaultPorts[scheme]; !special {
			return nil, fmt.Errorf("%w %q", ErrUnsupportedScheme, scheme)
		}
		u.scheme = scheme
		if base != nil && base.scheme == scheme && !strings.HasPrefix(rest, "//") {
			return u, u.relative(rest, base)
		}
		return u, u.authority(skipSlashes(rest))
	}
	if base == nil {
		return nil, fmt.Errorf("%w: %q", ErrNoScheme, truncate(s))
	}
	u.scheme = base.scheme
	return u, u.relative(s, base)
}

func truncate(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

func skipSlashes(s string) string {
	for s != "" && isSlash(s[0]) {
		s = s[1:]
	}
	return s
}

// relative is the WHATWG relative state: rest is resolved against base.
func (u *parsed) relative(rest string, base *parsed) error {
	u.scheme = base.scheme
	if rest != "" && isSlash(rest[0]) {
		if len(rest) > 1 && isSlash(rest[1]) {
			return u.authority(skipSlashes(rest))
		}
		u.copyAuthority(base)
		return u.parsePath(rest[1:])
	}
	u.copyAuthority(base)
	u.path = append([]string(nil), base.path...)
	switch {
	case rest == "":
		u.query, u.hasQuery = base.query, base.hasQuery
		return nil
	case rest[0] == '?':
		u.setQuery(rest[1:])
		return nil
	case rest[0] == '#':
		u.query, u.hasQuery = base.query, base.hasQuery
		u.setFragment(rest[1:])
		return nil
	}
	if len(u.path) > 0 {
		u.path = u.path[:len(u.path)-1]
	}
	return u.parsePath(rest)
}

func (u *parsed) copyAuthority(b *parsed) {
	u.username, u.password, u.host, u.port = b.username, b.password, b.host, b.port
}

// authority parses "userinfo@host:port" up to the first '/', '\', '?' or
// '#', then the path.
func (u *parsed) authority(s string) error {
	end := strings.IndexAny(s, "/\\?#")
	if end < 0 {
		end = len(s)
	}
	auth, rest := s[:end], s[end:]
	if at := strings.LastIndexByte(auth, '@'); at >= 0 {
		userinfo := auth[:at]
		auth = auth[at+1:]
		if auth == "" {
			return invalid("credentials without a host")
		}
		user, pass, _ := strings.Cut(userinfo, ":")
		u.username = encode(user, &userinfoSet)
		u.password = encode(pass, &userinfoSet)
	}
	// Split host and port at the first ':' outside brackets.
	host, port := auth, ""
	inBrackets := false
	for i := 0; i < len(auth); i++ {
		switch auth[i] {
		case '[':
			inBrackets = true
		case ']':
			inBrackets = false
		case ':':
			if !inBrackets {
				host, port = auth[:i], auth[i+1:]
				i = len(auth)
			}
		}
	}
	if host == "" {
		return invalid("empty host")
	}
	h, err := parseHost(host)
	if err != nil {
		return err
	}
	u.host = h
	if port != "" {
		for i := 0; i < len(port); i++ {
			if !isDigit(port[i]) {
				return invalid("bad port %q", truncate(port))
			}
		}
		trimmed := strings.TrimLeft(port, "0")
		if len(trimmed) > 5 {
			return invalid("port out of range")
		}
		n, _ := strconv.Atoi("0" + trimmed)
		if n > 65535 {
			return invalid("port out of range")
		}
		if p := strconv.Itoa(n); p != defaultPorts[u.scheme] {
			u.port = p
		}
	}
	if rest != "" && isSlash(rest[0]) {
		rest = rest[1:]
	}
	return u.parsePath(rest)
}

func isSingleDot(seg string) bool { return seg == "." || strings.EqualFold(seg, "%2e") }

func isDoubleDot(seg string) bool {
	switch len(seg) {
	case 2:
		return seg == ".."
	case 4:
		return strings.EqualFold(seg, ".%2e") || strings.EqualFold(seg, "%2e.")
	case 6:
		return strings.EqualFold(seg, "%2e%2e")
	}
	return false
}

// parsePath is the WHATWG path state for special URLs: s is what follows
// the slash that starts the path (or the relative path), up to the end.
func (u *parsed) parsePath(s string) error {
	for {
		k := strings.IndexAny(s, "/\\?#")
		seg := s
		c := byte(0)
		if k >= 0 {
			seg, c = s[:k], s[k]
		}
		slash := c == '/' || c == '\\'
		switch {
		case isDoubleDot(seg):
			if len(u.path) > 0 {
				u.path = u.path[:len(u.path)-1]
			}
			if !slash {
				u.path = append(u.path, "")
			}
		case isSingleDot(seg):
			if !slash {
				u.path = append(u.path, "")
			}
		default:
			u.path = append(u.path, encode(seg, &pathSet))
		}
		if k < 0 {
			return nil
		}
		s = s[k+1:]
		switch c {
		case '?':
			u.setQuery(s)
			return nil
		case '#':
			u.setFragment(s)
			return nil
		}
	}
}

// setQuery sets the query (and the fragment after a '#') from s, the text
// after '?'.
func (u *parsed) setQuery(s string) {
	q, frag, hasFrag := strings.Cut(s, "#")
	u.query, u.hasQuery = encode(q, &specialQuerySet), true
	if hasFrag {
		u.setFragment(frag)
	}
}

func (u *parsed) setFragment(s string) {
	u.fragment, u.hasFragment = encode(s, &fragmentSet), true
}

// href serializes u per WHATWG.
func (u *parsed) href(withFragment bool) string {
	var b strings.Builder
	n := len(u.scheme) + len(u.username) + len(u.password) + len(u.host) + len(u.port) + len(u.query) + 8
	for _, p := range u.path {
		n += len(p) + 1
	}
	if withFragment {
		n += len(u.fragment) + 1
	}
	b.Grow(n)
	b.WriteString(u.scheme)
	b.WriteString("://")
	if u.username != "" || u.password != "" {
		b.WriteString(u.username)
		if u.password != "" {
			b.WriteByte(':')
			b.WriteString(u.password)
		}
		b.WriteByte('@')
	}
	b.WriteString(u.host)
	if u.port != "" {
		b.WriteByte(':')
		b.WriteString(u.port)
	}
	for _, p := range u.path {
		b.WriteByte('/')
		b.WriteString(p)
	}
	if len(u.path) == 0 {
		b.WriteByte('/')
	}
	if u.hasQuery {
		b.WriteByte('?')
		b.WriteString(u.query)
	}
	if withFragment && u.hasFragment {
		b.WriteByte('#')
		b.WriteString(u.fragment)
	}
	return b.String()
}

// Percent-encode sets of the WHATWG URL Standard (section 1.3). Every set
// also contains the C0 controls and the bytes above 0x7E; encode adds
// those.
var (
	fragmentSet     = byteSet(" \"<>`")
	specialQuerySet = byteSet(" \"#<>'")
	pathSet         = byteSet(" \"#<>?^`{}")
	userinfoSet     = byteSet(" \"#<>?^`{}/:;=@[\\]|")
)

func byteSet(chars string) (set [256]bool) {
	for i := 0; i < 256; i++ {
		set[i] = i < 0x20 || i > 0x7e
	}
	for i := 0; i < len(chars); i++ {
		set[chars[i]] = true
	}
	return set
}

const upperHex = "0123456789ABCDEF"

// encode percent-encodes the bytes of s that are in set.
func encode(s string, set *[256]bool) string {
	n := 0
	for i := 0; i < len(s); i++ {
		if set[s[i]] {
			n++
		}
	}
	if n == 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 2*n)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if set[c] {
			b.WriteByte('%')
			b.WriteByte(upperHex[c>>4])
			b.WriteByte(upperHex[c&15])
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}
