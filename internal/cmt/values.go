package cmt

import (
	"encoding/hex"
	"fmt"
	"math"

	"github.com/trawl/trawl/internal/marshal"
)

// This file converts the complex types of 2.2.2 to and from marshal values,
// and holds the small helpers every message uses. Decoding is lenient where
// the spec and its examples disagree (a tuple where a list is expected and
// the reverse, a str or a unicode for a string, a bool for an integer) and
// strict about everything else.

// fieldError reports a field of the wrong type or value.
func fieldError(what string, format string, args ...any) error {
	return fmt.Errorf("cmt: %s: %s", what, fmt.Sprintf(format, args...))
}

func kindOf(v marshal.Value) string {
	if v == nil {
		return "nothing"
	}
	return v.Kind().String()
}

func str(s string) marshal.Value    { return marshal.Bytes(s) }
func integer(i int64) marshal.Value { return marshal.Int(i) }

func boolInt(b bool) marshal.Value {
	if b {
		return marshal.Int(1)
	}
	return marshal.Int(0)
}

// optStr is None for "" and the string otherwise.
func optStr(s string) marshal.Value {
	if s == "" {
		return marshal.None{}
	}
	return marshal.Bytes(s)
}

func asString(v marshal.Value, what string) (string, error) {
	switch x := v.(type) {
	case marshal.Bytes:
		return string(x), nil
	case marshal.Unicode:
		return string(x), nil
	}
	return "", fieldError(what, "want a string, got %s", kindOf(v))
}

// asOptString reads a string or None ("").
func asOptString(v marshal.Value, what string) (string, error) {
	if _, ok := v.(marshal.None); ok {
		return "", nil
	}
	return asString(v, what)
}

func asInt(v marshal.Value, what string) (int64, error) {
	switch x := v.(type) {
	case marshal.Int:
		return int64(x), nil
	case marshal.Bool:
		if x {
			return 1, nil
		}
		return 0, nil
	}
	return 0, fieldError(what, "want an integer, got %s", kindOf(v))
}

func asInt32(v marshal.Value, what string) (int32, error) {
	i, err := asInt(v, what)
	if err != nil {
		return 0, err
	}
	if i < math.MinInt32 || i > math.MaxInt32 {
		return 0, fieldError(what, "%d out of the 32-bit range", i)
	}
	return int32(i), nil
}

// asUint32 reads a bitmask: anything from -2^31 (a negative int32 carrying
// bit 31) to 2^32-1.
func asUint32(v marshal.Value, what string) (uint32, error) {
	i, err := asInt(v, what)
	if err != nil {
		return 0, err
	}
	if i < math.MinInt32 || i > math.MaxUint32 {
		return 0, fieldError(what, "%d out of the 32-bit range", i)
	}
	return uint32(i), nil
}

func asBool(v marshal.Value, what string) (bool, error) {
	i, err := asInt(v, what)
	return i != 0, err
}

// asSeq reads a tuple or a list of n elements (any length if n < 0).
func asSeq(v marshal.Value, n int, what string) ([]marshal.Value, error) {
	var s []marshal.Value
	switch x := v.(type) {
	case marshal.Tuple:
		s = x
	case marshal.List:
		s = x
	default:
		if n >= 0 {
			return nil, fieldError(what, "want a tuple of %d, got %s", n, kindOf(v))
		}
		return nil, fieldError(what, "want a list, got %s", kindOf(v))
	}
	if n >= 0 && len(s) != n {
		return nil, fieldError(what, "want a tuple of %d, got %d elements", n, len(s))
	}
	return s, nil
}

func asDict(v marshal.Value, what string) (marshal.Dict, error) {
	d, ok := v.(marshal.Dict)
	if !ok {
		return nil, fieldError(what, "want a dictionary, got %s", kindOf(v))
	}
	return d, nil
}

