package marshal

import (
	"encoding/binary"
	"math"
	"math/big"
	"strconv"
)

// Reader decodes one marshal message a value at a time, so that a caller
// can fill its own structures straight from the bytes without building a
// Value tree: the typed methods (ReadInt, ReadBytes, ReadTupleHeader, ...)
// allocate nothing. ReadValue decodes whatever comes next as a Value, and
// Skip passes over it.
//
// A Reader keeps the interned-string table of codes 't' and 'R', which
// CPython scopes to one marshal.loads call: use one Reader (or one Reset)
// per message.
//
// A typed method that finds a value of another type returns an error
// wrapping ErrType and consumes nothing, so the caller may try another
// method. After any other error the Reader's position is unspecified.
//
// Mark and Seek save and restore a position, so that a caller can pass
// over part of a message and come back to it (or read it again after an
// error), with the interned-string table kept right.
//
// The Limits bound every length and count before anything is allocated.
// MaxDepth bounds the recursion of ReadValue and Skip, counted from the
// value they start at; headers the caller reads itself do not count, since
// the caller's own code bounds that nesting.
type Reader struct {
	data  []byte
	off   int
	lim   Limits
	total int
	// interned holds the 't' strings of the message in stream order,
	// each with its offset, up to the furthest point read: a Seek back
	// keeps them, and a string read again is not added again (see Seek).
	interned []span
	// bcopy and scopy are copies of data, made on first need, that the
	// strings of decoded Values share: one allocation per message, not
	// one per string.
	bcopy []byte
	scopy string
	// The memory of decoded Values (alloc.go): element and pair slabs
	// shared by the containers of one message, the pairs of the dicts
	// being read, and the last few strings boxed.
	vslab         []Value
	pslab         []Pair
	pstack        []Pair
	chunk, pchunk int
	recent        [recentStrings]recentString
	nrec          int
}

// NewReader returns a Reader over data. Zero fields of lim take their
// defaults.
func NewReader(data []byte, lim Limits) *Reader {
	return &Reader{data: data, lim: lim.withDefaults()}
}

// Reset makes r read a new message from data, keeping its limits and
// reusing its memory.
func (r *Reader) Reset(data []byte) {
	r.data, r.off, r.total = data, 0, 0
	r.bcopy, r.scopy = nil, ""
	clear(r.interned)
	r.interned = r.interned[:0]
	r.resetAlloc()
}

// Mark is a position in the message a Reader reads, as Reader.Mark
// returns it.
type Mark struct{ off, total int }

// Offset returns the byte offset of the position.
func (m Mark) Offset() int { return m.off }

// Mark returns the current position, for a later Seek.
func (r *Reader) Mark() Mark { return Mark{r.off, r.total} }

// Seek moves r to m, a position that r.Mark returned since the last Reset,
// before or after the current one, so that a caller can read part of a
// message again or pass over it and come back: to find a key that comes
// after the value it decides the meaning of, say. The element count that
// Limits.MaxTotal bounds is set back to what it was at m.
//
// The interned-string table of codes 't' and 'R' stays right whichever way
// r moves: it holds every 't' string up to the furthest point read, with
// its position, a 't' read again is not added again, and an 'R' may only
// name a string that comes before it in the message, as in CPython.
//
// A Mark from another message or Reader leaves r at an arbitrary position
// (clamped to the message), from which reads fail or succeed as the bytes
// there say; it never makes r panic.
func (r *Reader) Seek(m Mark) {
	r.off = min(max(m.off, 0), len(r.data))
	r.total = min(max(m.total, 0), len(r.data))
}

// Offset returns the number of bytes consumed so far.
func (r *Reader) Offset() int { return r.off }

// Remaining returns the number of bytes not consumed yet.
func (r *Reader) Remaining() int { return len(r.data) - r.off }

// errAt builds a DecodeError.
func errAt(off int, kind error, msg string) error {
	return &DecodeError{Offset: off, Msg: msg, Err: kind}
}

func (r *Reader) truncated(off int, what string) error {
	return errAt(off, ErrTruncated, "data ends inside "+what)
}

func (r *Reader) typeError(off int, want string) error {
	return errAt(off, ErrType, "expected "+want+", found type code "+codeName(r.data[off]))
}

