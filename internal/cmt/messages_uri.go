package cmt

import (
	"fmt"

	"github.com/trawl/trawl/internal/marshal"
)

// This file holds the crawl queue entry messages, the bulk of the traffic
// between schedulers. They are encoded with marshal's append helpers and
// decoded with its Reader, straight between bytes and structs.

// UMURI is CMD_UM_URI (25, 2.2.3.3 and 2.2.4.5): a crawl queue entry for
// the back of the receiver's crawl queue. The multinode scheduler sends it
// to the node scheduler a site is routed to; a node scheduler sends it to
// the multinode scheduler for a site it does not handle.
type UMURI struct {
	Collection string // PKT_DSPECNAME
	Entry      Entry  // PKT_DATA
}

// UMURIUrg is CMD_UM_URI_URG (26, 2.2.3.4 and 2.2.4.7): as UMURI, for the
// front of the receiver's crawl queue.
type UMURIUrg struct {
	Collection string // PKT_DSPECNAME
	Entry      Entry  // PKT_DATA
}

func (*UMURI) Code() Command    { return CmdUMURI }
func (*UMURIUrg) Code() Command { return CmdUMURIUrg }

func (m *UMURI) appendDict(dst []byte) ([]byte, error) {
	return appendEntryMessage(dst, CmdUMURI, m.Collection, &m.Entry), nil
}

func (m *UMURIUrg) appendDict(dst []byte) ([]byte, error) {
	return appendEntryMessage(dst, CmdUMURIUrg, m.Collection, &m.Entry), nil
}

func (m *UMURI) decodeField(r *marshal.Reader, k keyID) (bool, error) {
	return decodeEntryField(r, k, &m.Collection, &m.Entry)
}

func (m *UMURIUrg) decodeField(r *marshal.Reader, k keyID) (bool, error) {
	return decodeEntryField(r, k, &m.Collection, &m.Entry)
}

func (*UMURI) required() keySet    { return keys(kDSpecName, kData) }
func (*UMURIUrg) required() keySet { return keys(kDSpecName, kData) }

// appendEntryMessage writes {dn, pd, cm} in trawl's key order.
func appendEntryMessage(dst []byte, c Command, collection string, e *Entry) []byte {
	dst = marshal.AppendDictStart(dst)
	dst = appendStrField(dst, KeyDSpecName, collection)
	dst = AppendEntry(appendKey(dst, KeyData), e)
	dst = appendCmd(dst, c)
	return marshal.AppendDictEnd(dst)
}

func decodeEntryField(r *marshal.Reader, k keyID, collection *string, e *Entry) (bool, error) {
	var err error
	switch k {
	case kDSpecName:
		*collection, err = readString(r, "PKT_DSPECNAME")
	case kData:
		err = ReadEntry(r, e)
	default:
		return false, nil
	}
	return true, err
}

// AppendEntry appends the marshalled crawl queue entry 9-tuple to dst.
func AppendEntry(dst []byte, e *Entry) []byte {
	dst = marshal.AppendTupleHeader(dst, 9)
	dst = marshal.AppendString(dst, EntryTag)
	dst = AppendURIStructure(dst, &e.URI)
	dst = AppendURIStructure(dst, &e.Referrer)
	dst = marshal.AppendInt(dst, int64(e.Flags))
	dst = marshal.AppendInt(dst, int64(e.FrameFlags))
	dst = marshal.AppendListHeader(dst, len(e.Redirects))
	for _, h := range e.Redirects {
		dst = marshal.AppendTupleHeader(dst, 2)
		dst = marshal.AppendString(dst, h.URI)
		dst = marshal.AppendInt(dst, int64(h.Type))
	}
	dst = marshal.AppendInt(dst, int64(e.QueueFlags))
	dst = marshal.AppendInt(dst, e.Cycle)
	dst = marshal.AppendDictStart(dst)
	for _, x := range e.Extra {
		dst = appendScalar(dst, x.Key)
		dst = appendScalar(dst, x.Value)
	}
	return marshal.AppendDictEnd(dst)
}

