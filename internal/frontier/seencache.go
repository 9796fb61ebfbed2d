package frontier

import "hash/maphash"

// seenCacheMax bounds the seen-set cache: two generations of at most half
// as many entries each, about 30-60 bytes an entry (under 16 MiB in all).
// The links a crawl meets again are mostly a few pages per site
// (navigation, home pages), which stay in the cache.
const seenCacheMax = 1 << 18

// DefaultSeenCacheSize is the seen-set cache's bound when Config leaves it
// unset (cachesize/screened).
const DefaultSeenCacheSize = seenCacheMax

// seenCache remembers, in memory, seen-set entries known to be on disk, so
// that the links a crawl meets again and again (navigation, cross-links)
// are found duplicates without a Pebble read. It only ever answers "seen
// this cycle with so many hops"; anything it does not hold goes to the
// disk as before. It is a write-through cache of committed values: a value
// enters when the transaction that wrote it commits, and leaves as soon as
// a transaction deletes its key (before that commits, which is safe: a
// missing entry only costs a disk read).
//
// Keys are 128-bit hashes of the URI with a seed chosen per process (the
// cache is never persisted); a collision would make a new URI look seen,
// and at 2^-128 per pair that is not a concern.
//
// The cache is bounded as two generations: new entries go to cur; when cur
// reaches half the bound it becomes old and a new cur starts; a hit in old
// moves the entry to cur. Memory stays under seenCacheMax entries.
type seenCache struct {
	s1, s2   maphash.Seed
	cur, old map[seenCacheKey]seenCacheVal
	max      int
}

type seenCacheKey [2]uint64

// seenCacheVal is the part of a seenValue the duplicate verdict needs.
type seenCacheVal struct {
	cycle     uint32
	hops      int32
	redirects int32
	gen       uint32 // subcollection refresh generation (subrefresh.go)
	full      bool
}

func newSeenCache(max int) *seenCache {
	return &seenCache{s1: maphash.MakeSeed(), s2: maphash.MakeSeed(), max: max}
}

func (c *seenCache) key(uri string) seenCacheKey {
	return seenCacheKey{maphash.String(c.s1, uri), maphash.String(c.s2, uri)}
}

// get returns the cached value of uri's seen-set entry.
func (c *seenCache) get(uri string) (seenCacheVal, bool) {
	k := c.key(uri)
	if v, ok := c.cur[k]; ok {
		return v, true
	}
	v, ok := c.old[k]
	if ok {
		c.put(k, v)
	}
	return v, ok
}

// set records the committed value of uri's entry (values out of the
// cache's ranges are not cached: the disk answers for them).
func (c *seenCache) set(uri string, v seenValue) {
	k := c.key(uri)
	if v.cycle < 0 || v.cycle > 1<<32-1 || v.hops < 0 || v.hops > 1<<31-1 || v.redirects < 0 || v.redirects > 1<<31-1 || v.gen > 1<<32-1 {
		c.forget(uri)
		return
	}
	c.put(k, seenCacheVal{cycle: uint32(v.cycle), hops: int32(v.hops), redirects: int32(v.redirects), gen: uint32(v.gen), full: v.full})
}

func (c *seenCache) put(k seenCacheKey, v seenCacheVal) {
	if c.cur == nil {
		c.cur = make(map[seenCacheKey]seenCacheVal)
	}
	if len(c.cur) >= c.max/2 {
		c.old, c.cur = c.cur, make(map[seenCacheKey]seenCacheVal, c.max/2)
	}
	c.cur[k] = v
}

// forget drops uri's entry.
func (c *seenCache) forget(uri string) {
	k := c.key(uri)
	delete(c.cur, k)
	delete(c.old, k)
}

// reset empties the cache.
func (c *seenCache) reset() { c.cur, c.old = nil, nil }
