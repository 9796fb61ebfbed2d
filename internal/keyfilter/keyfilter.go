// Package keyfilter is a Bloom filter of store keys, for callers that read
// keys a store almost never has: a key the filter does not hold is
// certainly absent and need not be read. Keys are grouped in families (a
// byte hashed with the key), so one filter serves several key spaces.
//
// A filter is a cache of the store and must never miss a key that exists:
// its owner loads it from the store, adds every key before (or in the same
// critical section as) writing it, and leaves deleted keys in (a false
// positive costs only the read). When Full, the owner drops it and loads it
// again, sized for what the store holds then.
package keyfilter

import "hash/maphash"

// Bits per key a filter is sized for and probes per key: about 1 % false
// positives when full.
const (
	bitsPerKey = 10
	probes     = 7
)

// MinKeys is the least number of keys a new filter is sized for.
const MinKeys = 1 << 16

var seed = maphash.MakeSeed()

// Filter is a Bloom filter; not safe for concurrent use.
type Filter struct {
	bits     []uint64
	n, limit int
}

// New returns a filter for a store holding keys keys: sized for twice as
// many (at least MinKeys), so that it takes as many writes again before it
// is Full.
func New(keys int) *Filter { return NewMin(keys, MinKeys) }

// NewMin is New with another least size (tests).
func NewMin(keys, least int) *Filter {
	limit := max(2*keys, least, 1)
	return &Filter{bits: make([]uint64, (limit*bitsPerKey+63)/64), limit: limit}
}

// Load returns a filter of the keys scan visits, sized as NewMin(n, least)
// for the n keys there are: scan runs twice, once to count them and once
// to add them, so that no copy of them is kept. scan calls visit with each
// key's family and bytes.
func Load(least int, scan func(visit func(fam byte, key []byte)) error) (*Filter, error) {
	n := 0
	if err := scan(func(byte, []byte) { n++ }); err != nil {
		return nil, err
	}
	f := NewMin(n, least)
	if err := scan(f.AddBytes); err != nil {
		return nil, err
	}
	return f, nil
}

// Limit is the number of additions the filter is sized for.
func (f *Filter) Limit() int { return f.limit }

// Full reports whether the filter has had as many additions as it is sized
// for (its false positives grow beyond that).
func (f *Filter) Full() bool { return f.n >= f.limit }

func hashString(fam byte, key string) (uint64, uint64) {
	var h maphash.Hash
	h.SetSeed(seed)
	h.WriteByte(fam)
	h.WriteString(key)
	return split(h.Sum64())
}

func hashBytes(fam byte, key []byte) (uint64, uint64) {
	var h maphash.Hash
	h.SetSeed(seed)
	h.WriteByte(fam)
	h.Write(key)
	return split(h.Sum64())
}

func split(a uint64) (uint64, uint64) { return a, a>>33 | a<<31 | 1 }

// Add adds fam's key.
func (f *Filter) Add(fam byte, key string) { f.set(hashString(fam, key)) }

// AddBytes is Add for a key as bytes (the same hash).
func (f *Filter) AddBytes(fam byte, key []byte) { f.set(hashBytes(fam, key)) }

func (f *Filter) set(a, b uint64) {
	m := uint64(len(f.bits) * 64)
	for i := range uint64(probes) {
		x := (a + i*b) % m
		f.bits[x/64] |= 1 << (x % 64)
	}
	f.n++
}

// Has reports whether fam's key may exist.
func (f *Filter) Has(fam byte, key string) bool { return f.test(hashString(fam, key)) }

// HasBytes is Has for a key as bytes.
func (f *Filter) HasBytes(fam byte, key []byte) bool { return f.test(hashBytes(fam, key)) }

func (f *Filter) test(a, b uint64) bool {
	m := uint64(len(f.bits) * 64)
	for i := range uint64(probes) {
		x := (a + i*b) % m
		if f.bits[x/64]&(1<<(x%64)) == 0 {
			return false
		}
	}
	return true
}
