// Package wire is the transport of trawl's content distributors, name server
// and indexers (MS-FSCDFT). MS-FSCDFT carries its calls over the Middleware
// Protocol [MS-FSMW] and serializes entities with Cheetah [MS-FSCHT]; neither
// is public, so this package defines a framed binary layout of its own that
// keeps their concepts: a call names an object (an interface type, and for a
// session object its id among the arguments), a method and typed arguments;
// it is answered by a reply or a user exception, matched by request id.
//
// # Frame
//
// Every frame on a TCP connection is:
//
//	offset size  field
//	0      2     magic "DF" (0x44 0x46)
//	2      1     version, 1
//	3      1     kind: 1 request, 2 reply, 3 exception, 4 one-way request (no reply)
//	4      4     body length L, big endian, 0 <= L <= MaxFrame (16 MiB)
//	8      L     body
//
// The body is:
//
//	uvarint  request id (the reply or exception carries the request's id)
//	string   object: the interface type called ("processing::session_factory",
//	         "processing::dispatcher_node", ...); on a reply, the same object
//	string   method ("register_dispatcher", "__ping", ...); on an exception,
//	         the exception's name ("processing::unknown_collection",
//	         "core::unsupported_guarantee_set", "nameserver::resolve_exception")
//	uvarint  argument count N (<= MaxArgs)
//	value*N  the arguments (on a reply: the return values; on an exception:
//	         the exception's fields, its "what" string first)
//
// A string is a uvarint length (<= MaxString) and that many UTF-8 bytes. A
// value is a one-byte tag and its payload:
//
//	'i'  varint (zigzag) signed integer (FSIDL long, 64-bit here)
//	'b'  one byte, 0 false, 1 true (FSIDL boolean)
//	's'  string
//	'y'  uvarint length (<= MaxFrame) and raw bytes (a feed operation in its
//	     own encoding, internal/feed)
//	'l'  uvarint count (<= MaxList) and that many values (FSIDL sequence)
//	'e'  a Cheetah entity: uvarint type identifier, varint checksum, uvarint
//	     attribute count (<= MaxList) and that many values; an attribute that
//	     is a collection of entities is an 'l' of 'e' values
//
// Lists and entities nest at most MaxDepth deep. The decoder checks every
// length against its cap and against the bytes left in the frame before
// allocating; it never panics on bad input (FuzzDecodeFrame). A frame that
// fails to decode closes the connection: the byte stream can no longer be
// trusted to be in step, and the peer hears of it as a closed connection.
package wire

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Caps on the lengths a frame may declare.
const (
	MaxFrame  = 16 << 20
	MaxString = 1 << 20
	MaxArgs   = 64
	MaxList   = 1 << 16
	MaxDepth  = 8
)

// Kind is what a frame is.
type Kind uint8

// The frame kinds.
const (
	Request   Kind = 1
	Reply     Kind = 2
	Exception Kind = 3
	Oneway    Kind = 4
)

