package feed

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"
)

// Kind is the kind of a content operation.
type Kind uint8

// The operation kinds. Add and Update both replace the document at the
// destination (an update of an unknown document adds it); Remove deletes it.
// UpdateFields is a partial update carrying only the link analysis of a
// URI (Rank and Anchors): the destination merges them into the stored
// document, whose content it leaves alone.
const (
	Add Kind = iota + 1
	Update
	Remove
	UpdateFields
)

func (k Kind) String() string {
	switch k {
	case Add:
		return "add"
	case Update:
		return "update"
	case Remove:
		return "remove"
	case UpdateFields:
		return "update-fields"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Priority orders the operations of one destination: High goes first.
type Priority uint8

// The priorities. High is what URIF_FEED_HIGHPRI asks for.
const (
	Normal Priority = iota
	High
)

// URIFFeedHighPri is the MS-FSCMT URI flag URIF_FEED_HIGHPRI: the location
// gets high priority when submitted for indexing.
const URIFFeedHighPri = 0x00200000

// PriorityOf returns the feeding priority of a URI with the MS-FSCMT URI
// flags flags.
func PriorityOf(flags uint32) Priority {
	if flags&URIFFeedHighPri != 0 {
		return High
	}
	return Normal
}

// Header is one HTTP response header.
type Header struct{ Name, Value string }

// Metadata is what the crawler knows about a document besides its content.
type Metadata struct {
	Headers      []Header
	LastModified time.Time
	// Checksum is the duplicate-detection checksum (MD5, 16 bytes).
	Checksum []byte
	Language string
	// Description is the document's description (HTML meta description).
	Description string
	// Extraction says how Text was obtained: "html", "text", "pdf", "ooxml",
	// "odf", or "none: <reason>" when the format is not extracted.
	Extraction string
}

// Operation is one content operation for one destination.
type Operation struct {
	// Seq is assigned by the Outbox: it orders the operations and is the
	// version the index compares to make a resend idempotent.
	Seq      uint64
	Kind     Kind
	Priority Priority
	// Destination is the content destination (a feeding section name, or
	// "default:<collection>"); Collection the content collection.
	Destination string
	Collection  string
	URI         string
	MIME        string
	Title       string
	// Content is the original bytes; Text the extracted text.
	Content []byte
	Text    string
	// Anchors is the anchor text of links pointing to the document.
	Anchors []string
	// Rank is the document's rank from link analysis (an UpdateFields
	// op's; the index multiplies scores by 1+Rank).
	Rank float64
	// Links are the hyperlinks extracted from the document, as absolute
	// URIs (MS-FSCCFG pp/ds_send_links; nil when not asked for).
	Links []string
	// Duplicates are the URIs whose content is the document's, Redirects
	// the URIs that redirect to it, Mirrors its URIs on mirror sites
	// (MS-FSCCFG pp/ds_meta_info; nil when not asked for).
	Duplicates, Redirects, Mirrors []string
	Meta                           Metadata
}

// Size is the approximate size of op in memory, for batch byte limits.
func (op *Operation) Size() int {
	n := 64 + len(op.Destination) + len(op.Collection) + len(op.URI) + len(op.MIME) + len(op.Title) +
		len(op.Content) + len(op.Text) + len(op.Meta.Checksum) + len(op.Meta.Language) + len(op.Meta.Description) + len(op.Meta.Extraction)
	for _, a := range op.Anchors {
		n += len(a) + 8
	}
	for _, list := range [][]string{op.Links, op.Duplicates, op.Redirects, op.Mirrors} {
		for _, l := range list {
			n += len(l) + 8
		}
	}
	for _, h := range op.Meta.Headers {
		n += len(h.Name) + len(h.Value) + 16
	}
	return n
}

// Limits of the operation codec.
const (
	// MaxOpBytes caps an encoded operation.
	MaxOpBytes = 256 << 20
	// MaxAnchors, MaxLinks and MaxHeaders cap the lists of an operation.
	MaxAnchors = 10000
	MaxLinks   = 10000
	MaxHeaders = 1000
	// MaxReported caps each of the lists Duplicates, Redirects and
	// Mirrors.
	MaxReported = 10000
)

// opVersion 2 adds the links after the extraction, version 3 the
// duplicates, redirects and mirrors after the links, version 4 the rank
// after the mirrors (and the kind UpdateFields); versions 1 (no links), 2
// and 3 are still read.
const opMagic, opVersion = 'F', 4

// ErrCorrupt is returned when an encoded operation cannot be decoded.
var ErrCorrupt = errors.New("feed: corrupt operation")

// MarshalBinary encodes op (the layout is in the package comment).
func (op *Operation) MarshalBinary() ([]byte, error) {
	if op.Size() > MaxOpBytes {
		return nil, fmt.Errorf("feed: operation for %q is larger than %d bytes", op.URI, MaxOpBytes)
	}
	if len(op.Anchors) > MaxAnchors || len(op.Links) > MaxLinks || len(op.Meta.Headers) > MaxHeaders ||
		len(op.Duplicates) > MaxReported || len(op.Redirects) > MaxReported || len(op.Mirrors) > MaxReported {
		return nil, fmt.Errorf("feed: operation for %q has too many anchors, links, headers, duplicates, redirects or mirrors", op.URI)
	}
	b := make([]byte, 0, op.Size())
	b = append(b, opMagic, opVersion, byte(op.Kind), byte(op.Priority))
	b = binary.AppendUvarint(b, op.Seq)
	for _, s := range []string{op.Destination, op.Collection, op.URI, op.MIME, op.Title} {
		b = appendString(b, s)
	}
	b = binary.AppendUvarint(b, uint64(len(op.Content)))
	b = append(b, op.Content...)
	b = appendString(b, op.Text)
	b = binary.AppendUvarint(b, uint64(len(op.Anchors)))
	for _, a := range op.Anchors {
		b = appendString(b, a)
	}
	b = binary.AppendUvarint(b, uint64(len(op.Meta.Headers)))
	for _, h := range op.Meta.Headers {
		b = appendString(b, h.Name)
		b = appendString(b, h.Value)
	}
	var lm int64
	hasLM := byte(0)
	if !op.Meta.LastModified.IsZero() {
		hasLM, lm = 1, op.Meta.LastModified.UnixNano()
	}
	b = append(b, hasLM)
	b = binary.AppendVarint(b, lm)
	b = binary.AppendUvarint(b, uint64(len(op.Meta.Checksum)))
	b = append(b, op.Meta.Checksum...)
	for _, s := range []string{op.Meta.Language, op.Meta.Description, op.Meta.Extraction} {
		b = appendString(b, s)
	}
	b = binary.AppendUvarint(b, uint64(len(op.Links)))
	for _, l := range op.Links {
		b = appendString(b, l)
	}
	for _, list := range [][]string{op.Duplicates, op.Redirects, op.Mirrors} {
		b = binary.AppendUvarint(b, uint64(len(list)))
		for _, u := range list {
			b = appendString(b, u)
		}
	}
	b = binary.BigEndian.AppendUint64(b, math.Float64bits(op.Rank))
	return b, nil
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// decoder reads the fields of an encoded operation. Every length is checked
// against what is left of the input before anything is allocated.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s", ErrCorrupt, what)
	}
}

func (d *decoder) byte1(what string) byte {
	if d.err != nil || len(d.b) < 1 {
		d.fail(what)
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) uvarint(what string) uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail(what)
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
		d.fail(what)
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) bytes(what string) []byte {
	n := d.uvarint(what)
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)) {
		d.fail(what + " length")
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) float64(what string) float64 {
	if d.err != nil || len(d.b) < 8 {
		d.fail(what)
		return 0
	}
	v := math.Float64frombits(binary.BigEndian.Uint64(d.b))
	d.b = d.b[8:]
	if math.IsNaN(v) || math.IsInf(v, 0) {
		d.fail(what)
		return 0
	}
	return v
}

