package robots

import (
	"fmt"
)

// Policy holds the MS-FSCCFG options that change how a failed robots.txt
// fetch is treated.
type Policy struct {
	// AuthIgnore is robots_auth_ignore (default yes): on 401 or 403 the
	// robots.txt is ignored (everything allowed). When false, the site is
	// not crawled (everything disallowed).
	AuthIgnore bool
	// TimeoutIgnore is robots_tout_ignore (default no): when the fetch times
	// out, true ignores robots.txt (everything allowed); false treats the
	// file as unreachable (everything disallowed), as RFC 9309 asks.
	TimeoutIgnore bool
}

// DefaultPolicy is the MS-FSCCFG default: robots_auth_ignore=yes,
// robots_tout_ignore=no.
var DefaultPolicy = Policy{AuthIgnore: true, TimeoutIgnore: false}

// FetchResult is the outcome of fetching /robots.txt, after the fetcher
// followed up to MaxRedirects redirects.
type FetchResult struct {
	URL    string // the robots.txt URL asked for (resolves relative sitemaps)
	Status int    // HTTP status of the last response; 0 when there was none
	Body   []byte // the body (at most MaxFileSize is parsed)
	// Err is set when no usable response arrived: network error, timeout,
	// too many redirects.
	Err error
	// TimedOut is set when the fetch hit robots_timeout.
	TimedOut bool
	// TooManyRedirects is set when more than MaxRedirects redirects were
	// met (RFC 9309 section 2.3.1.2: the file MAY be taken as unavailable).
	TooManyRedirects bool
}

// MaxRedirects is how many consecutive redirects a robots.txt fetch follows
// (RFC 9309 section 2.3.1.2: at least five).
const MaxRedirects = 5

// FromFetch turns a fetch outcome into the rules for token, per RFC 9309
// section 2.3.1 and the policy:
//
//	2xx                      parse the body
//	3xx (not followed)       unavailable: allow all
//	too many redirects       unavailable: allow all
//	401, 403                 allow all if AuthIgnore, else disallow all
//	429                      unreachable: disallow all (a "slow down" is not "no file")
//	other 4xx                unavailable: allow all
//	5xx, other codes         unreachable: disallow all
//	timeout                  allow all if TimeoutIgnore, else disallow all
//	network error            unreachable: disallow all
func FromFetch(res FetchResult, token string, p Policy) *Rules {
	switch {
	case res.TooManyRedirects:
		return AllowAll(res.Status, "robots.txt: too many redirects")
	case res.TimedOut:
		if p.TimeoutIgnore {
			return AllowAll(0, "robots.txt: timed out, ignored (robots_tout_ignore)")
		}
		return temporary(DisallowAll(0, "robots.txt: timed out"))
	case res.Err != nil:
		return temporary(DisallowAll(0, fmt.Sprintf("robots.txt: unreachable: %v", res.Err)))
	}
	s := res.Status
	switch {
	case s >= 200 && s < 300:
		r := Parse(res.Body).For(token, res.URL)
		r.Status = s
		return r
	case s >= 300 && s < 400:
		return AllowAll(s, "robots.txt: unfollowed redirect")
	case s == 401 || s == 403:
		if p.AuthIgnore {
			return AllowAll(s, fmt.Sprintf("robots.txt: status %d ignored (robots_auth_ignore)", s))
		}
		return DisallowAll(s, fmt.Sprintf("robots.txt: status %d", s))
	case s == 429:
		return temporary(DisallowAll(s, "robots.txt: status 429"))
	case s >= 400 && s < 500:
		return AllowAll(s, fmt.Sprintf("robots.txt: status %d, unavailable", s))
	default:
		return temporary(DisallowAll(s, fmt.Sprintf("robots.txt: status %d, unreachable", s)))
	}
}

func temporary(r *Rules) *Rules {
	r.Temporary = true
	return r
}