func (k Kind) String() string {
	switch k {
	case Request:
		return "request"
	case Reply:
		return "reply"
	case Exception:
		return "exception"
	case Oneway:
		return "oneway"
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Tag is a value's type.
type Tag byte

// The value tags.
const (
	Int    Tag = 'i'
	Bool   Tag = 'b'
	String Tag = 's'
	Bytes  Tag = 'y'
	List   Tag = 'l'
	Entity Tag = 'e'
)

// Value is one typed argument.
type Value struct {
	Tag Tag
	I   int64  // Int, Bool (0/1); Entity: the checksum
	S   string // String
	B   []byte // Bytes
	L   []Value
	// Type is an Entity's Cheetah type identifier; L holds its attributes.
	Type uint32
}

// I64 returns an integer value.
func I64(i int64) Value { return Value{Tag: Int, I: i} }

// Str returns a string value.
func Str(s string) Value { return Value{Tag: String, S: s} }

// Bln returns a boolean value.
func Bln(b bool) Value {
	if b {
		return Value{Tag: Bool, I: 1}
	}
	return Value{Tag: Bool}
}

// Byt returns a bytes value.
func Byt(b []byte) Value { return Value{Tag: Bytes, B: b} }

// Lst returns a list value.
func Lst(vs ...Value) Value { return Value{Tag: List, L: vs} }

// Ent returns a Cheetah entity value.
func Ent(typ uint32, checksum int32, attrs ...Value) Value {
	return Value{Tag: Entity, Type: typ, I: int64(checksum), L: attrs}
}

// String prints a value for logs and traces.
func (v Value) String() string {
	switch v.Tag {
	case Int:
		return strconv.FormatInt(v.I, 10)
	case Bool:
		return strconv.FormatBool(v.I != 0)
	case String:
		return strconv.Quote(v.S)
	case Bytes:
		return fmt.Sprintf("<%d bytes>", len(v.B))
	case List, Entity:
		var sb strings.Builder
		if v.Tag == Entity {
			fmt.Fprintf(&sb, "entity(%d,%d)", v.Type, v.I)
		}
		sb.WriteByte('[')
		for i, e := range v.L {
			if i > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteString(e.String())
		}
		sb.WriteByte(']')
		return sb.String()
	}
	return "?"
}

// Frame is one call, reply or exception.
type Frame struct {
	Kind   Kind
	ID     uint64
	Object string
	Method string
	Args   []Value
}

// String prints a frame for logs and traces.
func (f *Frame) String() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s #%d %s.%s(", f.Kind, f.ID, f.Object, f.Method)
	for i, a := range f.Args {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(a.String())
	}
	sb.WriteByte(')')
	return sb.String()
}

// Arg returns argument i, or the zero Value when there is none.
func (f *Frame) Arg(i int) Value {
	if i < 0 || i >= len(f.Args) {
		return Value{}
	}
	return f.Args[i]
}

// AppendFrame appends f's encoding to dst.
func AppendFrame(dst []byte, f *Frame) ([]byte, error) {
	start := len(dst)
	dst = append(dst, 'D', 'F', 1, byte(f.Kind), 0, 0, 0, 0)
	dst = binary.AppendUvarint(dst, f.ID)
	dst = appendString(dst, f.Object)
	dst = appendString(dst, f.Method)
	if len(f.Args) > MaxArgs {
		return dst[:start], fmt.Errorf("wire: %d arguments, more than %d", len(f.Args), MaxArgs)
	}
	dst = binary.AppendUvarint(dst, uint64(len(f.Args)))
	var err error
	for _, a := range f.Args {
		if dst, err = appendValue(dst, a, 0); err != nil {
			return dst[:start], err
		}
	}
	n := len(dst) - start - 8
	if n > MaxFrame {
		return dst[:start], fmt.Errorf("wire: frame body of %d bytes, more than %d", n, MaxFrame)
	}
	binary.BigEndian.PutUint32(dst[start+4:], uint32(n))
	return dst, nil
}

func appendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

func appendValue(dst []byte, v Value, depth int) ([]byte, error) {
	if depth >= MaxDepth {
		return dst, errors.New("wire: values nested too deep")
	}
	dst = append(dst, byte(v.Tag))
	switch v.Tag {
	case Int:
		dst = binary.AppendVarint(dst, v.I)
	case Bool:
		if v.I != 0 {
			dst = append(dst, 1)
		} else {
			dst = append(dst, 0)
		}
	case String:
		if len(v.S) > MaxString {
			return dst, fmt.Errorf("wire: string of %d bytes, more than %d", len(v.S), MaxString)
		}
		dst = appendString(dst, v.S)
	case Bytes:
		dst = binary.AppendUvarint(dst, uint64(len(v.B)))
		dst = append(dst, v.B...)
	case List, Entity:
		if v.Tag == Entity {
			dst = binary.AppendUvarint(dst, uint64(v.Type))
			dst = binary.AppendVarint(dst, v.I)
		}
		if len(v.L) > MaxList {
			return dst, fmt.Errorf("wire: list of %d values, more than %d", len(v.L), MaxList)
		}
		dst = binary.AppendUvarint(dst, uint64(len(v.L)))
		var err error
		for _, e := range v.L {
			if dst, err = appendValue(dst, e, depth+1); err != nil {
				return dst, err
			}
		}
	default:
		return dst, fmt.Errorf("wire: unknown value tag %q", byte(v.Tag))
	}
	return dst, nil
}

// ReadFrame reads one frame from r.
func ReadFrame(r *bufio.Reader) (*Frame, error) {
	var hdr [8]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	n, err := checkHeader(hdr[:])
	if err != nil {
		return nil, err
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("wire: frame body: %w", err)
	}
	return decodeBody(Kind(hdr[3]), body)
}

func checkHeader(h []byte) (int, error) {
	if h[0] != 'D' || h[1] != 'F' {
		return 0, fmt.Errorf("wire: bad magic %q", h[:2])
	}
	if h[2] != 1 {
		return 0, fmt.Errorf("wire: unknown version %d", h[2])
	}
	if k := Kind(h[3]); k < Request || k > Oneway {
		return 0, fmt.Errorf("wire: unknown frame kind %d", h[3])
	}
	n := binary.BigEndian.Uint32(h[4:])
	if n > MaxFrame {
		return 0, fmt.Errorf("wire: frame of %d bytes, more than %d", n, MaxFrame)
	}
	return int(n), nil
}

// DecodeFrame decodes one whole frame (header and body) from b, which must
// hold exactly one frame.
func DecodeFrame(b []byte) (*Frame, error) {
	if len(b) < 8 {
		return nil, errors.New("wire: short frame header")
	}
	n, err := checkHeader(b)
	if err != nil {
		return nil, err
	}
	if len(b)-8 != n {
		return nil, fmt.Errorf("wire: frame declares %d body bytes, has %d", n, len(b)-8)
	}
	return decodeBody(Kind(b[3]), b[8:])
}

type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("wire: "+format, args...)
	}
}

