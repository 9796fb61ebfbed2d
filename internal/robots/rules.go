package robots

import (
	"net/url"
	"slices"
	"strings"
	"time"
)

// Mode says how a site's robots.txt is applied.
type Mode int

const (
	// ModeRules: a robots.txt was fetched and parsed; its rules apply.
	ModeRules Mode = iota
	// ModeAllowAll: the file is unavailable (4xx, RFC 9309 section 2.3.1.3)
	// or ignored by configuration; everything is allowed.
	ModeAllowAll
	// ModeDisallowAll: the file is unreachable (5xx, network error,
	// timeout; RFC 9309 section 2.3.1.4) or refused by configuration;
	// nothing is allowed.
	ModeDisallowAll
)

func (m Mode) String() string {
	switch m {
	case ModeRules:
		return "rules"
	case ModeAllowAll:
		return "allow-all"
	case ModeDisallowAll:
		return "disallow-all"
	}
	return "mode(?)"
}

// Rules are the rules of one site for one product token: the merged groups
// that name the token (or the "*" groups), the crawl delay, the sitemaps.
// Rules are immutable and safe for concurrent use.
type Rules struct {
	Mode Mode
	// Status is the HTTP status of the robots.txt fetch (0 when there was no
	// response), Reason a short human-readable cause of the mode.
	Status int
	Reason string
	// Sitemaps are the absolute sitemap URLs named in the file.
	Sitemaps []string
	// Temporary is set when the rules stand for a failure RFC 9309 calls
	// "unreachable" (server error, network error, timeout): a cache may keep
	// using an older copy of the file instead.
	Temporary bool
	// MatchedWildcard is true when no group named the token and the "*"
	// groups were used.
	MatchedWildcard bool

	rules      []rule // sorted: longest pattern first, Allow first on ties
	crawlDelay time.Duration
	hasDelay   bool
}

// AllowAll returns rules that allow everything.
func AllowAll(status int, reason string) *Rules {
	return &Rules{Mode: ModeAllowAll, Status: status, Reason: reason}
}

// DisallowAll returns rules that allow nothing (except /robots.txt).
func DisallowAll(status int, reason string) *Rules {
	return &Rules{Mode: ModeDisallowAll, Status: status, Reason: reason}
}

// For selects the rules for a crawler's product token (for example
// "trawl"; matched case-insensitively against the user-agent lines). The
// robotsURL, when not empty, resolves relative Sitemap lines.
func (f *File) For(token, robotsURL string) *Rules {
	token = strings.ToLower(strings.TrimSpace(token))
	r := &Rules{Mode: ModeRules, Status: 200, Sitemaps: f.Sitemaps(robotsURL)}
	merge := func(want string) bool {
		found := false
		for _, g := range f.groups {
			hit := false
			for _, a := range g.agents {
				if a.token == want && want != "" {
					hit = true
					if a.hasDelay && (!r.hasDelay || a.crawlDelay > r.crawlDelay) {
						r.crawlDelay, r.hasDelay = a.crawlDelay, true
					}
				}
			}
			if hit {
				found = true
				r.rules = append(r.rules, g.rules...)
			}
		}
		return found
	}
	if token == "*" || !merge(token) {
		r.MatchedWildcard = merge("*")
	}
	slices.SortStableFunc(r.rules, func(a, b rule) int {
		if la, lb := ruleLen(a), ruleLen(b); la != lb {
			return lb - la
		}
		if a.allow != b.allow {
			if a.allow {
				return -1
			}
			return 1
		}
		return 0
	})
	return r
}

func ruleLen(r rule) int {
	n := len(r.pattern)
	if r.anchor {
		n++
	}
	return n
}

// Sitemaps returns the file's sitemap URLs resolved against robotsURL
// (when it parses), deduplicated, in file order.
func (f *File) Sitemaps(robotsURL string) []string {
	base, err := url.Parse(robotsURL)
	if robotsURL == "" || err != nil || !base.IsAbs() {
		base = nil
	}
	var out []string
	seen := map[string]bool{}
	for _, s := range f.sitemaps {
		u, err := url.Parse(s)
		if err != nil {
			continue
		}
		if !u.IsAbs() {
			if base == nil {
				continue
			}
			u = base.ResolveReference(u)
		}
		abs := u.String()
		if !seen[abs] {
			seen[abs] = true
			out = append(out, abs)
		}
	}
	return out
}