// asStringList reads a list (or tuple) of strings.
func asStringList(v marshal.Value, what string) ([]string, error) {
	s, err := asSeq(v, -1, what)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(s))
	for i, e := range s {
		if out[i], err = asString(e, what); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func stringList(s []string) marshal.List {
	l := make(marshal.List, len(s))
	for i, e := range s {
		l[i] = str(e)
	}
	return l
}

// asChecksum reads PKT_CSUM: 16 raw bytes, or the 32 hex digits of the
// same digest (the "string of length 32" of 2.2.1.1).
func asChecksum(v marshal.Value, what string) (Checksum, error) {
	var c Checksum
	s, err := asString(v, what)
	if err != nil {
		return c, err
	}
	switch len(s) {
	case 16:
		copy(c[:], s)
		return c, nil
	case 32:
		if _, err := hex.Decode(c[:], []byte(s)); err == nil {
			return c, nil
		}
	}
	return c, fieldError(what, "want 16 bytes (or 32 hex digits), got %d bytes", len(s))
}

func checksumValue(c Checksum) marshal.Value { return marshal.Bytes(c[:]) }

// AddrInfo

// Value returns the 5-tuple of the addrinfo.
func (a AddrInfo) Value() marshal.Value {
	return marshal.Tuple{integer(int64(a.Family)), integer(int64(a.SockType)), integer(int64(a.Protocol)),
		str(a.CanonName), marshal.Tuple{str(a.IP), integer(int64(a.Port))}}
}

func addrInfoFromValue(v marshal.Value, what string) (AddrInfo, error) {
	var a AddrInfo
	t, err := asSeq(v, 5, what)
	if err != nil {
		return a, err
	}
	if a.Family, err = asInt32(t[0], what+" family"); err != nil {
		return a, err
	}
	if a.SockType, err = asInt32(t[1], what+" socket type"); err != nil {
		return a, err
	}
	if a.Protocol, err = asInt32(t[2], what+" protocol"); err != nil {
		return a, err
	}
	if a.CanonName, err = asString(t[3], what+" canonical name"); err != nil {
		return a, err
	}
	addr, err := asSeq(t[4], 2, what+" address")
	if err != nil {
		return a, err
	}
	if a.IP, err = asString(addr[0], what+" address"); err != nil {
		return a, err
	}
	if a.Port, err = asInt32(addr[1], what+" port"); err != nil {
		return a, err
	}
	return a, nil
}

// addrsValue is the address field of ADD_ROUTE and DNS_REPLY: None for nil,
// else a list of addrinfo tuples as in examples 4.2 and 4.3.
func addrsValue(a []AddrInfo) marshal.Value {
	if a == nil {
		return marshal.None{}
	}
	l := make(marshal.List, len(a))
	for i, e := range a {
		l[i] = e.Value()
	}
	return l
}

// addrsFromValue reads None (nil), one addrinfo tuple (as the 2.2.3.8 text
// says) or a list of them (as the examples send). A non-nil empty slice
// stands for an empty list.
func addrsFromValue(v marshal.Value, what string) ([]AddrInfo, error) {
	if _, ok := v.(marshal.None); ok {
		return nil, nil
	}
	s, err := asSeq(v, -1, what)
	if err != nil {
		return nil, err
	}
	if t, ok := v.(marshal.Tuple); ok && len(t) == 5 {
		if _, isInt := t[0].(marshal.Int); isInt {
			a, err := addrInfoFromValue(v, what)
			if err != nil {
				return nil, err
			}
			return []AddrInfo{a}, nil
		}
	}
	out := make([]AddrInfo, len(s))
	for i, e := range s {
		if out[i], err = addrInfoFromValue(e, what); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// URIStructure

// Value returns the 14-tuple of the URI structure.
func (u *URIStructure) Value() marshal.Value {
	var port marshal.Value = marshal.None{}
	if u.Port != NoPort {
		port = integer(int64(u.Port))
	}
	return marshal.Tuple{str(u.URI), str(u.Scheme), str(u.Netloc), str(u.Host), port,
		str(u.Path), str(u.Query), str(u.Params), str(u.Fragment), str(u.Credentials),
		str(u.DefaultScheme), boolInt(u.SkipFragments), boolInt(u.Parsed), str(u.HostIDNA)}
}

func uriStructureFromValue(v marshal.Value, what string) (URIStructure, error) {
	var u URIStructure
	t, err := asSeq(v, 14, what)
	if err != nil {
		return u, err
	}
	strs := [...]*string{&u.URI, &u.Scheme, &u.Netloc, &u.Host, nil, &u.Path, &u.Query,
		&u.Params, &u.Fragment, &u.Credentials, &u.DefaultScheme}
	for i, p := range strs {
		if p == nil {
			continue
		}
		if *p, err = asString(t[i], fmt.Sprintf("%s[%d]", what, i)); err != nil {
			return u, err
		}
	}
	if _, ok := t[4].(marshal.None); ok {
		u.Port = NoPort
	} else if u.Port, err = asInt32(t[4], what+" port"); err != nil {
		return u, err
	} else if u.Port == NoPort {
		return u, fieldError(what+" port", "-1 is not a port")
	}
	if u.SkipFragments, err = asBool(t[11], what+" skip fragments"); err != nil {
		return u, err
	}
	if u.Parsed, err = asBool(t[12], what+" parsed"); err != nil {
		return u, err
	}
	if u.HostIDNA, err = asString(t[13], what+" IDNA host"); err != nil {
		return u, err
	}
	return u, nil
}

// Scalar

// Value returns the marshal value of the scalar.
func (s Scalar) Value() marshal.Value {
	switch s.Kind {
	case ScalarInt:
		return marshal.Int(s.Int)
	case ScalarString:
		return marshal.Bytes(s.Str)
	case ScalarFloat:
		return marshal.Float(s.Float)
	}
	return marshal.None{}
}

func scalarFromValue(v marshal.Value, what string) (Scalar, error) {
	switch x := v.(type) {
	case marshal.None:
		return Scalar{}, nil
	case marshal.Int:
		return IntScalar(int64(x)), nil
	case marshal.Bool:
		if x {
			return IntScalar(1), nil
		}
		return IntScalar(0), nil
	case marshal.Bytes:
		return StrScalar(string(x)), nil
	case marshal.Unicode:
		return StrScalar(string(x)), nil
	case marshal.Float:
		return FloatScalar(float64(x)), nil
	}
	return Scalar{}, fieldError(what, "want None, an integer, a float or a string, got %s", kindOf(v))
}

// Entry

// Value returns the 9-tuple of the crawl queue entry.
func (e *Entry) Value() marshal.Value {
	trail := make(marshal.List, len(e.Redirects))
	for i, r := range e.Redirects {
		trail[i] = marshal.Tuple{str(r.URI), integer(int64(r.Type))}
	}
	extra := make(marshal.Dict, len(e.Extra))
	for i, x := range e.Extra {
		extra[i] = marshal.Pair{Key: x.Key.Value(), Value: x.Value.Value()}
	}
	return marshal.Tuple{str(EntryTag), e.URI.Value(), e.Referrer.Value(), integer(int64(e.Flags)),
		integer(int64(e.FrameFlags)), trail, integer(int64(e.QueueFlags)), integer(e.Cycle), extra}
}

// EntryFromValue converts a crawl queue entry 9-tuple.
func EntryFromValue(v marshal.Value) (Entry, error) {
	const what = "crawl queue entry"
	var e Entry
	t, err := asSeq(v, 9, what)
	if err != nil {
		return e, err
	}
	tag, err := asString(t[0], what+" tag")
	if err != nil {
		return e, err
	}
	if tag != EntryTag {
		return e, fieldError(what, "tag %q, want %q", tag, EntryTag)
	}
	if e.URI, err = uriStructureFromValue(t[1], "URI structure"); err != nil {
		return e, err
	}
	if e.Referrer, err = uriStructureFromValue(t[2], "referrer URI structure"); err != nil {
		return e, err
	}
	f, err := asUint32(t[3], what+" URI flags")
	if err != nil {
		return e, err
	}
	e.Flags = URIFlags(f)
	ff, err := asInt32(t[4], what+" frame flags")
	if err != nil {
		return e, err
	}
	e.FrameFlags = FrameFlags(ff)
	trail, err := asSeq(t[5], -1, what+" redirect trail")
	if err != nil {
		return e, err
	}
	if len(trail) > 0 {
		e.Redirects = make([]RedirectHop, len(trail))
	}
	for i, h := range trail {
		ht, err := asSeq(h, 2, what+" redirect")
		if err != nil {
			return e, err
		}
		if e.Redirects[i].URI, err = asString(ht[0], what+" redirect URI"); err != nil {
			return e, err
		}
		rt, err := asUint32(ht[1], what+" redirect type")
		if err != nil {
			return e, err
		}
		e.Redirects[i].Type = URIFlags(rt)
	}
	qf, err := asUint32(t[6], what+" queue flags")
	if err != nil {
		return e, err
	}
	e.QueueFlags = QueueFlags(qf)
	if e.Cycle, err = asInt(t[7], what+" refresh cycle"); err != nil {
		return e, err
	}
	extra, err := asDict(t[8], what+" extra")
	if err != nil {
		return e, err
	}
	if len(extra) > 0 {
		e.Extra = make([]ExtraItem, len(extra))
	}
	for i, p := range extra {
		if e.Extra[i].Key, err = scalarFromValue(p.Key, what+" extra key"); err != nil {
			return e, err
		}
		if e.Extra[i].Value, err = scalarFromValue(p.Value, what+" extra value"); err != nil {
			return e, err
		}
	}
	return e, nil
}
