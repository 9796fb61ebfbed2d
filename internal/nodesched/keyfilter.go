package nodesched

import (
	"hash/maphash"

	"github.com/trawl/trawl/internal/store"
)

// Feeding reads, for every document it feeds, records that a first crawl
// has for almost none of them: the document's feeding mark, its lists of
// duplicates and redirects, and where its URI is listed (feeding.go,
// reported.go). Each is a Pebble point read of an absent key, together
// about 5 % of the main job's CPU. keyFilter is a Bloom filter of the keys
// of those four families a collection has: a key it does not hold is
// certainly absent and is not read.
//
// It is a cache of the store, so it must never miss a key that exists:
// it is loaded by scanning the four prefixes the first time it is asked,
// and every write of such a key (markKey in feedPresent, listKey and
// listedKey in flushLists) adds it first. Deletions leave their keys in
// (a false positive costs only the read). When it holds more keys than it
// was sized for, the next crawl step drops it, before it writes anything,
// and it is loaded again at twice the size of what the store has then.

// Key families of a keyFilter.
const (
	famMark      byte = 'i'
	famDupList   byte = listDuplicates
	famRedirList byte = listRedirects
	famListed    byte = 'e'
)

// keyFilterBits is the filter's bits per key it is sized for (10 bits and
// 7 probes: about 1 % false positives when full).
const (
	keyFilterBits   = 10
	keyFilterProbes = 7
	keyFilterMin    = 1 << 16 // keys a new filter is sized for, at least
)

var keyFilterSeed = maphash.MakeSeed()

type keyFilter struct {
	bits     []uint64
	n, limit int
}

func newKeyFilter(keys int) *keyFilter {
	limit := max(2*keys, keyFilterMin)
	return &keyFilter{bits: make([]uint64, (limit*keyFilterBits+63)/64), limit: limit}
}

func keyHash(fam byte, key string) (uint64, uint64) {
	var h maphash.Hash
	h.SetSeed(keyFilterSeed)
	h.WriteByte(fam)
	h.WriteString(key)
	return probes(h.Sum64())
}

func probes(a uint64) (uint64, uint64) { return a, a>>33 | a<<31 | 1 }

func (f *keyFilter) add(fam byte, key string) { f.set(keyHash(fam, key)) }

// addBytes is add for a key as bytes (the same hash).
func (f *keyFilter) addBytes(fam byte, key []byte) {
	var h maphash.Hash
	h.SetSeed(keyFilterSeed)
	h.WriteByte(fam)
	h.Write(key)
	f.set(probes(h.Sum64()))
}

func (f *keyFilter) set(a, b uint64) {
	m := uint64(len(f.bits) * 64)
	for i := range uint64(keyFilterProbes) {
		x := (a + i*b) % m
		f.bits[x/64] |= 1 << (x % 64)
	}
	f.n++
}

// has reports whether fam's key may exist.
func (f *keyFilter) has(fam byte, key string) bool {
	a, b := keyHash(fam, key)
	m := uint64(len(f.bits) * 64)
	for i := range uint64(keyFilterProbes) {
		x := (a + i*b) % m
		if f.bits[x/64]&(1<<(x%64)) == 0 {
			return false
		}
	}
	return true
}

// keyFamilies are the prefixes a keyFilter covers.
var keyFamilies = []struct {
	fam    byte
	prefix string
}{{famMark, feedMarkPrefix}, {famDupList, feedDupListPrefix}, {famRedirList, feedRedirListPrefix}, {famListed, feedListedPrefix}}

// mayExist reports whether the key of fam for uri (a URI or a document)
// in collection c may exist. On a store error it says yes: the read then
// reports the error.
func (m *Machine) mayExist(c *collection, fam byte, uri string) bool {
	f, err := m.keyFilter(c)
	return err != nil || f.has(fam, uri)
}

// keyAdded tells c's filter, if loaded, that the key of fam for uri is
// written.
func (c *collection) keyAdded(fam byte, uri string) {
	if c.keys != nil {
		c.keys.add(fam, uri)
	}
}

// keysCheck drops c's filter when it is over its size; it is called when
// every write the filter was told about is in the store (or its stage).
func (c *collection) keysCheck() {
	if c.keys != nil && c.keys.n >= c.keys.limit {
		c.keys = nil
	}
}

// keyFilter returns c's filter, loading it from the store if need be: one
// pass counts the keys (to size the filter), a second adds them, neither
// keeps a copy of them.
func (m *Machine) keyFilter(c *collection) (*keyFilter, error) {
	if c.keys != nil {
		return c.keys, nil
	}
	var f *keyFilter
	n := 0
	for pass := range 2 {
		if pass == 1 {
			f = newKeyFilter(n)
		}
		for _, kf := range keyFamilies {
			p := store.AppendLP([]byte(kf.prefix), c.s.Name)
			err := m.st.IterRaw(store.SpaceMeta, p, func(k, _ []byte) error {
				if f == nil {
					n++
				} else {
					f.addBytes(kf.fam, k[len(p):])
				}
				return nil
			})
			if err != nil {
				return nil, err
			}
		}
	}
	c.keys = f
	return f, nil
}