// Peek returns the type code of the next value without consuming it.
func (r *Reader) Peek() (byte, error) {
	if r.off >= len(r.data) {
		return 0, r.truncated(r.off, "value: no type code")
	}
	return r.data[r.off], nil
}

// int32At reads a little-endian int32 at off, which must be in range.
func (r *Reader) int32At(off int) int32 {
	return int32(binary.LittleEndian.Uint32(r.data[off:]))
}

// length reads the int32 length or count that follows the type code at
// start and checks it: not negative, within MaxLen, and at most (what
// remains after it) / unit, since each unit of the payload takes at least
// one byte.
func (r *Reader) length(start int, what string, unit int) (int, error) {
	if len(r.data)-start < 5 {
		return 0, r.truncated(start, what+" length")
	}
	n := int64(r.int32At(start + 1))
	switch {
	case n < 0:
		return 0, errAt(start, ErrInvalid, "negative "+what+" length "+strconv.FormatInt(n, 10))
	case n > int64(r.lim.MaxLen):
		return 0, errAt(start, ErrLimit, what+" length "+strconv.FormatInt(n, 10)+" exceeds the limit of "+strconv.Itoa(r.lim.MaxLen))
	case n*int64(unit) > int64(len(r.data)-start-5):
		return 0, errAt(start, ErrTruncated, what+" length "+strconv.FormatInt(n, 10)+" exceeds the "+strconv.Itoa(len(r.data)-start-5)+" bytes that remain")
	}
	return int(n), nil
}

// count is length for a container: it also charges n elements to the
// message. Every element starts with its own type code byte, so the
// elements of all containers of a valid message add up to at most its
// length: counts that claim more cannot be true, and are refused before
// anything is allocated for them. So the element slices a message
// allocates hold at most one slot per input byte.
func (r *Reader) count(start int, what string) (int, error) {
	n, err := r.length(start, what, 1)
	if err != nil {
		return 0, err
	}
	if n > r.lim.MaxTotal-r.total {
		return 0, errAt(start, ErrLimit, "message holds more than "+strconv.Itoa(r.lim.MaxTotal)+" elements")
	}
	if r.total+n > len(r.data) {
		return 0, errAt(start, ErrTruncated, "containers claim "+strconv.Itoa(r.total+n)+" elements, more than the "+strconv.Itoa(len(r.data))+" bytes of the message")
	}
	r.total += n
	return n, nil
}

// ReadNone reads None (code N).
func (r *Reader) ReadNone() error {
	if r.off >= len(r.data) {
		return r.truncated(r.off, "value: no type code")
	}
	if r.data[r.off] != 'N' {
		return r.typeError(r.off, "None")
	}
	r.off++
	return nil
}

// ReadBool reads True or False (codes T, F).
func (r *Reader) ReadBool() (bool, error) {
	if r.off >= len(r.data) {
		return false, r.truncated(r.off, "value: no type code")
	}
	switch r.data[r.off] {
	case 'T':
		r.off++
		return true, nil
	case 'F':
		r.off++
		return false, nil
	}
	return false, r.typeError(r.off, "bool")
}

// ReadInt reads an integer: code i, I, or l when the long fits in int64.
func (r *Reader) ReadInt() (int64, error) {
	start := r.off
	if start >= len(r.data) {
		return 0, r.truncated(start, "value: no type code")
	}
	switch r.data[start] {
	case 'i':
		if len(r.data)-start < 5 {
			return 0, r.truncated(start, "int")
		}
		r.off = start + 5
		return int64(r.int32At(start + 1)), nil
	case 'I':
		if len(r.data)-start < 9 {
			return 0, r.truncated(start, "int64")
		}
		r.off = start + 9
		return int64(binary.LittleEndian.Uint64(r.data[start+1:])), nil
	case 'l':
		v, b, err := r.readLong(start)
		if err != nil {
			return 0, err
		}
		if b != nil {
			r.off = start
			return 0, errAt(start, ErrType, "long does not fit in int64")
		}
		return v, nil
	}
	return 0, r.typeError(start, "int")
}