func (d *decoder) uvarint(what string) uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("bad %s", what)
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint(what string) int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail("bad %s", what)
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) bytes(what string, max int) []byte {
	n := d.uvarint(what + " length")
	if d.err != nil {
		return nil
	}
	if n > uint64(max) || n > uint64(len(d.b)) {
		d.fail("%s of %d bytes (cap %d, %d left)", what, n, max, len(d.b))
		return nil
	}
	out := d.b[:n:n]
	d.b = d.b[n:]
	return out
}

func (d *decoder) count(what string, max int) int {
	n := d.uvarint(what)
	if d.err != nil {
		return 0
	}
	// Every value takes at least two bytes, so a count is also capped by
	// the bytes left.
	if n > uint64(max) || n > uint64(len(d.b)) {
		d.fail("%s %d (cap %d, %d bytes left)", what, n, max, len(d.b))
		return 0
	}
	return int(n)
}

func (d *decoder) value(depth int) Value {
	if d.err != nil {
		return Value{}
	}
	if depth >= MaxDepth {
		d.fail("values nested deeper than %d", MaxDepth)
		return Value{}
	}
	if len(d.b) == 0 {
		d.fail("missing value")
		return Value{}
	}
	t := Tag(d.b[0])
	d.b = d.b[1:]
	v := Value{Tag: t}
	switch t {
	case Int:
		v.I = d.varint("integer")
	case Bool:
		if len(d.b) == 0 || d.b[0] > 1 {
			d.fail("bad boolean")
			return Value{}
		}
		v.I = int64(d.b[0])
		d.b = d.b[1:]
	case String:
		v.S = string(d.bytes("string", MaxString))
	case Bytes:
		v.B = append([]byte(nil), d.bytes("bytes", MaxFrame)...)
	case List, Entity:
		if t == Entity {
			typ := d.uvarint("entity type")
			if typ > 1<<31 {
				d.fail("entity type %d", typ)
			}
			v.Type = uint32(typ)
			v.I = d.varint("entity checksum")
			if v.I < -1<<31 || v.I >= 1<<31 {
				d.fail("entity checksum %d", v.I)
			}
		}
		n := d.count("list length", MaxList)
		if n > 0 {
			v.L = make([]Value, 0, n)
		}
		for i := 0; i < n && d.err == nil; i++ {
			v.L = append(v.L, d.value(depth+1))
		}
	default:
		d.fail("unknown value tag 0x%02x", byte(t))
	}
	if d.err != nil {
		return Value{}
	}
	return v
}

func decodeBody(k Kind, body []byte) (*Frame, error) {
	d := &decoder{b: body}
	f := &Frame{Kind: k}
	f.ID = d.uvarint("request id")
	f.Object = string(d.bytes("object", MaxString))
	f.Method = string(d.bytes("method", MaxString))
	n := d.count("argument count", MaxArgs)
	if n > 0 {
		f.Args = make([]Value, 0, n)
	}
	for i := 0; i < n && d.err == nil; i++ {
		f.Args = append(f.Args, d.value(0))
	}
	if d.err == nil && len(d.b) != 0 {
		d.fail("%d bytes after the arguments", len(d.b))
	}
	if d.err != nil {
		return nil, d.err
	}
	return f, nil
}

// Codec is the loop.Codec of frames.
type Codec struct{}

// Encode writes one frame.
func (Codec) Encode(w *bufio.Writer, f *Frame) error {
	b, err := AppendFrame(nil, f)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// Decode reads one frame.
func (Codec) Decode(r *bufio.Reader) (*Frame, error) { return ReadFrame(r) }
