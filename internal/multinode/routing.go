package multinode

import (
	"hash/fnv"
	"net/netip"
	"net/url"
	"strings"

	"golang.org/x/net/idna"
	"golang.org/x/net/publicsuffix"

	"github.com/trawl/trawl/internal/cmt"
)

// normHost returns the canonical form of a host name: lower case, IDNA
// (punycode), without a port, brackets or a trailing dot. It returns "" for
// an empty or unusable name.
func normHost(h string) string {
	h = strings.TrimSpace(h)
	if h == "" {
		return ""
	}
	if strings.HasPrefix(h, "[") {
		i := strings.IndexByte(h, ']')
		if i < 0 {
			return ""
		}
		a, err := netip.ParseAddr(h[1:i])
		if err != nil {
			return ""
		}
		return a.Unmap().String()
	}
	if i := strings.LastIndexByte(h, ':'); i >= 0 && strings.Count(h, ":") == 1 {
		h = h[:i]
	}
	h = strings.TrimRight(strings.ToLower(h), ".")
	if h == "" {
		return ""
	}
	if a, err := netip.ParseAddr(h); err == nil {
		return a.Unmap().String()
	}
	if isASCII(h) {
		return h
	}
	a, err := idna.Lookup.ToASCII(h)
	if err != nil {
		return h
	}
	return strings.ToLower(a)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// entrySite returns the crawl site of a crawl queue entry: its host name
// (the IDNA field when set, else the host field, else parsed from the URI).
func entrySite(e *cmt.Entry) string {
	if h := normHost(e.URI.HostIDNA); h != "" {
		return h
	}
	if h := normHost(e.URI.Host); h != "" {
		return h
	}
	if u, err := url.Parse(e.URI.URI); err == nil {
		return normHost(u.Host)
	}
	return ""
}

// routeAttr returns the crawl routing attribute of host under spec: the
// attribute of the first member of the host's site_clusters group, if any;
// else the registered domain with domain_clustering; else the host itself.
func routeAttr(spec *CollectionSpec, host string) string {
	for _, cl := range spec.Clusters {
		for _, m := range cl.Sites {
			if host == m || strings.HasSuffix(host, "."+m) {
				return baseAttr(spec, cl.Sites[0])
			}
		}
	}
	return baseAttr(spec, host)
}

func baseAttr(spec *CollectionSpec, host string) string {
	if !spec.DomainClustering {
		return host
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return host
	}
	d, err := publicsuffix.EffectiveTLDPlusOne(host)
	if err != nil {
		return host
	}
	return d
}

// rendezvous returns the node among candidates with the highest hash of
// (node, attr): each attribute goes to one node, and a node joining or
// leaving moves only the attributes it wins or held.
func rendezvous(attr string, candidates []string) string {
	best, bestH := "", uint64(0)
	for _, n := range candidates {
		h := fnv.New64a()
		h.Write([]byte(n))
		h.Write([]byte{0})
		h.Write([]byte(attr))
		v := mix64(h.Sum64())
		if best == "" || v > bestH || (v == bestH && n < best) {
			best, bestH = n, v
		}
	}
	return best
}

// mix64 is the finalizer of MurmurHash3, spreading FNV's low-entropy high
// bits.
func mix64(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}