// readLong reads the long whose code is at start: the int64 when it fits,
// else the big.Int.
func (r *Reader) readLong(start int) (int64, *big.Int, error) {
	if len(r.data)-start < 5 {
		return 0, nil, r.truncated(start, "long length")
	}
	n := int64(r.int32At(start + 1))
	neg := n < 0
	if neg {
		n = -n
	}
	switch {
	case n > int64(r.lim.MaxLen):
		return 0, nil, errAt(start, ErrLimit, "long of "+strconv.FormatInt(n, 10)+" digits exceeds the limit of "+strconv.Itoa(r.lim.MaxLen))
	case 2*n > int64(len(r.data)-start-5):
		return 0, nil, errAt(start, ErrTruncated, "long of "+strconv.FormatInt(n, 10)+" digits exceeds the "+strconv.Itoa(len(r.data)-start-5)+" bytes that remain")
	}
	nd := int(n)
	d := r.data[start+5 : start+5+2*nd]
	for i := 0; i < nd; i++ {
		if binary.LittleEndian.Uint16(d[2*i:]) > 0x7FFF {
			return 0, nil, errAt(start+5+2*i, ErrInvalid, "long digit out of range")
		}
	}
	if nd > 0 && binary.LittleEndian.Uint16(d[2*nd-2:]) == 0 {
		return 0, nil, errAt(start, ErrInvalid, "unnormalized long (top digit 0)")
	}
	r.off = start + 5 + 2*nd
	if nd <= 4 || (nd == 5 && binary.LittleEndian.Uint16(d[8:]) < 16) {
		var u uint64
		for i := nd - 1; i >= 0; i-- {
			u = u<<15 | uint64(binary.LittleEndian.Uint16(d[2*i:]))
		}
		switch {
		case !neg && u <= math.MaxInt64:
			return int64(u), nil, nil
		case neg && u <= 1<<63:
			return int64(-u), nil, nil
		}
	}
	const w = 32 << (^uint(0) >> 63) // bits in a big.Word
	words := make([]big.Word, (15*nd+w-1)/w)
	for i := 0; i < nd; i++ {
		dig := big.Word(binary.LittleEndian.Uint16(d[2*i:]))
		bit := 15 * i
		words[bit/w] |= dig << (bit % w)
		if bit%w+15 > w {
			words[bit/w+1] |= dig >> (w - bit%w)
		}
	}
	b := new(big.Int).SetBits(words)
	if neg {
		b.Neg(b)
	}
	return 0, b, nil
}

// ReadFloat reads a float: code g, or f (its repr as text).
func (r *Reader) ReadFloat() (float64, error) {
	start := r.off
	if start >= len(r.data) {
		return 0, r.truncated(start, "value: no type code")
	}
	switch r.data[start] {
	case 'g':
		if len(r.data)-start < 9 {
			return 0, r.truncated(start, "float")
		}
		r.off = start + 9
		return math.Float64frombits(binary.LittleEndian.Uint64(r.data[start+1:])), nil
	case 'f':
		r.off = start + 1
		return r.textFloat()
	}
	return 0, r.typeError(start, "float")
}

// textFloat reads a length byte and that many bytes of a float's repr.
func (r *Reader) textFloat() (float64, error) {
	start := r.off
	if start >= len(r.data) {
		return 0, r.truncated(start, "float text length")
	}
	n := int(r.data[start])
	if len(r.data)-start-1 < n {
		return 0, r.truncated(start, "float text")
	}
	f, ok := parseReprFloat(r.data[start+1 : start+1+n])
	if !ok {
		return 0, errAt(start, ErrInvalid, "bad float text "+strconv.Quote(string(r.data[start+1:start+1+n])))
	}
	r.off = start + 1 + n
	return f, nil
}

// ReadBytes reads a string: codes s, t, R, and u (whose UTF-8 bytes it
// returns). The slice aliases the input: copy it to keep it beyond the
// input's life.
func (r *Reader) ReadBytes() ([]byte, error) {
	_, b, err := r.ReadText()
	return b, err
}

// ReadString reads a string as ReadBytes does and returns a copy as a Go
// string.
func (r *Reader) ReadString() (string, error) {
	_, b, err := r.ReadText()
	return string(b), err
}