// AppendURIStructure appends the marshalled 14-tuple of u to dst.
func AppendURIStructure(dst []byte, u *URIStructure) []byte {
	dst = marshal.AppendTupleHeader(dst, 14)
	dst = marshal.AppendString(dst, u.URI)
	dst = marshal.AppendString(dst, u.Scheme)
	dst = marshal.AppendString(dst, u.Netloc)
	dst = marshal.AppendString(dst, u.Host)
	if u.Port == NoPort {
		dst = marshal.AppendNone(dst)
	} else {
		dst = marshal.AppendInt(dst, int64(u.Port))
	}
	dst = marshal.AppendString(dst, u.Path)
	dst = marshal.AppendString(dst, u.Query)
	dst = marshal.AppendString(dst, u.Params)
	dst = marshal.AppendString(dst, u.Fragment)
	dst = marshal.AppendString(dst, u.Credentials)
	dst = marshal.AppendString(dst, u.DefaultScheme)
	dst = marshal.AppendInt(dst, b2i(u.SkipFragments))
	dst = marshal.AppendInt(dst, b2i(u.Parsed))
	return marshal.AppendString(dst, u.HostIDNA)
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func appendScalar(dst []byte, s Scalar) []byte {
	switch s.Kind {
	case ScalarInt:
		return marshal.AppendInt(dst, s.Int)
	case ScalarString:
		return marshal.AppendString(dst, s.Str)
	case ScalarFloat:
		return marshal.AppendFloat(dst, s.Float)
	}
	return marshal.AppendNone(dst)
}

// readSeq reads the header of a tuple or a list of n elements (any
// length if n < 0).
func readSeq(r *marshal.Reader, n int, what string) (int, error) {
	code, got, err := r.ReadSeqHeader()
	if err != nil {
		return 0, fmt.Errorf("cmt: %s: %w", what, err)
	}
	if code != '(' && code != '[' {
		return 0, fieldError(what, "want a tuple or a list, got type code %q", code)
	}
	if n >= 0 && got != n {
		return 0, fieldError(what, "want a tuple of %d, got %d elements", n, got)
	}
	return got, nil
}

// ReadEntry reads a crawl queue entry 9-tuple from r into e. Its strings
// share one copy of a small message (see marshal.Reader.ReadSharedString).
func ReadEntry(r *marshal.Reader, e *Entry) error {
	const what = "crawl queue entry"
	if _, err := readSeq(r, 9, what); err != nil {
		return err
	}
	tag, err := r.ReadBytes()
	if err != nil {
		return fmt.Errorf("cmt: %s tag: %w", what, err)
	}
	if string(tag) != EntryTag {
		return fieldError(what, "tag %q, want %q", tag, EntryTag)
	}
	if err := readURIStructure(r, &e.URI); err != nil {
		return err
	}
	if err := readURIStructure(r, &e.Referrer); err != nil {
		return err
	}
	f, err := readUint32(r, what+" URI flags")
	if err != nil {
		return err
	}
	e.Flags = URIFlags(f)
	ff, err := readInt32(r, what+" frame flags")
	if err != nil {
		return err
	}
	e.FrameFlags = FrameFlags(ff)
	n, err := readSeq(r, -1, what+" redirect trail")
	if err != nil {
		return err
	}
	e.Redirects = nil
	if n > 0 {
		e.Redirects = make([]RedirectHop, n)
	}
	for i := range e.Redirects {
		h := &e.Redirects[i]
		if _, err := readSeq(r, 2, what+" redirect"); err != nil {
			return err
		}
		if h.URI, err = readString(r, what+" redirect URI"); err != nil {
			return err
		}
		t, err := readUint32(r, what+" redirect type")
		if err != nil {
			return err
		}
		h.Type = URIFlags(t)
	}
	qf, err := readUint32(r, what+" queue flags")
	if err != nil {
		return err
	}
	e.QueueFlags = QueueFlags(qf)
	if e.Cycle, err = readInt(r, what+" refresh cycle"); err != nil {
		return err
	}
	if err := r.ReadDictStart(); err != nil {
		return fmt.Errorf("cmt: %s extra: %w", what, err)
	}
	e.Extra = nil
	for {
		more, err := r.DictNext()
		if err != nil {
			return fmt.Errorf("cmt: %s extra: %w", what, err)
		}
		if !more {
			return nil
		}
		var x ExtraItem
		if x.Key, err = readScalar(r, what+" extra key"); err != nil {
			return err
		}
		if x.Value, err = readScalar(r, what+" extra value"); err != nil {
			return err
		}
		e.Extra = append(e.Extra, x)
	}
}

// ReadURIStructure reads a URI structure 14-tuple from r into u. Its
// strings share one copy of a small message (see
// marshal.Reader.ReadSharedString).
func ReadURIStructure(r *marshal.Reader, u *URIStructure) error {
	return readURIStructure(r, u)
}

// readURIStructure reads a URI structure. Its strings share one copy of
// a small message (readString), so that the usual URI costs no
// allocation per string.
func readURIStructure(r *marshal.Reader, u *URIStructure) error {
	const what = "URI structure"
	if _, err := readSeq(r, 14, what); err != nil {
		return err
	}
	// A field already "" is not written again: most fields of a URI are
	// empty, and a store of a string into a heap struct costs a write
	// barrier while the garbage collector marks.
	str := func(p *string) error {
		s, err := readString(r, what)
		if s != "" || *p != "" {
			*p = s
		}
		return err
	}
	for _, p := range [...]*string{&u.URI, &u.Scheme, &u.Netloc, &u.Host} {
		if err := str(p); err != nil {
			return err
		}
	}
	if c, err := r.Peek(); err == nil && c == 'N' {
		_ = r.ReadNone()
		u.Port = NoPort
	} else {
		var err error
		if u.Port, err = readInt32(r, what+" port"); err != nil {
			return err
		}
		if u.Port == NoPort {
			return fieldError(what+" port", "-1 is not a port")
		}
	}
	for _, p := range [...]*string{&u.Path, &u.Query, &u.Params, &u.Fragment, &u.Credentials, &u.DefaultScheme} {
		if err := str(p); err != nil {
			return err
		}
	}
	sf, err := readInt(r, what+" skip fragments")
	if err != nil {
		return err
	}
	u.SkipFragments = sf != 0
	parsed, err := readInt(r, what+" parsed")
	if err != nil {
		return err
	}
	u.Parsed = parsed != 0
	return str(&u.HostIDNA)
}

func readScalar(r *marshal.Reader, what string) (Scalar, error) {
	c, err := r.Peek()
	if err != nil {
		return Scalar{}, fmt.Errorf("cmt: %s: %w", what, err)
	}
	switch c {
	case 'N':
		return Scalar{}, r.ReadNone()
	case 'i', 'I', 'l', 'T', 'F':
		i, err := readInt(r, what)
		return IntScalar(i), err
	case 's', 't', 'R', 'u':
		s, err := readString(r, what)
		return StrScalar(s), err
	case 'g', 'f':
		f, err := r.ReadFloat()
		if err != nil {
			return Scalar{}, fmt.Errorf("cmt: %s: %w", what, err)
		}
		return FloatScalar(f), nil
	}
	return Scalar{}, fieldError(what, "want None, an integer, a float or a string, got type code %q", c)
}
