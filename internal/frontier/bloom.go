package frontier

import (
	"encoding/binary"
	"fmt"
	"math"
)

// bloom is a Bloom filter with k hash functions derived from one 64-bit
// FNV-1a hash by double hashing. The hash is fixed (no random seed) so the
// bit array can be saved and loaded.
type bloom struct {
	bits []uint64
	m    uint64 // number of bits
	k    uint32
}

// bloomHashes returns the number of hash functions for a false-positive
// rate p at the filter's optimal load: k = -log2(p).
func bloomHashes(p float64) uint32 {
	k := uint32(math.Round(-math.Log2(p)))
	if k < 1 {
		k = 1
	}
	if k > 30 {
		k = 30
	}
	return k
}

// BloomCapacity is how many URIs a filter of m bits holds at false-positive
// rate p: n = -m (ln 2)^2 / ln p.
func BloomCapacity(m int, p float64) int {
	return int(-float64(m) * math.Ln2 * math.Ln2 / math.Log(p))
}

func newBloom(m int, p float64) *bloom {
	words := (m + 63) / 64
	return &bloom{bits: make([]uint64, words), m: uint64(words * 64), k: bloomHashes(p)}
}

// bloomHash is FNV-1a over s, written out so that it does not allocate.
func bloomHash[T string | []byte](s T) (uint64, uint64) {
	a := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		a ^= uint64(s[i])
		a *= 1099511628211
	}
	// A second, independent-enough hash: mix a (splitmix64 finalizer).
	b := a + 0x9e3779b97f4a7c15
	b = (b ^ (b >> 30)) * 0xbf58476d1ce4e5b9
	b = (b ^ (b >> 27)) * 0x94d049bb133111eb
	b ^= b >> 31
	return a, b | 1
}

func (f *bloom) add(s string) { f.addHash(bloomHash(s)) }

func (f *bloom) addBytes(s []byte) { f.addHash(bloomHash(s)) }

func (f *bloom) addHash(a, b uint64) {
	for i := uint32(0); i < f.k; i++ {
		bit := (a + uint64(i)*b) % f.m
		f.bits[bit/64] |= 1 << (bit % 64)
	}
}

func (f *bloom) has(s string) bool {
	a, b := bloomHash(s)
	for i := uint32(0); i < f.k; i++ {
		bit := (a + uint64(i)*b) % f.m
		if f.bits[bit/64]&(1<<(bit%64)) == 0 {
			return false
		}
	}
	return true
}

func (f *bloom) reset() { clear(f.bits) }

func (f *bloom) marshal() []byte {
	b := make([]byte, 0, 8+len(f.bits)*8)
	b = binary.BigEndian.AppendUint32(b, f.k)
	b = binary.BigEndian.AppendUint32(b, uint32(len(f.bits)))
	for _, w := range f.bits {
		b = binary.BigEndian.AppendUint64(b, w)
	}
	return b
}

// loadBloom restores a filter saved by marshal if it has the same shape.
func (f *bloom) load(b []byte) error {
	if len(b) < 8 {
		return fmt.Errorf("%w: bloom header", errCorrupt)
	}
	k, n := binary.BigEndian.Uint32(b), binary.BigEndian.Uint32(b[4:])
	if k != f.k || int(n) != len(f.bits) || len(b) != 8+8*int(n) {
		return fmt.Errorf("%w: bloom shape changed", errCorrupt)
	}
	for i := range f.bits {
		f.bits[i] = binary.BigEndian.Uint64(b[8+8*i:])
	}
	return nil
}