func (d *decoder) string(what string) string { return string(d.bytes(what)) }

// count reads a list length, capped by max and by the input left (each
// element takes at least min bytes).
func (d *decoder) count(what string, max, min int) int {
	n := d.uvarint(what)
	if d.err != nil {
		return 0
	}
	if n > uint64(max) || n*uint64(min) > uint64(len(d.b)) {
		d.fail(what + " count")
		return 0
	}
	return int(n)
}

// list reads a list of strings of at most max elements (nil when empty).
func (d *decoder) list(what string, max int) []string {
	n := d.count(what, max, 1)
	if n == 0 {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = d.string(what)
	}
	return out
}

// UnmarshalBinary decodes an operation written by MarshalBinary. It never
// panics; bad input gives an error wrapping ErrCorrupt.
func (op *Operation) UnmarshalBinary(data []byte) error {
	if len(data) > MaxOpBytes {
		return fmt.Errorf("%w: %d bytes", ErrCorrupt, len(data))
	}
	d := &decoder{b: data}
	magic, version := d.byte1("magic"), d.byte1("version")
	if magic != opMagic || version < 1 || version > opVersion {
		d.fail("magic or version")
		return d.err
	}
	var o Operation
	o.Kind = Kind(d.byte1("kind"))
	o.Priority = Priority(d.byte1("priority"))
	o.Seq = d.uvarint("seq")
	o.Destination = d.string("destination")
	o.Collection = d.string("collection")
	o.URI = d.string("uri")
	o.MIME = d.string("mime")
	o.Title = d.string("title")
	if c := d.bytes("content"); len(c) > 0 {
		o.Content = append([]byte(nil), c...)
	}
	o.Text = d.string("text")
	if n := d.count("anchors", MaxAnchors, 1); n > 0 {
		o.Anchors = make([]string, n)
		for i := range o.Anchors {
			o.Anchors[i] = d.string("anchor")
		}
	}
	if n := d.count("headers", MaxHeaders, 2); n > 0 {
		o.Meta.Headers = make([]Header, n)
		for i := range o.Meta.Headers {
			o.Meta.Headers[i] = Header{d.string("header name"), d.string("header value")}
		}
	}
	hasLM := d.byte1("last-modified flag")
	lm := d.varint("last-modified")
	if hasLM == 1 {
		o.Meta.LastModified = time.Unix(0, lm).UTC()
	} else if hasLM != 0 {
		d.fail("last-modified flag")
	}
	if c := d.bytes("checksum"); len(c) > 0 {
		o.Meta.Checksum = append([]byte(nil), c...)
	}
	o.Meta.Language = d.string("language")
	o.Meta.Description = d.string("description")
	o.Meta.Extraction = d.string("extraction")
	if version >= 2 {
		if n := d.count("links", MaxLinks, 1); n > 0 {
			o.Links = make([]string, n)
			for i := range o.Links {
				o.Links[i] = d.string("link")
			}
		}
	}
	if version >= 3 {
		o.Duplicates = d.list("duplicates", MaxReported)
		o.Redirects = d.list("redirects", MaxReported)
		o.Mirrors = d.list("mirrors", MaxReported)
	}
	if version >= 4 {
		o.Rank = d.float64("rank")
	}
	if d.err == nil && len(d.b) != 0 {
		d.fail("trailing bytes")
	}
	if d.err == nil && (o.Kind < Add || o.Kind > UpdateFields || o.Kind == UpdateFields && version < 4) {
		d.fail("kind")
	}
	if d.err == nil && o.Priority > High {
		d.fail("priority")
	}
	if d.err != nil {
		return d.err
	}
	*op = o
	return nil
}
