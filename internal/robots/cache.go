package robots

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Loader fetches robotsURL (following at most MaxRedirects redirects, within
// robots_timeout) and reports what happened. FetchLoader builds one on
// trawl's fetcher.
type Loader func(ctx context.Context, robotsURL string) FetchResult

// CacheOptions configure a Cache.
type CacheOptions struct {
	// Token is the crawler's product token (matched against user-agent
	// lines), for example "trawl".
	Token string
	// TTL is robots_ttl: how long a fetched robots.txt is used before it is
	// fetched again. Default 86400 s.
	TTL time.Duration
	// ErrorTTL is how long the outcome of an unreachable robots.txt (5xx,
	// network error, timeout) is kept before the next attempt. Default
	// min(TTL, 1 h).
	ErrorTTL time.Duration
	// MaxStale is how long a previously parsed file keeps being used while
	// the site's robots.txt is unreachable (RFC 9309 section 2.3.1.4 allows
	// a cached copy; it suggests 30 days as "reasonably long"). Default 30
	// days; negative disables.
	MaxStale time.Duration
	// MaxEntries bounds the number of sites kept (least recently used are
	// evicted). Default 100000.
	MaxEntries int
	// Policy is the robots_auth_ignore / robots_tout_ignore policy.
	Policy Policy
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Load fetches a robots.txt. Required by Get; Lookup and Put work
	// without it.
	Load Loader
}

// Cache keeps the robots rules of many sites, keyed by site (scheme, host,
// port), each for TTL. It is safe for concurrent use; concurrent Gets of one
// site share a single fetch.
type Cache struct {
	o CacheOptions

	mu       sync.Mutex
	entries  map[string]*list.Element
	lru      *list.List // front = most recently used; values are *entry
	inflight map[string]*call
}

type entry struct {
	site     string
	rules    *Rules
	expires  time.Time
	parsedAt time.Time // when rules of ModeRules were last fetched (zero otherwise)
	good     *Rules    // the last parsed rules, kept for stale use
}

type call struct {
	done  chan struct{}
	rules *Rules
	err   error
}

// NewCache returns a cache with the options' defaults filled in.
func NewCache(o CacheOptions) *Cache {
	if o.TTL <= 0 {
		o.TTL = 86400 * time.Second
	}
	if o.ErrorTTL <= 0 {
		o.ErrorTTL = min(o.TTL, time.Hour)
	}
	if o.MaxStale == 0 {
		o.MaxStale = 30 * 24 * time.Hour
	}
	if o.MaxEntries <= 0 {
		o.MaxEntries = 100000
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Cache{o: o, entries: map[string]*list.Element{}, lru: list.New(), inflight: map[string]*call{}}
}

// SiteKey returns the cache key of the site of an absolute http(s) URL:
// "scheme://host:port", lower case, with the default port made explicit.
func SiteKey(rawURL string) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", fmt.Errorf("robots: site of %q: %w", rawURL, err)
	}
	scheme := strings.ToLower(u.Scheme)
	host := strings.ToLower(u.Hostname())
	if host == "" || (scheme != "http" && scheme != "https") {
		return "", fmt.Errorf("robots: site of %q: not an absolute http(s) URL", rawURL)
	}
	port := u.Port()
	if port == "" {
		port = "80"
		if scheme == "https" {
			port = "443"
		}
	}
	return scheme + "://" + net.JoinHostPort(host, port), nil
}

// RobotsURL returns the robots.txt URL of a site key or of any URL of the
// site, without the default port.
func RobotsURL(rawURL string) (string, error) {
	key, err := SiteKey(rawURL)
	if err != nil {
		return "", err
	}
	u, _ := url.Parse(key)
	if (u.Scheme == "http" && u.Port() == "80") || (u.Scheme == "https" && u.Port() == "443") {
		u.Host = u.Hostname()
		if strings.Contains(u.Host, ":") {
			u.Host = "[" + u.Host + "]"
		}
	}
	return u.Scheme + "://" + u.Host + "/robots.txt", nil
}

