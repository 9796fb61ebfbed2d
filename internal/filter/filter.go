package filter

import (
	"errors"
	"hash/maphash"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"time"
)

// DefaultCacheSize is the number of hosts whose domain verdict a Filter
// remembers.
const DefaultCacheSize = 4096

// Config holds the four rule sections of a collection (or subcollection).
type Config struct {
	IncludeDomains, ExcludeDomains []Rule
	IncludeURIs, ExcludeURIs       []Rule
	// BaseDir resolves relative file rules (the configuration's directory).
	BaseDir string
	// MatchTimeout bounds each regexp match (0: DefaultMatchTimeout).
	MatchTimeout time.Duration
	// CacheSize is the size of the per-host domain verdict cache, rounded
	// up to a power of two (0: DefaultCacheSize, negative: no cache).
	CacheSize int
}

// Reasons returned by Allowed when no include rule matched.
const (
	ReasonNoIncludeDomain = "include_domains: no rule matches the host"
	ReasonNoIncludeURI    = "include_uris: no rule matches the URI"
	ReasonNoHost          = "filter: URI has no host"
)

// Filter decides whether a URI is in the scope of a collection:
//
//	(include_domains empty or matching) and not exclude_domains matching
//	and (include_uris empty or matching) and not exclude_uris matching
//
// It is safe for concurrent use.
type Filter struct {
	IncludeDomains, ExcludeDomains *List
	IncludeURIs, ExcludeURIs       *List

	usesIP bool
	cache  *hostCache
}

// New compiles the four sections.
func New(c Config) (*Filter, error) {
	f := &Filter{}
	var err error
	compile := func(rules []Rule, kind Kind, name string) *List {
		if err != nil {
			return nil
		}
		var l *List
		l, err = Compile(rules, WithKind(kind), WithName(name), WithBaseDir(c.BaseDir), WithMatchTimeout(c.MatchTimeout))
		return l
	}
	f.IncludeDomains = compile(c.IncludeDomains, Domains, "include_domains")
	f.ExcludeDomains = compile(c.ExcludeDomains, Domains, "exclude_domains")
	f.IncludeURIs = compile(c.IncludeURIs, URIs, "include_uris")
	f.ExcludeURIs = compile(c.ExcludeURIs, URIs, "exclude_uris")
	if err != nil {
		return nil, err
	}
	f.usesIP = f.IncludeDomains.HasIPRules() || f.ExcludeDomains.HasIPRules()
	if c.CacheSize >= 0 && (len(f.IncludeDomains.regexps) > 0 || len(f.ExcludeDomains.regexps) > 0) {
		n := c.CacheSize
		if n == 0 {
			n = DefaultCacheSize
		}
		f.cache = newHostCache(n)
	}
	return f, nil
}

// UsesIP reports whether a domain section has ipmask or ip6mask rules, so
// that the verdict depends on the IP address the host resolves to: such a
// filter must be consulted again once the address is known.
func (f *Filter) UsesIP() bool { return f.usesIP }

// AllowedURL is Allowed for a parsed URI.
func (f *Filter) AllowedURL(u *url.URL, ip netip.Addr) (bool, string) {
	return f.Allowed(u.String(), ip)
}

// Allowed reports whether uri (normalized, see package urls) passes the
// filter, and when it does not, which rule or section rejected it. ip is
// the address the host resolved to, or the zero Addr when it is not
// known; an IP-literal host stands for itself. It does not allocate
// unless a regexp actually runs on a host the cache has not seen, or the
// host is not lower case.
func (f *Filter) Allowed(uri string, ip netip.Addr) (ok bool, reason string) {
	host := hostOf(uri)
	if host == "" {
		return false, ReasonNoHost
	}
	if ok, reason = f.domainAllowed(host, ip); !ok {
		return false, reason
	}
	if l := f.IncludeURIs; l.Len() > 0 {
		i, ok, err := l.find(uri)
		if err != nil && !ok {
			return false, l.timeouts[i]
		}
		if !ok {
			return false, ReasonNoIncludeURI
		}
	}
	if l := f.ExcludeURIs; l.Len() > 0 {
		i, ok, err := l.find(uri)
		if ok {
			return false, l.descs[i]
		}
		if err != nil {
			return false, l.timeouts[i]
		}
	}
	return true, ""
}

