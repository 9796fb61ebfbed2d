package store

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/golang/snappy"
)

// Codec is how a document body is compressed on disk. The codec is written
// in front of every stored body, so a store may hold documents written with
// different codecs.
type Codec byte

// Codecs.
const (
	CodecNone   Codec = 0
	CodecSnappy Codec = 1 // fast; the default
	CodecFlate  Codec = 2 // smaller, slower (compress/flate, BestSpeed)
)

// encodeDoc returns codec byte, uvarint(len(body)), then the compressed body.
func encodeDoc(c Codec, body []byte) ([]byte, error) {
	out := make([]byte, 0, 1+binary.MaxVarintLen64+len(body)/2+16)
	out = append(out, byte(c))
	out = binary.AppendUvarint(out, uint64(len(body)))
	switch c {
	case CodecNone:
		return append(out, body...), nil
	case CodecSnappy:
		return append(out, snappy.Encode(nil, body)...), nil
	case CodecFlate:
		var buf bytes.Buffer
		buf.Write(out)
		w, err := flate.NewWriter(&buf, flate.BestSpeed)
		if err != nil {
			return nil, fmt.Errorf("store: flate: %w", err)
		}
		if _, err := w.Write(body); err != nil {
			return nil, fmt.Errorf("store: flate: %w", err)
		}
		if err := w.Close(); err != nil {
			return nil, fmt.Errorf("store: flate: %w", err)
		}
		return buf.Bytes(), nil
	}
	return nil, fmt.Errorf("store: unknown codec %d", c)
}

// decodeDoc reverses encodeDoc, refusing bodies larger than maxSize before
// allocating them.
func decodeDoc(b []byte, maxSize int64) ([]byte, error) {
	if len(b) < 2 {
		return nil, fmt.Errorf("%w: short document", errCorrupt)
	}
	c := Codec(b[0])
	n, k := binary.Uvarint(b[1:])
	if k <= 0 {
		return nil, fmt.Errorf("%w: bad document length", errCorrupt)
	}
	if n > uint64(maxSize) {
		return nil, fmt.Errorf("%w: document of %d bytes exceeds the %d byte limit", errCorrupt, n, maxSize)
	}
	data := b[1+k:]
	switch c {
	case CodecNone:
		if uint64(len(data)) != n {
			return nil, fmt.Errorf("%w: document length %d, want %d", errCorrupt, len(data), n)
		}
		return append([]byte(nil), data...), nil
	case CodecSnappy:
		dl, err := snappy.DecodedLen(data)
		if err != nil || uint64(dl) != n {
			return nil, fmt.Errorf("%w: snappy length mismatch", errCorrupt)
		}
		out, err := snappy.Decode(make([]byte, dl), data)
		if err != nil {
			return nil, fmt.Errorf("%w: snappy: %v", errCorrupt, err)
		}
		return out, nil
	case CodecFlate:
		r := flate.NewReader(bytes.NewReader(data))
		defer r.Close()
		out := make([]byte, n)
		if _, err := io.ReadFull(r, out); err != nil {
			return nil, fmt.Errorf("%w: flate: %v", errCorrupt, err)
		}
		var one [1]byte
		if m, _ := r.Read(one[:]); m != 0 {
			return nil, fmt.Errorf("%w: flate: longer than its recorded length", errCorrupt)
		}
		return out, nil
	}
	return nil, fmt.Errorf("%w: unknown codec %d", errCorrupt, c)
}
