package store

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Space is the first byte of a key: it names the key space.
type Space byte

// Key spaces. The frontier owns SpaceQueue, SpaceSeen, SpaceFrontier and
// SpaceKnown and writes them through the raw API (Batch.SetRaw, Store.IterRaw).
const (
	SpaceURI      Space = 'u'
	SpaceSite     Space = 's'
	SpaceDoc      Space = 'd'
	SpaceChecksum Space = 'c'
	SpaceCsumURIs Space = 'k'
	SpaceRoute    Space = 'r'
	SpaceDNS      Space = 'n'
	SpaceMeta     Space = 'm'
	SpaceQueue    Space = 'q'
	SpaceSeen     Space = 'h'
	SpaceFrontier Space = 'f'
	SpaceKnown    Space = 'w'
	SpaceHeader   Space = 'x' // response headers of stored documents (docextra.go)
)

// errCorrupt is wrapped by every decoding error.
var errCorrupt = errors.New("store: corrupt value")

// AppendLP appends uvarint(len(s)) and s to dst.
func AppendLP(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// appendLPBytes is AppendLP for a byte slice.
func appendLPBytes(dst, s []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// ReadLP reads one length-prefixed string from b and returns it and the rest.
// The length is checked against len(b) before anything is allocated.
func ReadLP(b []byte) (string, []byte, error) {
	s, rest, err := readLPBytes(b)
	return string(s), rest, err
}

func readLPBytes(b []byte) ([]byte, []byte, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 {
		return nil, nil, fmt.Errorf("%w: bad length", errCorrupt)
	}
	b = b[k:]
	if n > uint64(len(b)) {
		return nil, nil, fmt.Errorf("%w: length %d exceeds %d bytes left", errCorrupt, n, len(b))
	}
	return b[:n], b[n:], nil
}

// key builds a key in space sp from length-prefixed parts and a raw tail.
func key(sp Space, tail string, parts ...string) []byte {
	n := 1 + len(tail)
	for _, p := range parts {
		n += len(p) + binary.MaxVarintLen32
	}
	k := make([]byte, 1, n)
	k[0] = byte(sp)
	for _, p := range parts {
		k = AppendLP(k, p)
	}
	return append(k, tail...)
}

// prefixEnd returns the smallest key greater than every key with prefix p,
// or nil when there is none (p is all 0xff).
func prefixEnd(p []byte) []byte {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}
