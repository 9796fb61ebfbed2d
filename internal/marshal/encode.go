package marshal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
)

// The Append functions write one value, or the header of one container, in
// the encoder's subset of codes (N T F i l g s u ( [ { and < > y S . for
// the kinds that need them). They let a caller build a message without
// boxing Values. A string longer than math.MaxInt32 bytes cannot be
// marshalled: the string Append functions panic on one (AppendValue
// returns an error instead).

// AppendNone appends None (N).
func AppendNone(dst []byte) []byte { return append(dst, 'N') }

// AppendBool appends True (T) or False (F).
func AppendBool(dst []byte, b bool) []byte {
	if b {
		return append(dst, 'T')
	}
	return append(dst, 'F')
}

// AppendInt appends v as an int (i) when it fits in 32 bits, else as a
// long (l).
func AppendInt(dst []byte, v int64) []byte {
	if v == int64(int32(v)) {
		return binary.LittleEndian.AppendUint32(append(dst, 'i'), uint32(v))
	}
	u := uint64(v)
	n := int32(0)
	if v < 0 {
		u = -u
	}
	for x := u; x != 0; x >>= 15 {
		n++
	}
	if v < 0 {
		n = -n
	}
	dst = binary.LittleEndian.AppendUint32(append(dst, 'l'), uint32(n))
	for ; u != 0; u >>= 15 {
		dst = binary.LittleEndian.AppendUint16(dst, uint16(u&0x7FFF))
	}
	return dst
}

// AppendLong appends v as AppendInt does when it fits in int64, else as a
// long (l) in base-2^15 digits.
func AppendLong(dst []byte, v *big.Int) []byte {
	if v.IsInt64() {
		return AppendInt(dst, v.Int64())
	}
	words := v.Bits() // magnitude, little-endian words
	const w = 32 << (^uint(0) >> 63)
	nbits := v.BitLen()
	nd := (nbits + 14) / 15
	n := int32(nd)
	if v.Sign() < 0 {
		n = -n
	}
	dst = binary.LittleEndian.AppendUint32(append(dst, 'l'), uint32(n))
	for i := 0; i < nd; i++ {
		bit := 15 * i
		d := words[bit/w] >> (bit % w)
		if bit%w+15 > w && bit/w+1 < len(words) {
			d |= words[bit/w+1] << (w - bit%w)
		}
		dst = binary.LittleEndian.AppendUint16(dst, uint16(d&0x7FFF))
	}
	return dst
}

// AppendFloat appends f as a binary float (g).
func AppendFloat(dst []byte, f float64) []byte {
	return binary.LittleEndian.AppendUint64(append(dst, 'g'), math.Float64bits(f))
}

// AppendComplex appends c as a binary complex (y).
func AppendComplex(dst []byte, c complex128) []byte {
	dst = binary.LittleEndian.AppendUint64(append(dst, 'y'), math.Float64bits(real(c)))
	return binary.LittleEndian.AppendUint64(dst, math.Float64bits(imag(c)))
}

func appendLen(dst []byte, code byte, n int) []byte {
	if n < 0 || n > math.MaxInt32 {
		panic("marshal: length " + strconv.Itoa(n) + " out of int32 range")
	}
	return binary.LittleEndian.AppendUint32(append(dst, code), uint32(n))
}

// AppendBytes appends b as a Python 2 str (s).
func AppendBytes(dst []byte, b []byte) []byte {
	return append(appendLen(dst, 's', len(b)), b...)
}

// AppendString appends s as a Python 2 str (s): its bytes, unchanged.
func AppendString(dst []byte, s string) []byte {
	return append(appendLen(dst, 's', len(s)), s...)
}

// AppendUnicode appends s as a Python 2 unicode (u). s must be UTF-8;
// AppendValue checks that, this function does not.
func AppendUnicode(dst []byte, s string) []byte {
	return append(appendLen(dst, 'u', len(s)), s...)
}

// AppendTupleHeader appends the header of a tuple of n elements; append
// the n elements after it.
func AppendTupleHeader(dst []byte, n int) []byte { return appendLen(dst, '(', n) }

// AppendListHeader appends the header of a list of n elements.
func AppendListHeader(dst []byte, n int) []byte { return appendLen(dst, '[', n) }

// AppendSetHeader appends the header of a set of n members (<).
func AppendSetHeader(dst []byte, n int) []byte { return appendLen(dst, '<', n) }

// AppendFrozenSetHeader appends the header of a frozenset of n members (>).
func AppendFrozenSetHeader(dst []byte, n int) []byte { return appendLen(dst, '>', n) }

