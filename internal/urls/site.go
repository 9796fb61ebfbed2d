package urls

import (
	"fmt"
	"net/url"
	"strings"
)

// Site returns the crawl-site key of u, the unit of per-site queues,
// politeness and max_doc: the lower-case host name, followed by ":port"
// when u names a port that is not its scheme's default. http and https on
// the default ports are therefore one site (one server, one delay), while
// a server on another port is a site of its own. IPv6 hosts keep their
// brackets.
func Site(u *url.URL) string {
	host := strings.ToLower(u.Hostname())
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if len(host) > 1 && host[len(host)-1] == '.' {
		host = host[:len(host)-1]
	}
	port := u.Port()
	if port == "" || port == DefaultPort(u.Scheme) {
		return host
	}
	return host + ":" + port
}

// SchemeAllowed reports whether scheme is one of allowed (allowed_schemes),
// ignoring case.
func SchemeAllowed(scheme string, allowed []string) bool {
	for _, a := range allowed {
		if strings.EqualFold(strings.TrimSpace(a), scheme) {
			return true
		}
	}
	return false
}

// Ext returns the extension of the last segment of an escaped URI path,
// lower-cased, with its dot (".jpg"), or "" when the segment has none.
// Matrix parameters (";jsessionid=...") are not part of the extension.
func Ext(path string) string {
	seg := path[strings.LastIndexByte(path, '/')+1:]
	if i := strings.IndexByte(seg, ';'); i >= 0 {
		seg = seg[:i]
	}
	dot := strings.LastIndexByte(seg, '.')
	if dot < 0 || dot == len(seg)-1 {
		return ""
	}
	return strings.ToLower(seg[dot:])
}

// ExtSet is the exclude_exts list, matched case-insensitively (the
// default list mixes ".asx" and ".ASF"). An entry with several dots
// (".tar.gz") matches the end of the last path segment.
type ExtSet struct {
	single map[string]struct{}
	multi  []string
}

// NewExtSet builds an ExtSet; a missing leading dot is added ("jpg" is
// ".jpg") and blank entries are ignored.
func NewExtSet(exts []string) ExtSet {
	s := ExtSet{single: make(map[string]struct{}, len(exts))}
	for _, e := range exts {
		e = strings.ToLower(strings.TrimSpace(e))
		if e == "" || e == "." {
			continue
		}
		if e[0] != '.' {
			e = "." + e
		}
		if strings.Count(e, ".") > 1 {
			s.multi = append(s.multi, e)
		} else {
			s.single[e] = struct{}{}
		}
	}
	return s
}

// Excluded reports whether the escaped path ends in an excluded extension.
// It does not allocate for extensions of up to 16 bytes.
func (s ExtSet) Excluded(path string) bool {
	seg := path[strings.LastIndexByte(path, '/')+1:]
	if i := strings.IndexByte(seg, ';'); i >= 0 {
		seg = seg[:i]
	}
	dot := strings.LastIndexByte(seg, '.')
	if dot < 0 {
		return false
	}
	ext := seg[dot:]
	var buf [16]byte
	if len(ext) <= len(buf) {
		for i := 0; i < len(ext); i++ {
			c := ext[i]
			if c >= 'A' && c <= 'Z' {
				c += 'a' - 'A'
			}
			buf[i] = c
		}
		if _, ok := s.single[string(buf[:len(ext)])]; ok {
			return true
		}
	} else if _, ok := s.single[strings.ToLower(ext)]; ok {
		return true
	}
	for _, m := range s.multi {
		if len(seg) >= len(m) && strings.EqualFold(seg[len(seg)-len(m):], m) {
			return true
		}
	}
	return false
}

// CheckLength returns an error wrapping ErrTooLong when uri is longer than
// max bytes (max <= 0: no limit).
func CheckLength(uri string, max int) error {
	if max > 0 && len(uri) > max {
		return fmt.Errorf("%w: %d bytes (limit %d)", ErrTooLong, len(uri), max)
	}
	return nil
}

// PathRecursion measures how often a pattern repeats in an escaped path,
// for max_uri_recursion ("the maximum number of times a pattern can be
// appended to successors of a URI"): it returns the largest k such that
// some sequence of one or more whole segments occurs k times in a row
// ("/a/b/a/b/a/b/" gives 3, "/x/y/" gives 1). A crawler rejects a URI
// whose count exceeds max_uri_recursion. At most the last 64 segments are
// examined, which bounds the cost on hostile paths.
func PathRecursion(path string) int {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	if len(segs) > 64 {
		segs = segs[len(segs)-64:]
	}
	best := 1
	if len(segs) == 1 && segs[0] == "" {
		return 0
	}
	for width := 1; width*2 <= len(segs); width++ {
		for start := 0; start+2*width <= len(segs); start++ {
			k := 1
			for next := start + width; next+width <= len(segs) && equalSegs(segs[start:start+width], segs[next:next+width]); next += width {
				k++
			}
			if k > best {
				best = k
			}
		}
	}
	return best
}

func equalSegs(a, b []string) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
