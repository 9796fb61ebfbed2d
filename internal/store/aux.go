package store

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"sync"
	"time"
)

// DNSRecord is one entry of the DNS cache: the addresses of a host and when
// they expire. An empty Addrs with Failed set caches a failed lookup.
type DNSRecord struct {
	Host    string
	Addrs   []netip.Addr
	Expires time.Time
	Failed  bool
}

const dnsVersion = 1

// maxDNSAddrs caps the addresses one record may hold.
const maxDNSAddrs = 256

func marshalDNS(r *DNSRecord) []byte {
	b := []byte{dnsVersion}
	fl := byte(0)
	if r.Failed {
		fl = 1
	}
	b = append(b, fl)
	b = binary.AppendVarint(b, r.Expires.UnixNano())
	b = binary.AppendUvarint(b, uint64(len(r.Addrs)))
	for _, a := range r.Addrs {
		ab, _ := a.MarshalBinary()
		b = appendLPBytes(b, ab)
	}
	return b
}

func unmarshalDNS(host string, b []byte) (*DNSRecord, error) {
	if len(b) < 2 || b[0] != dnsVersion || b[1] > 1 {
		return nil, fmt.Errorf("%w: dns record header", errCorrupt)
	}
	r := &DNSRecord{Host: host, Failed: b[1] == 1}
	d := recordReader{b: b[2:]}
	r.Expires = d.time()
	n := d.uvarint()
	if d.err != nil {
		return nil, d.err
	}
	if n > maxDNSAddrs || n > uint64(len(d.b)) {
		return nil, fmt.Errorf("%w: %d addresses", errCorrupt, n)
	}
	for i := uint64(0); i < n; i++ {
		ab, rest, err := readLPBytes(d.b)
		if err != nil {
			return nil, err
		}
		var a netip.Addr
		if err := a.UnmarshalBinary(ab); err != nil {
			return nil, fmt.Errorf("%w: address: %v", errCorrupt, err)
		}
		r.Addrs = append(r.Addrs, a)
		d.b = rest
	}
	if len(d.b) != 0 {
		return nil, fmt.Errorf("%w: trailing bytes in dns record", errCorrupt)
	}
	return r, nil
}

// PutDNS caches a DNS answer.
func (b *Batch) PutDNS(r *DNSRecord) error {
	if len(r.Addrs) > maxDNSAddrs {
		return fmt.Errorf("store: %d addresses for %s, at most %d", len(r.Addrs), r.Host, maxDNSAddrs)
	}
	return b.b.Set(key(SpaceDNS, r.Host), marshalDNS(r), nil)
}

// DeleteDNS removes a cached DNS answer.
func (b *Batch) DeleteDNS(host string) error {
	return b.b.Delete(key(SpaceDNS, host), nil)
}

// DNS returns the cached record for host. ok is false when there is none or
// when it expired at now.
func (s *Store) DNS(host string, now time.Time) (rec *DNSRecord, ok bool, err error) {
	v, found, err := s.get(key(SpaceDNS, host))
	if err != nil || !found {
		return nil, false, err
	}
	rec, err = unmarshalDNS(host, v)
	if err != nil {
		return nil, false, err
	}
	if !now.Before(rec.Expires) {
		return rec, false, nil
	}
	return rec, true, nil
}

// PutRoute records that site of collection is crawled by node.
func (b *Batch) PutRoute(collection, site string, node int64) error {
	k := key(SpaceRoute, site, collection)
	if err := b.b.Set(k, binary.AppendVarint(nil, node), nil); err != nil {
		return err
	}
	b.routes = append(b.routes, routeChange{k: string(k), node: node, ok: true})
	return nil
}

// DeleteRoute forgets the routing decision for site.
func (b *Batch) DeleteRoute(collection, site string) error {
	k := key(SpaceRoute, site, collection)
	if err := b.b.Delete(k, nil); err != nil {
		return err
	}
	b.routes = append(b.routes, routeChange{k: string(k)})
	return nil
}

