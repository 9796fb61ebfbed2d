package multinode

import "hash/fnv"

// bloomHashes is the number of hash functions of the mufilter: the optimum
// for a false positive rate of about 1 % (m/n ~ 9.6 bits per URI).
const bloomHashes = 7

// bloom is the mufilter of a collection: a Bloom filter of a fixed number
// of bits over the URIs node schedulers sent to the multinode scheduler. A
// false positive drops a URI that was new, which the specification accepts
// of a Bloom filter (MS-FSCCFG smfilter); it never lets a duplicate through
// while it remembers it.
type bloom struct {
	bits []uint64
	m    uint64
	n    int // URIs added since the last reset
}

func newBloom(mbits int) *bloom {
	if mbits < 64 {
		mbits = 64
	}
	return &bloom{bits: make([]uint64, (mbits+63)/64), m: uint64(mbits)}
}

func bloomHash(s string) (uint64, uint64) {
	h := fnv.New64a()
	h.Write([]byte(s))
	a := h.Sum64()
	b := mix64(a ^ 0x9e3779b97f4a7c15)
	return a, b | 1
}

// testAndAdd reports whether s was (probably) present, and adds it.
func (f *bloom) testAndAdd(s string) bool {
	a, b := bloomHash(s)
	present := true
	for i := uint64(0); i < bloomHashes; i++ {
		bit := (a + i*b) % f.m
		w, mask := bit/64, uint64(1)<<(bit%64)
		if f.bits[w]&mask == 0 {
			present = false
			f.bits[w] |= mask
		}
	}
	if !present {
		f.n++
	}
	return present
}

func (f *bloom) reset() {
	clear(f.bits)
	f.n = 0
}
