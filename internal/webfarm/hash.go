package webfarm

// Deterministic mixing and a tiny PRNG. Everything the farm serves is a pure
// function of (seed, host, path, cycle); these helpers turn those inputs into
// well-spread 64-bit numbers without allocating.

// mix64 is the splitmix64 finaliser.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// hash combines the farm seed with up to four integers and a salt naming
// the decision, so different decisions about the same page are independent.
func hash(seed uint64, salt uint64, a, b, c int) uint64 {
	h := mix64(seed ^ 0x9e3779b97f4a7c15*(salt+1))
	h = mix64(h ^ uint64(a))
	h = mix64(h ^ uint64(b)*0x2545f4914f6cdd1d)
	h = mix64(h ^ uint64(c)*0x9e3779b97f4a7c15)
	return h
}

// fnv64 hashes a string (FNV-1a).
func fnv64(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// rng is a splitmix64 generator.
type rng struct{ s uint64 }

func (r *rng) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	return mix64(r.s)
}

// intn returns a number in [0, n); n must be > 0.
func (r *rng) intn(n int) int {
	return int((r.next() >> 1) % uint64(n))
}

// Decision salts. Each names one independent pseudo-random decision.
const (
	saltTopic = iota + 1
	saltText
	saltLinks
	saltCross
	saltBorn
	saltDies
	saltChange
	saltGone
	saltETag
	saltLastMod
	saltChainTarget
	saltNear
	saltFile
	saltHidden
	saltHref
	saltExternal
)
