package fetch

import (
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"sync"
	"time"

	"golang.org/x/net/publicsuffix"
)

// MaxSessionCookies bounds the session cookies a Jar tracks for
// cookie_timeout; past it the one closest to its end is dropped early.
const MaxSessionCookies = 1 << 16

// Jar is a collection's cookie store (use_cookies): RFC 6265 domain and
// path matching from net/http/cookiejar, with the public suffix list of
// golang.org/x/net/publicsuffix so that a site cannot set a cookie for a
// whole registry domain (".co.uk", ".github.io"). cookie_timeout bounds the
// life of session cookies (those with neither Expires nor Max-Age): they
// are dropped SessionTTL after they were last set, on the Jar's clock.
// It is safe for concurrent use.
type Jar struct {
	jar        *cookiejar.Jar
	sessionTTL time.Duration
	now        func() time.Time

	mu       sync.Mutex
	sessions map[sessionKey]sessionCookie
	next     time.Time // earliest deadline in sessions (zero: none)
}

type sessionKey struct{ host, domain, path, name string }

type sessionCookie struct {
	u     *url.URL // the URL that set it (to delete it through the jar)
	until time.Time
}

// NewJar returns an empty jar. sessionTTL is cookie_timeout (0: session
// cookies live as long as the jar); now is the clock (nil: time.Now).
func NewJar(sessionTTL time.Duration, now func() time.Time) (*Jar, error) {
	j, err := cookiejar.New(&cookiejar.Options{PublicSuffixList: publicsuffix.List})
	if err != nil {
		return nil, fmt.Errorf("fetch: cookie jar: %w", err)
	}
	if now == nil {
		now = time.Now
	}
	return &Jar{jar: j, sessionTTL: sessionTTL, now: now, sessions: map[sessionKey]sessionCookie{}}, nil
}

// SetCookies implements http.CookieJar.
func (j *Jar) SetCookies(u *url.URL, cookies []*http.Cookie) {
	j.jar.SetCookies(u, cookies)
	if j.sessionTTL <= 0 {
		return
	}
	now := j.now()
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, c := range cookies {
		k := sessionKey{host: u.Hostname(), domain: c.Domain, path: c.Path, name: c.Name}
		if c.MaxAge != 0 || !c.Expires.IsZero() {
			delete(j.sessions, k) // replaced by a persistent cookie, or deleted
			continue
		}
		if _, ok := j.sessions[k]; !ok && len(j.sessions) >= MaxSessionCookies {
			j.expireOldestLocked()
		}
		cu := *u
		until := now.Add(j.sessionTTL)
		j.sessions[k] = sessionCookie{u: &cu, until: until}
		if j.next.IsZero() || until.Before(j.next) {
			j.next = until
		}
	}
}

// Cookies implements http.CookieJar. Session cookies older than
// cookie_timeout are removed first.
func (j *Jar) Cookies(u *url.URL) []*http.Cookie {
	if j.sessionTTL > 0 {
		j.expire(j.now())
	}
	return j.jar.Cookies(u)
}

func (j *Jar) expire(now time.Time) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.next.IsZero() || now.Before(j.next) {
		return
	}
	j.next = time.Time{}
	for k, s := range j.sessions {
		if !now.Before(s.until) {
			j.deleteLocked(k, s)
		} else if j.next.IsZero() || s.until.Before(j.next) {
			j.next = s.until
		}
	}
}

func (j *Jar) expireOldestLocked() {
	var (
		oldest sessionKey
		first  = true
		at     time.Time
	)
	for k, s := range j.sessions {
		if first || s.until.Before(at) {
			oldest, at, first = k, s.until, false
		}
	}
	if !first {
		j.deleteLocked(oldest, j.sessions[oldest])
	}
}

func (j *Jar) deleteLocked(k sessionKey, s sessionCookie) {
	delete(j.sessions, k)
	j.jar.SetCookies(s.u, []*http.Cookie{{Name: k.name, Domain: k.domain, Path: k.path, MaxAge: -1}})
}
