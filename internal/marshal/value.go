package marshal

import (
	"math"
	"math/big"
)

// Kind names the Python type of a Value.
type Kind uint8

// The kinds of value a marshal stream can hold.
const (
	KindNone Kind = iota
	KindBool
	KindInt     // Python int (or long) that fits in int64
	KindLong    // Python long outside int64
	KindFloat   // float
	KindComplex // complex
	KindBytes   // Python 2 str: a byte string (codes s, t, R)
	KindUnicode // Python 2 unicode (code u)
	KindTuple
	KindList
	KindDict
	KindSet
	KindFrozenSet
	KindStopIteration
	KindEllipsis
)

var kindNames = [...]string{"None", "bool", "int", "long", "float", "complex", "str", "unicode",
	"tuple", "list", "dict", "set", "frozenset", "StopIteration", "Ellipsis"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(?)"
}

// Value is one Python value as marshal carries it. The concrete types are
// None, Bool, Int, Long, Float, Complex, Bytes, Unicode, Tuple, List, Dict,
// Set, FrozenSet, StopIteration and Ellipsis; nothing else implements Value.
type Value interface {
	Kind() Kind
}

type (
	// None is Python's None (code N).
	None struct{}
	// Bool is True or False (codes T, F).
	Bool bool
	// Int is an integer that fits in int64 (codes i, I, or l when small).
	Int int64
	// Long is an integer outside int64 (code l). The pointer is never nil.
	Long struct{ *big.Int }
	// Float is a Python float (codes g, f).
	Float float64
	// Complex is a Python complex (codes y, x).
	Complex complex128
	// Bytes is a Python 2 str, a byte string (codes s, t, R).
	Bytes []byte
	// Unicode is a Python 2 unicode string, held as UTF-8 (code u).
	Unicode string
	// Tuple is a Python tuple (code '(').
	Tuple []Value
	// List is a Python list (code '[').
	List []Value
	// Dict is a Python dict, its pairs in stream order (code '{'). Keys may
	// be of any kind.
	Dict []Pair
	// Set is a Python set (code '<'), its members in stream order.
	Set []Value
	// FrozenSet is a Python frozenset (code '>'), its members in stream order.
	FrozenSet []Value
	// StopIteration is the StopIteration singleton (code S).
	StopIteration struct{}
	// Ellipsis is the Ellipsis singleton (code '.').
	Ellipsis struct{}
)

// Pair is one key/value entry of a Dict.
type Pair struct {
	Key, Value Value
}

func (None) Kind() Kind          { return KindNone }
func (Bool) Kind() Kind          { return KindBool }
func (Int) Kind() Kind           { return KindInt }
func (Long) Kind() Kind          { return KindLong }
func (Float) Kind() Kind         { return KindFloat }
func (Complex) Kind() Kind       { return KindComplex }
func (Bytes) Kind() Kind         { return KindBytes }
func (Unicode) Kind() Kind       { return KindUnicode }
func (Tuple) Kind() Kind         { return KindTuple }
func (List) Kind() Kind          { return KindList }
func (Dict) Kind() Kind          { return KindDict }
func (Set) Kind() Kind           { return KindSet }
func (FrozenSet) Kind() Kind     { return KindFrozenSet }
func (StopIteration) Kind() Kind { return KindStopIteration }
func (Ellipsis) Kind() Kind      { return KindEllipsis }

// Str returns a Bytes value holding s: the usual way to write a Python 2
// str such as a dictionary key.
func Str(s string) Bytes { return Bytes(s) }

// Get returns the value stored under the str (or unicode) key k, and whether
// it was there. Lookup is linear: message dictionaries are small.
func (d Dict) Get(k string) (Value, bool) {
	for _, p := range d {
		switch key := p.Key.(type) {
		case Bytes:
			if string(key) == k {
				return p.Value, true
			}
		case Unicode:
			if string(key) == k {
				return p.Value, true
			}
		}
	}
	return nil, false
}

// Equal reports whether a and b are the same value: the same kinds, and
// equal contents, elements in the same order. Floats are equal when they
// are ==, have the same sign, or are both NaN; this is the identity a
// decode-encode round trip keeps. Python's int 5 and long 5L are both Int.
func Equal(a, b Value) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	if a.Kind() != b.Kind() {
		return false
	}
	switch a := a.(type) {
	case None, StopIteration, Ellipsis:
		return true
	case Bool:
		return a == b.(Bool)
	case Int:
		return a == b.(Int)
	case Long:
		bl := b.(Long)
		if a.Int == nil || bl.Int == nil {
			return a.Int == bl.Int
		}
		return a.Int.Cmp(bl.Int) == 0
	case Float:
		return sameFloat(float64(a), float64(b.(Float)))
	case Complex:
		bc := b.(Complex)
		return sameFloat(real(a), real(bc)) && sameFloat(imag(a), imag(bc))
	case Bytes:
		return string(a) == string(b.(Bytes))
	case Unicode:
		return a == b.(Unicode)
	case Tuple:
		return equalSeq(a, b.(Tuple))
	case List:
		return equalSeq(a, b.(List))
	case Set:
		return equalSeq(a, b.(Set))
	case FrozenSet:
		return equalSeq(a, b.(FrozenSet))
	case Dict:
		bd := b.(Dict)
		if len(a) != len(bd) {
			return false
		}
		for i := range a {
			if !Equal(a[i].Key, bd[i].Key) || !Equal(a[i].Value, bd[i].Value) {
				return false
			}
		}
		return true
	}
	return false
}

func sameFloat(a, b float64) bool {
	if a != a || b != b {
		return a != a && b != b
	}
	return a == b && math.Signbit(a) == math.Signbit(b)
}

func equalSeq(a, b []Value) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}