// AppendDictStart starts a dict ({): append key, value, key, value... and
// then AppendDictEnd.
func AppendDictStart(dst []byte) []byte { return append(dst, '{') }

// AppendDictEnd ends a dict (0).
func AppendDictEnd(dst []byte) []byte { return append(dst, '0') }

// AppendStopIteration appends the StopIteration singleton (S).
func AppendStopIteration(dst []byte) []byte { return append(dst, 'S') }

// AppendEllipsis appends the Ellipsis singleton (.).
func AppendEllipsis(dst []byte) []byte { return append(dst, '.') }

// Encode returns the marshal bytes of v.
func Encode(v Value) ([]byte, error) {
	return AppendValue(nil, v)
}

// AppendValue appends the marshal bytes of v to dst. It writes what
// CPython 2.7 can load: it fails on a nil Value or Long, on unicode that
// is not UTF-8, on a string or container longer than math.MaxInt32, on an
// unhashable dict key or set member, and on nesting deeper than
// CPython's 2000 levels. On error dst is returned unchanged in length.
func AppendValue(dst []byte, v Value) ([]byte, error) {
	out, err := appendValue(dst, v, 0, false)
	if err != nil {
		return dst, err
	}
	return out, nil
}

var errEncodeDepth = errors.New("marshal: value nested deeper than " + strconv.Itoa(DefaultMaxDepth) + " levels")

func appendValue(dst []byte, v Value, depth int, hash bool) ([]byte, error) {
	depth++
	if depth > DefaultMaxDepth {
		return dst, errEncodeDepth
	}
	switch v := v.(type) {
	case None:
		return append(dst, 'N'), nil
	case Bool:
		return AppendBool(dst, bool(v)), nil
	case Int:
		return AppendInt(dst, int64(v)), nil
	case Long:
		if v.Int == nil {
			return dst, errors.New("marshal: Long with a nil big.Int")
		}
		return AppendLong(dst, v.Int), nil
	case Float:
		return AppendFloat(dst, float64(v)), nil
	case Complex:
		return AppendComplex(dst, complex128(v)), nil
	case Bytes:
		if len(v) > math.MaxInt32 {
			return dst, errors.New("marshal: string longer than 2^31-1 bytes")
		}
		return AppendBytes(dst, v), nil
	case Unicode:
		if len(v) > math.MaxInt32 {
			return dst, errors.New("marshal: string longer than 2^31-1 bytes")
		}
		if !validPyUTF8String(string(v)) {
			return dst, fmt.Errorf("marshal: unicode %q is not valid UTF-8", truncateForError(string(v)))
		}
		return AppendUnicode(dst, string(v)), nil
	case Tuple:
		return appendSeq(dst, '(', v, depth, hash)
	case List:
		if hash {
			return dst, errors.New("marshal: unhashable list as a dict key or set member")
		}
		return appendSeq(dst, '[', v, depth, false)
	case Set:
		if hash {
			return dst, errors.New("marshal: unhashable set as a dict key or set member")
		}
		return appendSeq(dst, '<', v, depth, true)
	case FrozenSet:
		return appendSeq(dst, '>', v, depth, true)
	case Dict:
		if hash {
			return dst, errors.New("marshal: unhashable dict as a dict key or set member")
		}
		if depth+1 > DefaultMaxDepth { // CPython reads the end code '0' one level deeper
			return dst, errEncodeDepth
		}
		dst = append(dst, '{')
		var err error
		for _, p := range v {
			if dst, err = appendValue(dst, p.Key, depth, true); err != nil {
				return dst, err
			}
			if dst, err = appendValue(dst, p.Value, depth, false); err != nil {
				return dst, err
			}
		}
		return append(dst, '0'), nil
	case StopIteration:
		return append(dst, 'S'), nil
	case Ellipsis:
		return append(dst, '.'), nil
	case nil:
		return dst, errors.New("marshal: cannot encode a nil Value")
	}
	return dst, fmt.Errorf("marshal: cannot encode a value of type %T", v)
}

func appendSeq(dst []byte, code byte, elems []Value, depth int, hash bool) ([]byte, error) {
	if len(elems) > math.MaxInt32 {
		return dst, errors.New("marshal: container longer than 2^31-1 elements")
	}
	dst = appendLen(dst, code, len(elems))
	var err error
	for _, e := range elems {
		if dst, err = appendValue(dst, e, depth, hash); err != nil {
			return dst, err
		}
	}
	return dst, nil
}

func truncateForError(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}
