package frontier

import (
	"net/url"
	"strings"
)

// maxPatternSegments is the longest group of path segments checked for
// repetition.
const maxPatternSegments = 4

// recursionDepth returns how many times the most repeated pattern was
// appended in uri: the larger of (a) the number of consecutive copies of the
// suffix the URI adds to its referrer at the end of the URI, and (b) the
// longest run of consecutive copies of any group of 1-4 path segments.
// max_uri_recursion bounds it (MS-FSCCFG §2.2.3: "the maximum number of
// times a pattern can be appended to successors of a URI").
func recursionDepth(uri, referrer string) int {
	best := 0
	if referrer != "" && len(uri) > len(referrer) && strings.HasPrefix(uri, referrer) {
		p := uri[len(referrer):]
		n, rest := 0, uri
		for strings.HasSuffix(rest, p) {
			n++
			rest = rest[:len(rest)-len(p)]
		}
		best = n
	}
	path := uri
	if u, err := url.Parse(uri); err == nil {
		path = u.EscapedPath()
	}
	segs := strings.Split(strings.Trim(path, "/"), "/")
	for l := 1; l <= maxPatternSegments && 2*l <= len(segs); l++ {
		for i := 0; i+l <= len(segs); i++ {
			n := 1
			for j := i + l; j+l <= len(segs) && equalSegs(segs[i:i+l], segs[j:j+l]); j += l {
				n++
			}
			if n > best {
				best = n
			}
		}
	}
	return best
}

func equalSegs(a, b []string) bool {
	for i := range a {
		if a[i] != b[i] || a[i] == "" {
			return false
		}
	}
	return true
}
