package marshal

// The memory of decoded Values. A Go slice or string in an interface is a
// heap object of its own, so a naive decoder allocates once per container
// element array, once per container and once per string. ReadValue
// instead takes the element arrays of a message's tuples, lists and sets
// and the pair arrays of its dicts from two slabs, shares one boxed Value
// among equal strings that come close together (a URI's netloc, host and
// IDNA host) and among an interned string and its references, and uses
// one package-wide boxed Value for each empty container and string.

// Boxed empty values. They are never written: every decode shares them,
// as all empty Go slices share one address.
var (
	emptyBytes     Value = Bytes{}
	emptyTuple     Value = Tuple{}
	emptyList      Value = List{}
	emptySet       Value = Set{}
	emptyFrozenSet Value = FrozenSet{}
	emptyDict      Value = Dict{}
	// smallNegInts are the boxed Ints -5..-1 (Go boxes 0..255 without
	// allocating; CPython caches -5..256).
	smallNegInts = [...]Value{Int(-5), Int(-4), Int(-3), Int(-2), Int(-1)}
)

// emptySeq returns the boxed empty sequence of code c.
func emptySeq(c byte) Value {
	switch c {
	case '(':
		return emptyTuple
	case '[':
		return emptyList
	case '<':
		return emptySet
	}
	return emptyFrozenSet
}

// intValue boxes v, without allocating for -5..255.
func intValue(v int64) Value {
	if v < 0 && v >= -int64(len(smallNegInts)) {
		return smallNegInts[v+int64(len(smallNegInts))]
	}
	return Int(v)
}

// Slab sizes, in elements: the first slab of a message holds about one
// element per 8 bytes of it, and each next one twice the last, up to
// maxChunk; a slab never holds more than the elements the rest of the
// message can still claim.
const (
	minChunk = 8
	maxChunk = 4096
)

// recentStrings is how many boxed strings a Reader remembers for reuse.
const recentStrings = 4

type recentString struct {
	b []byte // in bcopy
	v Value
}

// resetAlloc forgets the slabs and strings of the last message, so that
// the values of two messages never share memory.
func (r *Reader) resetAlloc() {
	r.vslab, r.pslab = nil, nil
	r.chunk, r.pchunk = 0, 0
	clear(r.pstack[:cap(r.pstack)])
	r.pstack = r.pstack[:0]
	r.recent = [recentStrings]recentString{}
	r.nrec = 0
}

// nextChunk returns the spare room of the next slab, given the last one.
func (r *Reader) nextChunk(last *int, per int) int {
	if *last == 0 {
		*last = min(max(len(r.data)/per, minChunk), maxChunk)
	} else {
		*last = min(2**last, maxChunk)
	}
	return min(*last, max(len(r.data)-r.total, 0))
}

// values returns n zeroed elements from the message's element slab. n has
// been charged to the message (count), so it is at most its length.
func (r *Reader) values(n int) []Value {
	if n > len(r.vslab) {
		r.vslab = make([]Value, n+r.nextChunk(&r.chunk, 8))
	}
	s := r.vslab[:n:n]
	r.vslab = r.vslab[n:]
	return s
}

// pairs returns n zeroed pairs from the message's pair slab.
func (r *Reader) pairs(n int) []Pair {
	if n > len(r.pslab) {
		r.pslab = make([]Pair, n+r.nextChunk(&r.pchunk, 32))
	}
	s := r.pslab[:n:n]
	r.pslab = r.pslab[n:]
	return s
}

// bytesValue boxes the byte string of n bytes at offset at of the
// message, whose code is at start.
func (r *Reader) bytesValue(start, at, n int) Value {
	if n == 0 {
		return emptyBytes
	}
	// An interned string and its references share one Value.
	var sp *span
	switch r.data[start] {
	case 'R':
		sp = &r.interned[r.int32At(start+1)]
	case 't':
		if k := len(r.interned); k > 0 && r.interned[k-1].off == at {
			sp = &r.interned[k-1]
		}
	}
	if sp != nil && sp.v != nil {
		return sp.v
	}
	if r.bcopy == nil {
		r.bcopy = append([]byte(nil), r.data...)
	}
	b := r.bcopy[at : at+n : at+n]
	var v Value
	for i := range r.recent {
		if e := &r.recent[i]; len(e.b) == n && string(e.b) == string(b) {
			v = e.v
			break
		}
	}
	if v == nil {
		v = Bytes(b)
		r.recent[r.nrec] = recentString{b, v}
		r.nrec = (r.nrec + 1) % recentStrings
	}
	if sp != nil {
		sp.v = v
	}
	return v
}

// unicodeValue boxes the unicode string of n bytes at offset at.
func (r *Reader) unicodeValue(at, n int) Value {
	if n == 0 {
		return Unicode("")
	}
	if r.scopy == "" {
		r.scopy = string(r.data)
	}
	return Unicode(r.scopy[at : at+n])
}