// ReadSharedString reads a string as ReadBytes does and returns it as a
// Go string that does not alias the input. In a message of at most
// SharedStringMax bytes the strings this method returns share one copy of
// the message, made on first need: one allocation per message rather
// than one per string, but any one of them keeps the whole copy alive. In
// a larger message each is its own copy, as with ReadString.
func (r *Reader) ReadSharedString() (string, error) {
	// Fast path: a byte string (code s) of a small message.
	if start := r.off; len(r.data) <= SharedStringMax && len(r.data)-start >= 5 && r.data[start] == 's' {
		n := int(r.int32At(start + 1))
		if off := start + 5; n >= 0 && n <= r.lim.MaxLen && n <= len(r.data)-off {
			r.off = off + n
			if n == 0 {
				return "", nil
			}
			if r.scopy == "" {
				r.scopy = string(r.data)
			}
			return r.scopy[off : off+n], nil
		}
	}
	_, off, n, err := r.text()
	if err != nil || n == 0 {
		return "", err
	}
	if len(r.data) > SharedStringMax {
		return string(r.data[off : off+n]), nil
	}
	if r.scopy == "" {
		r.scopy = string(r.data)
	}
	return r.scopy[off : off+n], nil
}

// SharedStringMax is the largest message whose strings ReadSharedString
// returns from one shared copy.
const SharedStringMax = 4096

// ReadText reads a string as ReadBytes does and also returns its type
// code: 's' for a byte string (whatever its code, s, t or R) or 'u' for
// unicode.
func (r *Reader) ReadText() (code byte, b []byte, err error) {
	code, off, n, err := r.text()
	if err != nil {
		return 0, nil, err
	}
	return code, r.data[off : off+n : off+n], nil
}

// text reads a string and returns its code ('s' or 'u') and the offset and
// length of its bytes in r.data.
func (r *Reader) text() (code byte, off, n int, err error) {
	start := r.off
	if start >= len(r.data) {
		return 0, 0, 0, r.truncated(start, "value: no type code")
	}
	switch c := r.data[start]; c {
	case 's', 't', 'u':
		n, err := r.length(start, "string", 1)
		if err != nil {
			return 0, 0, 0, err
		}
		off := start + 5
		if c == 'u' {
			if !validPyUTF8(r.data[off : off+n]) {
				return 0, 0, 0, errAt(start, ErrInvalid, "unicode string is not valid UTF-8")
			}
		} else {
			if c == 't' {
				// A 't' read again after a Seek back is in the table
				// already: the table is in stream order.
				if k := len(r.interned); k == 0 || r.interned[k-1].off < off {
					r.interned = append(r.interned, span{off: off, n: n})
				}
			}
			c = 's'
		}
		r.off = off + n
		return c, off, n, nil
	case 'R':
		if len(r.data)-start < 5 {
			return 0, 0, 0, r.truncated(start, "string reference")
		}
		i := int64(r.int32At(start + 1))
		// Only strings before the reference count: after a Seek back
		// the table may hold some from further on. A string's bytes
		// start 5 bytes after its code, so at or before any later code.
		if i < 0 || i >= int64(len(r.interned)) || r.interned[i].off > start {
			return 0, 0, 0, errAt(start, ErrInvalid, "string reference "+strconv.FormatInt(i, 10)+" out of range ("+strconv.Itoa(r.internedBefore(start))+" interned strings)")
		}
		r.off = start + 5
		sp := r.interned[i]
		return 's', sp.off, sp.n, nil
	}
	return 0, 0, 0, r.typeError(start, "string")
}

// internedBefore returns the number of interned strings before the value
// at offset off (the bytes of an empty one end where the next value
// starts).
func (r *Reader) internedBefore(off int) int {
	n := 0
	for n < len(r.interned) && r.interned[n].off <= off {
		n++
	}
	return n
}

// span locates an interned string in the input; v is its Value once
// ReadValue has built it, shared by the references to it, as CPython
// shares the object.
type span struct {
	off, n int
	v      Value
}

// header reads the count of a container whose code must be code.
func (r *Reader) header(code byte, what string) (int, error) {
	start := r.off
	if start >= len(r.data) {
		return 0, r.truncated(start, "value: no type code")
	}
	if r.data[start] != code {
		return 0, r.typeError(start, what)
	}
	n, err := r.count(start, what)
	if err != nil {
		return 0, err
	}
	r.off = start + 5
	return n, nil
}

// ReadTupleHeader reads the code and count of a tuple; the count elements
// follow.
func (r *Reader) ReadTupleHeader() (int, error) { return r.header('(', "tuple") }

