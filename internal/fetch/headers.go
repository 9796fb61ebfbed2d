package fetch

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/dlclark/regexp2"
)

// HeaderExcluder implements exclude_headers (MS-FSCCFG section 2.2.4.22):
// per header name, a list of regular expressions in .NET syntax; a document
// whose header value matches one of them is excluded from the crawl.
type HeaderExcluder struct {
	rules []headerRule
}

type headerRule struct {
	name string
	res  []*regexp2.Regexp
}

// NewHeaderExcluder compiles the exclude_headers section: header name to
// regular expressions ([MC-RegEx], unanchored, as .NET's Regex.IsMatch).
func NewHeaderExcluder(section map[string][]string) (*HeaderExcluder, error) {
	names := make([]string, 0, len(section))
	for n := range section {
		names = append(names, n)
	}
	sort.Strings(names)
	h := &HeaderExcluder{}
	for _, n := range names {
		r := headerRule{name: http.CanonicalHeaderKey(strings.TrimSpace(n))}
		for _, expr := range section[n] {
			re, err := regexp2.Compile(expr, regexp2.None)
			if err != nil {
				return nil, fmt.Errorf("fetch: exclude_headers %s: %q: %w", n, expr, err)
			}
			re.MatchTimeout = 100 * time.Millisecond // a pathological expression must not stall the crawl
			r.res = append(r.res, re)
		}
		h.rules = append(h.rules, r)
	}
	return h, nil
}

// Excluded reports whether the headers match, and the header that did.
func (h *HeaderExcluder) Excluded(hdr http.Header) (string, bool) {
	if h == nil {
		return "", false
	}
	for _, r := range h.rules {
		for _, v := range hdr.Values(r.name) {
			for _, re := range r.res {
				if ok, err := re.MatchString(v); err == nil && ok {
					return r.name, true
				}
			}
		}
	}
	return "", false
}

// ParseHeaderLines turns the "headers" parameter (list of "Name: value"
// strings) into request headers.
func ParseHeaderLines(lines []string) (http.Header, error) {
	h := http.Header{}
	for _, l := range lines {
		name, value, ok := strings.Cut(l, ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" || strings.ContainsAny(name, " \t\r\n") || strings.ContainsAny(value, "\r\n") {
			return nil, fmt.Errorf("fetch: header %q is not \"Name: value\"", l)
		}
		h.Add(name, strings.TrimSpace(value))
	}
	return h, nil
}
