package urls

import (
	"fmt"
	"net/url"
	"strings"
)

// DefaultMaxLength is the length limit Normalize applies to its result.
// FAST does not state one; 2048 bytes is the common crawler limit (longer
// URIs are nearly always session or calendar traps).
const DefaultMaxLength = 2048

// Normalizer turns raw references into canonical URIs. The zero value
// keeps repeated slashes, does not sort the query and has no length limit
// other than MaxInputLength; Normalize uses DefaultMaxLength.
type Normalizer struct {
	// CollapseSlashes replaces runs of '/' in the path by one slash.
	CollapseSlashes bool
	// SortQuery sorts the query parameters by key (sort_query_params).
	SortQuery bool
	// DefaultScheme, when set, is assumed for a reference that has no
	// scheme and no base ("www.contoso.com/" -> "http://www.contoso.com/").
	DefaultScheme string
	// MaxLength rejects results longer than this many bytes (0: no limit).
	MaxLength int
	// Rewrite, when set, applies rewrite_rules to the normalized URI; a
	// URI a rule changed is normalized once more.
	Rewrite *Rewriter
}

// Normalize resolves raw against base (which may be nil) and normalizes it
// with the default Normalizer settings and DefaultMaxLength.
func Normalize(raw string, base *url.URL) (*url.URL, error) {
	return Normalizer{MaxLength: DefaultMaxLength}.Normalize(raw, base)
}

// Normalize resolves raw against base (nil for none) and returns the
// canonical URI as a *url.URL.
func (n Normalizer) Normalize(raw string, base *url.URL) (*url.URL, error) {
	b := ""
	if base != nil {
		b = base.String()
	}
	s, err := n.NormalizeString(raw, b)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	return u, nil
}

// NormalizeString resolves raw against base ("" for none) and returns the
// canonical URI.
func (n Normalizer) NormalizeString(raw, base string) (string, error) {
	var b *parsed
	if base != "" {
		var err error
		if b, err = parse(base, nil); err != nil {
			return "", fmt.Errorf("urls: base: %w", err)
		}
	}
	return n.normalize(raw, b)
}

// Base is a parsed base URI, for resolving many references against one
// document without parsing the base every time.
type Base struct{ p *parsed }

// ParseBase parses a base URI for use with NormalizeRef.
func ParseBase(base string) (*Base, error) {
	p, err := parse(base, nil)
	if err != nil {
		return nil, fmt.Errorf("urls: base: %w", err)
	}
	return &Base{p}, nil
}

// String returns the base's href.
func (b *Base) String() string { return b.p.href(true) }

// NormalizeRef resolves raw against base (nil for none) and returns the
// canonical URI.
func (n Normalizer) NormalizeRef(raw string, base *Base) (string, error) {
	var b *parsed
	if base != nil {
		b = base.p
	}
	return n.normalize(raw, b)
}

func (n Normalizer) normalize(raw string, base *parsed) (string, error) {
	if base == nil && n.DefaultScheme != "" {
		t := trimInput(raw)
		if _, _, ok := splitScheme(t); !ok && t != "" && !isSlash(t[0]) && t[0] != '?' && t[0] != '#' {
			raw = n.DefaultScheme + "://" + t
		}
	}
	p, err := parse(raw, base)
	if err != nil {
		return "", err
	}
	if err := fixHost(p); err != nil {
		return "", err
	}
	s := n.canonical(p)
	if n.Rewrite != nil {
		r, err := n.Rewrite.Rewrite(s)
		if err != nil {
			return "", err
		}
		if r != s {
			if p, err = parse(r, nil); err != nil {
				return "", fmt.Errorf("urls: rewritten URI %q: %w", truncate(r), err)
			}
			if err := fixHost(p); err != nil {
				return "", err
			}
			s = n.canonical(p)
		}
	}
	if n.MaxLength > 0 && len(s) > n.MaxLength {
		return "", fmt.Errorf("%w: %d bytes (limit %d)", ErrTooLong, len(s), n.MaxLength)
	}
	return s, nil
}