// ReadListHeader reads the code and count of a list; the count elements
// follow.
func (r *Reader) ReadListHeader() (int, error) { return r.header('[', "list") }

// ReadSeqHeader reads the header of a tuple, list, set or frozenset and
// returns its code and count.
func (r *Reader) ReadSeqHeader() (code byte, n int, err error) {
	if r.off >= len(r.data) {
		return 0, 0, r.truncated(r.off, "value: no type code")
	}
	switch c := r.data[r.off]; c {
	case '(', '[', '<', '>':
		n, err := r.header(c, "sequence")
		return c, n, err
	}
	return 0, 0, r.typeError(r.off, "tuple, list, set or frozenset")
}

// ReadDictStart reads the code of a dict. Call DictNext before each key.
func (r *Reader) ReadDictStart() error {
	if r.off >= len(r.data) {
		return r.truncated(r.off, "value: no type code")
	}
	if r.data[r.off] != '{' {
		return r.typeError(r.off, "dict")
	}
	r.off++
	return nil
}

// DictNext reports whether another key/value pair follows in the dict
// being read; when it does not, it consumes the dict's end code '0'.
func (r *Reader) DictNext() (bool, error) {
	if r.off >= len(r.data) {
		return false, r.truncated(r.off, "dict")
	}
	if r.data[r.off] == '0' {
		r.off++
		return false, nil
	}
	if r.total >= r.lim.MaxTotal {
		return false, errAt(r.off, ErrLimit, "message holds more than "+strconv.Itoa(r.lim.MaxTotal)+" elements")
	}
	if r.total >= len(r.data) {
		return false, errAt(r.off, ErrTruncated, "containers claim more elements than the bytes of the message")
	}
	r.total++
	return true, nil
}

// ReadValue reads the next value, whatever its type. The strings of the
// value do not alias the input, but they may share memory with each other
// and with other values from the same message: treat them as immutable,
// as Python does.
func (r *Reader) ReadValue() (Value, error) {
	clear(r.pstack)
	r.pstack = r.pstack[:0]
	return r.value(0, false)
}

// Skip passes over the next value, checking it as ReadValue would, without
// building it.
func (r *Reader) Skip() error {
	return r.skip(0, false)
}

func (r *Reader) enter(depth int) error {
	if depth > r.lim.MaxDepth {
		return errAt(r.off, ErrLimit, "recursion limit exceeded (depth "+strconv.Itoa(r.lim.MaxDepth)+")")
	}
	if r.off >= len(r.data) {
		return r.truncated(r.off, "value: no type code")
	}
	return nil
}

func unhashable(off int, c byte) error {
	return errAt(off, ErrInvalid, "unhashable "+codeName(c)+" as a dict key or set member")
}