// Route returns the node that crawls site. Answers (found or not) are
// cached in memory: a crawl step asks for every link it found.
func (s *Store) Route(collection, site string) (node int64, ok bool, err error) {
	k := key(SpaceRoute, site, collection)
	s.routes.mu.Lock()
	if r, hit := s.routes.m[string(k)]; hit {
		s.routes.mu.Unlock()
		return r.node, r.ok, nil
	}
	gen := s.routes.gen
	s.routes.mu.Unlock()
	v, found, err := s.get(k)
	if err != nil {
		return 0, false, err
	}
	if found {
		var m int
		node, m = binary.Varint(v)
		if m <= 0 || m != len(v) {
			return 0, false, fmt.Errorf("%w: route value", errCorrupt)
		}
	}
	s.routes.put(gen, string(k), routeVal{node: node, ok: found})
	return node, found, nil
}

// maxRouteCache bounds the route cache (it is emptied when full).
const maxRouteCache = 1 << 18

type routeVal struct {
	node int64
	ok   bool
}

type routeChange struct {
	k    string
	node int64
	ok   bool
}

// routeCache remembers route lookups. gen counts commits that changed
// routes: a lookup that read the database before such a commit does not
// store its (maybe stale) answer.
type routeCache struct {
	mu  sync.Mutex
	gen uint64
	m   map[string]routeVal
}

func (c *routeCache) put(gen uint64, k string, v routeVal) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	if c.m == nil || len(c.m) >= maxRouteCache {
		c.m = map[string]routeVal{}
	}
	c.m[k] = v
}

// apply records the route changes of a committed batch (all: a prefix of
// the route space was deleted).
func (c *routeCache) apply(changes []routeChange, all bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	if all {
		c.m = nil
		return
	}
	for _, ch := range changes {
		if c.m != nil {
			c.m[ch.k] = routeVal{node: ch.node, ok: ch.ok}
		}
	}
}

// Routes calls fn for every routing decision of collection, in site order.
func (s *Store) Routes(collection string, fn func(site string, node int64) error) error {
	p := key(SpaceRoute, "", collection)
	return s.iterate(p, func(k, v []byte) error {
		n, m := binary.Varint(v)
		if m <= 0 || m != len(v) {
			return fmt.Errorf("%w: route value", errCorrupt)
		}
		return fn(string(k[len(p):]), n)
	})
}

// PutChecksumOwner records owner as the URI owning checksum cs (the
// duplicate server's answer, PPDUP_ADD_OK).
func (b *Batch) PutChecksumOwner(collection string, cs [16]byte, owner string) error {
	if err := b.trackOwner(collection, cs, true); err != nil { // before the filter learns cs
		return err
	}
	b.s.csums.add(collection, cs)
	return b.b.Set(key(SpaceChecksum, string(cs[:]), collection), []byte(owner), nil)
}

// DeleteChecksumOwner forgets the owner of cs.
func (b *Batch) DeleteChecksumOwner(collection string, cs [16]byte) error {
	if err := b.trackOwner(collection, cs, false); err != nil {
		return err
	}
	return b.b.Delete(key(SpaceChecksum, string(cs[:]), collection), nil)
}

// ChecksumOwner returns the URI owning cs.
func (s *Store) ChecksumOwner(collection string, cs [16]byte) (string, bool, error) {
	if !s.csums.mayHave(collection, cs) {
		if s.closed.Load() {
			return "", false, ErrClosed
		}
		return "", false, nil
	}
	v, found, err := s.get(key(SpaceChecksum, string(cs[:]), collection))
	return string(v), found, err
}

// AddChecksumURI indexes uri under its content checksum cs.
func (b *Batch) AddChecksumURI(collection string, cs [16]byte, uri string) error {
	return b.b.Set(key(SpaceCsumURIs, string(cs[:])+uri, collection), nil, nil)
}

// RemoveChecksumURI removes uri from the index of cs.
func (b *Batch) RemoveChecksumURI(collection string, cs [16]byte, uri string) error {
	return b.b.Delete(key(SpaceCsumURIs, string(cs[:])+uri, collection), nil)
}

// ChecksumURIs calls fn for every URI indexed under cs (PPDUP_PROMOTE_REQ:
// recrawl every URI with the same checksum).
func (s *Store) ChecksumURIs(collection string, cs [16]byte, fn func(uri string) error) error {
	p := key(SpaceCsumURIs, string(cs[:]), collection)
	return s.iterate(p, func(k, _ []byte) error { return fn(string(k[len(p):])) })
}