// fixHost removes the trailing dots of a domain ("www.example.org." is
// the same DNS name as "www.example.org"), parsing the result again since
// "1.2.3.4." may become an IPv4 address, and applies checkRegName.
func fixHost(p *parsed) error {
	if strings.HasSuffix(p.host, ".") {
		h := strings.TrimRight(p.host, ".")
		if h == "" {
			return invalid("host %q has no name", truncate(p.host))
		}
		var err error
		if p.host, err = parseHost(h); err != nil {
			return err
		}
	}
	return checkRegName(p.host)
}

// checkRegName rejects a domain that WHATWG accepts but RFC 3986 does
// not (such as "a{b}"): no DNS name contains those characters, and the
// canonical form must stay a valid RFC 3986 URI.
func checkRegName(host string) error {
	if host[0] == '[' {
		return nil
	}
	for i := 0; i < len(host); i++ {
		if !hostAllowed[host[i]] {
			return invalid("character %q in host %q", host[i], truncate(host))
		}
	}
	return nil
}

// canonical serializes p in the crawler's canonical form.
func (n Normalizer) canonical(p *parsed) string {
	var b strings.Builder
	b.Grow(len(p.scheme) + len(p.host) + len(p.query) + 16 + 8*len(p.path))
	b.WriteString(p.scheme)
	b.WriteString("://")
	if p.username != "" || p.password != "" {
		renormalizeDecoding(&b, p.username, &userAllowed, &userAllowed)
		if p.password != "" {
			b.WriteByte(':')
			renormalizeDecoding(&b, p.password, &userAllowed, &userAllowed)
		}
		b.WriteByte('@')
	}
	b.WriteString(p.host)
	if p.port != "" {
		b.WriteByte(':')
		b.WriteString(p.port)
	}
	wrote := false
	for i, seg := range p.path {
		if n.CollapseSlashes && seg == "" && i != len(p.path)-1 {
			continue
		}
		b.WriteByte('/')
		renormalize(&b, seg, &pathAllowed)
		wrote = true
	}
	if !wrote {
		b.WriteByte('/')
	}
	if p.hasQuery && p.query != "" {
		var q strings.Builder
		renormalize(&q, p.query, &queryAllowed)
		qs := q.String()
		if n.SortQuery {
			qs = SortQueryParams(qs)
		}
		if qs != "" {
			b.WriteByte('?')
			b.WriteString(qs)
		}
	}
	return b.String()
}

// Characters left unencoded in each component (besides '%' escapes): what
// RFC 3986 allows there (pchar for path segments, pchar / "/" / "?" for the
// query, unreserved / sub-delims for a host name). In user and password
// RFC 3986 allows unreserved / sub-delims, but net/url escapes "!'()*"
// there, and the canonical form must survive a net/url round trip, so
// those five are escaped too (servers decode credentials anyway).
const unreservedChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~"

var (
	pathAllowed  = allowed(unreservedChars + "!$&'()*+,;=" + ":@")
	queryAllowed = allowed(unreservedChars + "!$&'()*+,;=" + ":@/?")
	hostAllowed  = allowed(unreservedChars + "!$&'()*+,;=")
	userAllowed  = allowed(unreservedChars + "$&+,;=")
)

func allowed(chars ...string) (set [256]bool) {
	for _, s := range chars {
		for i := 0; i < len(s); i++ {
			set[s[i]] = true
		}
	}
	return set
}

// renormalize writes s with normalized percent-encoding: escapes of
// unreserved characters are decoded, other escapes get upper-case hex, a
// '%' that starts no valid escape becomes "%25", and bytes not in ok are
// escaped.
func renormalize(b *strings.Builder, s string, ok *[256]bool) {
	renormalizeDecoding(b, s, ok, &unreservedSet)
}

var unreservedSet = allowed(unreservedChars)

// renormalizeDecoding is renormalize where the escapes of the bytes in
// decode are decoded.
func renormalizeDecoding(b *strings.Builder, s string, ok, decode *[256]bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '%' {
			if i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
				v := unhex(s[i+1])<<4 | unhex(s[i+2])
				if decode[v] {
					b.WriteByte(v)
				} else {
					b.WriteByte('%')
					b.WriteByte(upperHex[v>>4])
					b.WriteByte(upperHex[v&15])
				}
				i += 2
				continue
			}
			b.WriteString("%25")
			continue
		}
		if ok[c] {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(upperHex[c>>4])
		b.WriteByte(upperHex[c&15])
	}
}
