package store

import (
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"sync"
)

// csumFilterMinEntries sizes the smallest part of the checksum filter
// (about 1.2 MiB at 10 bits an entry).
const csumFilterMinEntries = 1 << 20

// csumFilterHashes gives about 1% false positives at 10 bits an entry.
const csumFilterHashes = 7

// csumFilter is an in-memory Bloom filter of the content checksums the
// store holds an owner for (SpaceChecksum), per collection. Almost every
// fetched document has a new checksum, and asking Pebble about an absent
// key still walks every level's index; the filter answers "certainly
// absent" from memory.
//
// It is built at Open by scanning the checksum keys, and grows without
// rescanning as a scalable Bloom filter: when the newest part holds as many
// checksums as it was sized for, a part twice as large is added; a lookup
// asks every part. A checksum is added when a batch records it, before the
// commit: a bit set for a discarded batch only costs a disk read later, as
// do deleted checksums, which stay in the filter. Checksums are MD5 digests,
// uniformly distributed, so their halves serve as the hashes.
type csumFilter struct {
	seed  maphash.Seed
	mu    sync.RWMutex
	parts []*csumPart
}

type csumPart struct {
	bits     []uint64
	m        uint64 // bits
	n, limit int    // entries added, entries sized for
}

func newCSumPart(entries int) *csumPart {
	m := (uint64(entries)*10 + 63) &^ 63
	return &csumPart{bits: make([]uint64, m/64), m: m, limit: entries}
}

func (p *csumPart) set(a, b uint64) {
	for i := uint64(0); i < csumFilterHashes; i++ {
		h := (a + i*b) % p.m
		p.bits[h/64] |= 1 << (h % 64)
	}
	p.n++
}

func (p *csumPart) has(a, b uint64) bool {
	for i := uint64(0); i < csumFilterHashes; i++ {
		h := (a + i*b) % p.m
		if p.bits[h/64]&(1<<(h%64)) == 0 {
			return false
		}
	}
	return true
}

func (f *csumFilter) hashes(collection string, cs [16]byte) (uint64, uint64) {
	a := binary.LittleEndian.Uint64(cs[:8]) ^ maphash.String(f.seed, collection)
	b := binary.LittleEndian.Uint64(cs[8:]) | 1
	return a, b
}

// add records cs in collection.
func (f *csumFilter) add(collection string, cs [16]byte) {
	a, b := f.hashes(collection, cs)
	f.mu.Lock()
	defer f.mu.Unlock()
	last := f.parts[len(f.parts)-1]
	if last.n >= last.limit {
		last = newCSumPart(2 * last.limit)
		f.parts = append(f.parts, last)
	}
	last.set(a, b)
}

// mayHave reports whether cs may have an owner in collection.
func (f *csumFilter) mayHave(collection string, cs [16]byte) bool {
	a, b := f.hashes(collection, cs)
	f.mu.RLock()
	defer f.mu.RUnlock()
	for _, p := range f.parts {
		if p.has(a, b) {
			return true
		}
	}
	return false
}

// loadCSumFilter builds the filter from the store's checksum keys.
func loadCSumFilter(s *Store) (*csumFilter, error) {
	p := []byte{byte(SpaceChecksum)}
	n, err := s.count(p)
	if err != nil {
		return nil, err
	}
	f := &csumFilter{seed: maphash.MakeSeed()}
	part := newCSumPart(max(csumFilterMinEntries, 2*n))
	f.parts = []*csumPart{part}
	err = s.iterate(p, func(k, _ []byte) error {
		coll, rest, err := ReadLP(k[1:])
		if err != nil || len(rest) != 16 {
			return fmt.Errorf("%w: checksum key", errCorrupt)
		}
		part.set(f.hashes(coll, [16]byte(rest)))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: loading the checksum filter: %w", err)
	}
	return f, nil
}