// CrawlDelay returns the Crawl-delay that applies to the token, if any.
func (r *Rules) CrawlDelay() (time.Duration, bool) { return r.crawlDelay, r.hasDelay }

// Delay is the delay between two fetches from the site: base (the
// configured delay), or the robots.txt Crawl-delay when obey
// (obey_robots_delay) is set and the Crawl-delay is longer. A Crawl-delay
// never makes the crawler faster than its configuration.
func (r *Rules) Delay(base time.Duration, obey bool) time.Duration {
	if obey && r.hasDelay && r.crawlDelay > base {
		return r.crawlDelay
	}
	return base
}

// NumRules is the number of allow and disallow rules that apply.
func (r *Rules) NumRules() int { return len(r.rules) }

// Allowed reports whether the URL (absolute, or a path with an optional
// query) may be fetched. /robots.txt itself is always allowed.
func (r *Rules) Allowed(rawURL string) bool {
	return r.AllowedPath(pathOf(rawURL))
}

// AllowedPath is Allowed for a path and query ("/a/b?c"), already in the
// URL's escaped form.
func (r *Rules) AllowedPath(path string) bool {
	if path == "" {
		path = "/"
	}
	if path == "/robots.txt" {
		return true
	}
	switch r.Mode {
	case ModeAllowAll:
		return true
	case ModeDisallowAll:
		return false
	}
	if len(r.rules) == 0 {
		return true
	}
	path = normalize(path)
	for _, ru := range r.rules {
		if match(path, ru.pattern, ru.anchor) {
			return ru.allow
		}
	}
	return true
}

// pathOf extracts the escaped path and query of a URL.
func pathOf(raw string) string {
	if i := strings.IndexByte(raw, '#'); i >= 0 {
		raw = raw[:i]
	}
	if strings.HasPrefix(raw, "/") && !strings.HasPrefix(raw, "//") {
		return raw
	}
	if u, err := url.Parse(raw); err == nil && (u.Host != "" || u.Scheme != "") {
		p := u.EscapedPath()
		if p == "" {
			p = "/"
		}
		if u.RawQuery != "" || u.ForceQuery {
			p += "?" + u.RawQuery
		}
		return p
	}
	// Unparseable: cut after "scheme://authority" by hand.
	if i := strings.Index(raw, "://"); i >= 0 {
		raw = raw[i+3:]
		if j := strings.IndexAny(raw, "/?"); j >= 0 {
			p := raw[j:]
			if p[0] == '?' {
				p = "/" + p
			}
			return p
		}
		return "/"
	}
	return raw
}

// match reports whether the pattern (with '*' wildcards, anchored at the
// end when anchor is set) matches a prefix of path (all of it when
// anchored). It tracks the set of path positions reachable after each
// pattern byte, as Google's matcher does: O(len(path)*len(pattern)).
func match(path, pattern string, anchor bool) bool {
	// Fast path: no wildcard.
	if strings.IndexByte(pattern, '*') < 0 {
		if anchor {
			return path == pattern
		}
		return strings.HasPrefix(path, pattern)
	}
	var stack [64]int
	pos := stack[:1]
	pos[0] = 0
	var next []int
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		if c == '*' {
			// Every position from the smallest reachable one onwards.
			first := pos[0]
			next = next[:0]
			for p := first; p <= len(path); p++ {
				next = append(next, p)
			}
		} else {
			next = next[:0]
			for _, p := range pos {
				if p < len(path) && path[p] == c {
					next = append(next, p+1)
				}
			}
			if len(next) == 0 {
				return false
			}
		}
		pos, next = next, pos
	}
	if anchor {
		return pos[len(pos)-1] == len(path)
	}
	return true
}

// ProductToken derives the product token to match robots.txt groups with
// from a User-Agent string: its leading run of letters, digits, '-' and '_',
// lower cased ("trawl/1.0 (+http://x/bot)" gives "trawl").
func ProductToken(userAgent string) string {
	return agentToken(strings.TrimSpace(userAgent))
}