// value reads one value at nesting depth depth+1. When hash is set the
// value must be hashable (a dict key or set member).
func (r *Reader) value(depth int, hash bool) (Value, error) {
	depth++
	if err := r.enter(depth); err != nil {
		return nil, err
	}
	start := r.off
	switch c := r.data[start]; c {
	case 'N':
		r.off++
		return None{}, nil
	case 'T':
		r.off++
		return Bool(true), nil
	case 'F':
		r.off++
		return Bool(false), nil
	case 'S':
		r.off++
		return StopIteration{}, nil
	case '.':
		r.off++
		return Ellipsis{}, nil
	case 'i', 'I':
		v, err := r.ReadInt()
		if err != nil {
			return nil, err
		}
		return intValue(v), nil
	case 'l':
		v, b, err := r.readLong(start)
		if err != nil {
			return nil, err
		}
		if b != nil {
			return Long{b}, nil
		}
		return intValue(v), nil
	case 'g', 'f':
		v, err := r.ReadFloat()
		return Float(v), err
	case 'y':
		if len(r.data)-start < 17 {
			return nil, r.truncated(start, "complex")
		}
		r.off = start + 17
		re := math.Float64frombits(binary.LittleEndian.Uint64(r.data[start+1:]))
		im := math.Float64frombits(binary.LittleEndian.Uint64(r.data[start+9:]))
		return Complex(complex(re, im)), nil
	case 'x':
		r.off = start + 1
		re, err := r.textFloat()
		if err != nil {
			return nil, err
		}
		im, err := r.textFloat()
		if err != nil {
			return nil, err
		}
		return Complex(complex(re, im)), nil
	case 's', 't', 'R', 'u':
		code, at, n, err := r.text()
		if err != nil {
			return nil, err
		}
		if code == 'u' {
			return r.unicodeValue(at, n), nil
		}
		return r.bytesValue(start, at, n), nil
	case '(', '[', '<', '>':
		if hash && c != '(' && c != '>' {
			return nil, unhashable(start, c)
		}
		n, err := r.count(start, "container")
		if err != nil {
			return nil, err
		}
		r.off = start + 5
		if n == 0 {
			return emptySeq(c), nil
		}
		elems := r.values(n)
		for i := range elems {
			if elems[i], err = r.value(depth, hash || c == '<' || c == '>'); err != nil {
				return nil, err
			}
		}
		switch c {
		case '(':
			return Tuple(elems), nil
		case '[':
			return List(elems), nil
		case '<':
			return Set(elems), nil
		}
		return FrozenSet(elems), nil
	case '{':
		if hash {
			return nil, unhashable(start, c)
		}
		r.off++
		// CPython reads the end code '0' as a value one level deeper.
		if err := r.enter(depth + 1); err != nil {
			return nil, err
		}
		// The pairs go on a stack shared with the dicts nested in them,
		// then into the message's pair slab once their number is known.
		if r.pstack == nil {
			r.pstack = make([]Pair, 0, 8)
		}
		base := len(r.pstack)
		for {
			more, err := r.DictNext()
			if err != nil {
				return nil, err
			}
			if !more {
				break
			}
			k, err := r.value(depth, true)
			if err != nil {
				return nil, err
			}
			v, err := r.value(depth, false)
			if err != nil {
				return nil, err
			}
			r.pstack = append(r.pstack, Pair{k, v})
		}
		if len(r.pstack) == base {
			return emptyDict, nil
		}
		d := r.pairs(len(r.pstack) - base)
		copy(d, r.pstack[base:])
		clear(r.pstack[base:])
		r.pstack = r.pstack[:base]
		return Dict(d), nil
	case '0':
		return nil, errAt(start, ErrInvalid, "NULL object (type code 0x30 '0') where a value is expected")
	}
	return nil, r.badCode(start)
}

func (r *Reader) badCode(start int) error {
	c := r.data[start]
	switch c {
	case 'c':
		return errAt(start, ErrInvalid, "code object (type code "+codeName(c)+") not allowed")
	case '?':
		return errAt(start, ErrInvalid, "unknown object (type code "+codeName(c)+")")
	}
	return errAt(start, ErrInvalid, "unknown type code "+codeName(c))
}

// skip passes over one value at nesting depth depth+1, as value reads it.
func (r *Reader) skip(depth int, hash bool) error {
	depth++
	if err := r.enter(depth); err != nil {
		return err
	}
	start := r.off
	switch c := r.data[start]; c {
	case 'N', 'T', 'F', 'S', '.':
		r.off++
		return nil
	case 'i', 'I':
		_, err := r.ReadInt()
		return err
	case 'l':
		_, _, err := r.readLong(start)
		return err
	case 'g', 'f':
		_, err := r.ReadFloat()
		return err
	case 'y', 'x':
		_, err := r.value(depth-1, false)
		return err
	case 's', 't', 'R', 'u':
		_, _, _, err := r.text()
		return err
	case '(', '[', '<', '>':
		if hash && c != '(' && c != '>' {
			return unhashable(start, c)
		}
		n, err := r.count(start, "container")
		if err != nil {
			return err
		}
		r.off = start + 5
		for range n {
			if err := r.skip(depth, hash || c == '<' || c == '>'); err != nil {
				return err
			}
		}
		return nil
	case '{':
		if hash {
			return unhashable(start, c)
		}
		r.off++
		if err := r.enter(depth + 1); err != nil {
			return err
		}
		for {
			more, err := r.DictNext()
			if err != nil || !more {
				return err
			}
			if err := r.skip(depth, true); err != nil {
				return err
			}
			if err := r.skip(depth, false); err != nil {
				return err
			}
		}
	case '0':
		return errAt(start, ErrInvalid, "NULL object (type code 0x30 '0') where a value is expected")
	}
	return r.badCode(start)
}