// Lookup returns the cached rules of the site of rawURL if they have not
// expired. It never fetches.
func (c *Cache) Lookup(rawURL string) (*Rules, bool) {
	key, err := SiteKey(rawURL)
	if err != nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[key]
	if !ok {
		return nil, false
	}
	e := el.Value.(*entry)
	if !c.o.Now().Before(e.expires) {
		return nil, false
	}
	c.lru.MoveToFront(el)
	return e.rules, true
}

// Put stores rules for the site of rawURL, as if just fetched: they expire
// after TTL (ErrorTTL for Temporary rules). When the new rules are
// Temporary and the site has parsed rules younger than MaxStale, those are
// kept in use instead (and tried again after ErrorTTL). It returns the rules
// now in effect.
func (c *Cache) Put(rawURL string, r *Rules) (*Rules, error) {
	key, err := SiteKey(rawURL)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.putLocked(key, r), nil
}

func (c *Cache) putLocked(key string, r *Rules) *Rules {
	now := c.o.Now()
	var e *entry
	if el, ok := c.entries[key]; ok {
		e = el.Value.(*entry)
		c.lru.MoveToFront(el)
	} else {
		e = &entry{site: key}
		c.entries[key] = c.lru.PushFront(e)
		for c.lru.Len() > c.o.MaxEntries {
			old := c.lru.Back()
			c.lru.Remove(old)
			delete(c.entries, old.Value.(*entry).site)
		}
	}
	switch {
	case r.Mode == ModeRules:
		e.rules, e.good, e.parsedAt = r, r, now
		e.expires = now.Add(c.o.TTL)
	case r.Temporary:
		e.expires = now.Add(c.o.ErrorTTL)
		if e.good != nil && c.o.MaxStale > 0 && now.Sub(e.parsedAt) < c.o.MaxStale {
			e.rules = e.good
		} else {
			e.rules = r
		}
	default:
		e.rules = r
		e.expires = now.Add(c.o.TTL)
	}
	return e.rules
}

// Len is the number of sites in the cache.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}

// Get returns the rules of the site of rawURL, fetching /robots.txt through
// the Loader when the cached rules are missing or expired. Concurrent calls
// for one site share one fetch. It fails only on a URL with no site, a
// missing Loader, or the end of ctx.
func (c *Cache) Get(ctx context.Context, rawURL string) (*Rules, error) {
	if r, ok := c.Lookup(rawURL); ok {
		return r, nil
	}
	key, err := SiteKey(rawURL)
	if err != nil {
		return nil, err
	}
	if c.o.Load == nil {
		return nil, errors.New("robots: cache has no loader")
	}
	c.mu.Lock()
	cl, ok := c.inflight[key]
	if !ok {
		cl = &call{done: make(chan struct{})}
		c.inflight[key] = cl
		c.mu.Unlock()
		go c.load(key, cl)
	} else {
		c.mu.Unlock()
	}
	select {
	case <-cl.done:
		return cl.rules, cl.err
	case <-ctx.Done():
		return nil, fmt.Errorf("robots: waiting for %s/robots.txt: %w", key, ctx.Err())
	}
}

// load runs one fetch for a site. It does not use the caller's context, so
// that one caller giving up does not fail the others; the Loader bounds the
// fetch with robots_timeout.
func (c *Cache) load(key string, cl *call) {
	robotsURL, _ := RobotsURL(key)
	res := c.o.Load(context.Background(), robotsURL)
	if res.URL == "" {
		res.URL = robotsURL
	}
	r := FromFetch(res, c.o.Token, c.o.Policy)
	c.mu.Lock()
	cl.rules = c.putLocked(key, r)
	delete(c.inflight, key)
	c.mu.Unlock()
	close(cl.done)
}
