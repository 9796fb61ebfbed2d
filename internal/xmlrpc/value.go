package xmlrpc

import (
	"bytes"
	"fmt"
	"math"
	"time"
)

// Value is one XML-RPC value. The concrete types are Int, Bool, String,
// Double, DateTime, Base64, Struct, Array and Nil; nothing else implements
// Value.
type Value interface {
	// TypeName is the XML-RPC element name of the value's type ("int",
	// "string", "struct", ...), used in messages.
	TypeName() string
	isValue()
}

// Int is an integer (<int>, <i4> or <i8>).
type Int int64

// Bool is a boolean (<boolean>).
type Bool bool

// String is a string (<string>, or a <value> holding text only).
type String string

// Double is a double-precision float (<double>).
type Double float64

// DateTime is a <dateTime.iso8601>. XML-RPC carries no time zone: the
// decoder returns the time in UTC, and the encoder writes the time's own
// clock reading.
type DateTime time.Time

// Base64 is binary data (<base64>).
type Base64 []byte

// Array is an ordered list of values (<array>).
type Array []Value

// Member is one named field of a Struct.
type Member struct {
	Name  string
	Value Value
}

// Struct is a list of named values (<struct>), in the order they were
// written.
type Struct []Member

// Nil is the <nil/> extension (Python's None).
type Nil struct{}

func (Int) TypeName() string      { return "int" }
func (Bool) TypeName() string     { return "boolean" }
func (String) TypeName() string   { return "string" }
func (Double) TypeName() string   { return "double" }
func (DateTime) TypeName() string { return "dateTime.iso8601" }
func (Base64) TypeName() string   { return "base64" }
func (Array) TypeName() string    { return "array" }
func (Struct) TypeName() string   { return "struct" }
func (Nil) TypeName() string      { return "nil" }

func (Int) isValue()      {}
func (Bool) isValue()     {}
func (String) isValue()   {}
func (Double) isValue()   {}
func (DateTime) isValue() {}
func (Base64) isValue()   {}
func (Array) isValue()    {}
func (Struct) isValue()   {}
func (Nil) isValue()      {}

// Get returns the value of the first member called name.
func (s Struct) Get(name string) (Value, bool) {
	for _, m := range s {
		if m.Name == name {
			return m.Value, true
		}
	}
	return nil, false
}

// Equal reports whether a and b are the same value: the same types and
// contents, struct members in the same order. Doubles are equal when they
// are == (so 0.0 equals -0.0; NaN never reaches the wire).
func Equal(a, b Value) bool {
	switch x := a.(type) {
	case Int:
		y, ok := b.(Int)
		return ok && x == y
	case Bool:
		y, ok := b.(Bool)
		return ok && x == y
	case String:
		y, ok := b.(String)
		return ok && x == y
	case Double:
		y, ok := b.(Double)
		return ok && (x == y || (math.IsNaN(float64(x)) && math.IsNaN(float64(y))))
	case DateTime:
		y, ok := b.(DateTime)
		return ok && time.Time(x).Equal(time.Time(y))
	case Base64:
		y, ok := b.(Base64)
		return ok && bytes.Equal(x, y)
	case Array:
		y, ok := b.(Array)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !Equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case Struct:
		y, ok := b.(Struct)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if x[i].Name != y[i].Name || !Equal(x[i].Value, y[i].Value) {
				return false
			}
		}
		return true
	case Nil:
		_, ok := b.(Nil)
		return ok
	}
	return false
}

// Fault is an XML-RPC fault response. It is the error DecodeResponse
// returns for one, and what a server sends instead of a result.
type Fault struct {
	Code   int
	String string
}

func (f *Fault) Error() string {
	return fmt.Sprintf("xmlrpc: fault %d: %s", f.Code, f.String)
}

// Call is a decoded <methodCall>.
type Call struct {
	Method string
	Params []Value
}
