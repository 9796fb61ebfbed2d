package marshal

import (
	"errors"
	"fmt"
)

// Limits bounds what one decode may read. Every limit is checked before the
// memory it protects is allocated. A zero or negative field means the
// default from DefaultLimits.
type Limits struct {
	// MaxDepth is the deepest nesting of values allowed; every value,
	// container or not, counts one level, as in CPython (which allows 2000).
	MaxDepth int
	// MaxLen is the largest length of one string or container.
	MaxLen int
	// MaxTotal is the largest number of container elements (dictionary
	// pairs count one each) in one message.
	MaxTotal int
}

// Default limits: CPython's recursion limit, 64 MiB strings, 16 Mi elements.
const (
	DefaultMaxDepth = 2000
	DefaultMaxLen   = 64 << 20
	DefaultMaxTotal = 16 << 20
)

// DefaultLimits returns the limits Decode uses.
func DefaultLimits() Limits {
	return Limits{MaxDepth: DefaultMaxDepth, MaxLen: DefaultMaxLen, MaxTotal: DefaultMaxTotal}
}

// withDefaults fills zero fields with their defaults.
func (l Limits) withDefaults() Limits {
	if l.MaxDepth <= 0 {
		l.MaxDepth = DefaultMaxDepth
	}
	if l.MaxLen <= 0 {
		l.MaxLen = DefaultMaxLen
	}
	if l.MaxTotal <= 0 {
		l.MaxTotal = DefaultMaxTotal
	}
	return l
}

// Errors a DecodeError wraps; test for them with errors.Is.
var (
	// ErrTruncated reports input that ends inside a value.
	ErrTruncated = errors.New("marshal: unexpected end of data")
	// ErrLimit reports a length, count or depth beyond the Limits, or a
	// length larger than the input that remains.
	ErrLimit = errors.New("marshal: limit exceeded")
	// ErrInvalid reports bytes that are not marshal data: an unknown or
	// forbidden type code, a bad length, an unnormalized long, bad UTF-8.
	ErrInvalid = errors.New("marshal: invalid data")
	// ErrType reports that a typed Reader method found a value of another
	// type; the Reader has not consumed it.
	ErrType = errors.New("marshal: unexpected type")
	// ErrTrailing reports bytes after the value that Decode read.
	ErrTrailing = errors.New("marshal: trailing data")
)

// DecodeError is the error every decoding function returns: what went
// wrong and at which byte offset of the input.
type DecodeError struct {
	Offset int    // offset of the type code or field at fault
	Msg    string // what was wrong
	Err    error  // ErrTruncated, ErrLimit, ErrInvalid, ErrType or ErrTrailing
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("marshal: %s at byte %d", e.Msg, e.Offset)
}

func (e *DecodeError) Unwrap() error { return e.Err }

// codeName names a type code for error messages: 0x63 'c'.
func codeName(c byte) string {
	return fmt.Sprintf("0x%02x %q", c, rune(c))
}