// hostVerdict is the result of the domain name rules for one host.
type hostVerdict struct {
	host    string
	include int32 // rule index that matched in include_domains, or -1
	exclude int32 // rule index that matched in exclude_domains, or -1
}

func (f *Filter) domainAllowed(host string, ip netip.Addr) (bool, string) {
	inc, exc := f.IncludeDomains, f.ExcludeDomains
	if inc.Len() == 0 && exc.Len() == 0 {
		return true, ""
	}
	if hasUpper(host) {
		host = strings.ToLower(host)
	}
	if f.usesIP && !ip.IsValid() {
		if a, err := netip.ParseAddr(host); err == nil {
			ip = a
		}
	}
	var v hostVerdict
	hit := false
	if f.cache != nil {
		if p := f.cache.get(host); p != nil {
			v, hit = *p, true
		}
	}
	if !hit {
		v = hostVerdict{include: -1, exclude: -1}
		cacheable := true
		if inc.HasNameRules() {
			i, ok, err := inc.find(host)
			if ok {
				v.include = int32(i)
			} else if err != nil {
				cacheable = false
				if !inc.MatchIP(ip) {
					return false, inc.timeouts[i]
				}
			}
		}
		if exc.HasNameRules() {
			i, ok, err := exc.find(host)
			if ok {
				v.exclude = int32(i)
			} else if err != nil {
				return false, exc.timeouts[i]
			}
		}
		if f.cache != nil && cacheable {
			f.cache.put(&hostVerdict{host: strings.Clone(host), include: v.include, exclude: v.exclude})
		}
	}
	if inc.Len() > 0 && v.include < 0 && !inc.MatchIP(ip) {
		return false, ReasonNoIncludeDomain
	}
	if v.exclude >= 0 {
		return false, exc.descs[v.exclude]
	}
	if j := exc.findIP(ip); j >= 0 {
		return false, exc.descs[j]
	}
	return true, ""
}

// hostOf returns the host of an absolute URI without port, userinfo or
// IPv6 brackets, or "" when there is none. It does not allocate.
func hostOf(uri string) string {
	i := strings.Index(uri, "://")
	if i < 0 {
		return ""
	}
	rest := uri[i+3:]
	if end := strings.IndexAny(rest, "/?#"); end >= 0 {
		rest = rest[:end]
	}
	if at := strings.LastIndexByte(rest, '@'); at >= 0 {
		rest = rest[at+1:]
	}
	if strings.HasPrefix(rest, "[") {
		if j := strings.IndexByte(rest, ']'); j > 0 {
			return rest[1:j]
		}
		return ""
	}
	if j := strings.LastIndexByte(rest, ':'); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

// hostCache is a bounded, lock-free cache of host verdicts: a host lives
// in one of two slots chosen by its hash, and a new host evicts the
// entry in its second slot. Readers never block
// and a hit does not allocate.
type hostCache struct {
	seed  maphash.Seed
	mask  uint64
	slots []atomic.Pointer[hostVerdict]
}

func newHostCache(n int) *hostCache {
	size := 1
	for size < n {
		size <<= 1
	}
	return &hostCache{seed: maphash.MakeSeed(), mask: uint64(size - 1), slots: make([]atomic.Pointer[hostVerdict], size)}
}

// slotsOf returns the two slots a host may occupy.
func (c *hostCache) slotsOf(host string) (a, b *atomic.Pointer[hostVerdict]) {
	h := maphash.String(c.seed, host)
	return &c.slots[h&c.mask], &c.slots[(h>>32)&c.mask]
}

func (c *hostCache) get(host string) *hostVerdict {
	a, b := c.slotsOf(host)
	if v := a.Load(); v != nil && v.host == host {
		return v
	}
	if v := b.Load(); v != nil && v.host == host {
		return v
	}
	return nil
}

// put stores v in an empty slot of its two, or evicts the entry of the
// second slot (two choices keep collisions between hot hosts rare).
func (c *hostCache) put(v *hostVerdict) {
	a, b := c.slotsOf(v.host)
	if a.Load() == nil {
		a.Store(v)
		return
	}
	b.Store(v)
}

// IsTimeout reports whether err comes from a regexp match that ran out of
// time.
func IsTimeout(err error) bool { return errors.Is(err, ErrTimeout) }

// IsTimeoutReason reports whether reason, as Allowed returns it, says a
// regexp match ran out of time (the URI was rejected for that).
func IsTimeoutReason(reason string) bool { return strings.HasSuffix(reason, ": match timed out") }
