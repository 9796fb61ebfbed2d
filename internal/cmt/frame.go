package cmt

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
)

// DefaultMaxFrame is the largest frame body a FrameReader accepts unless
// told otherwise. The spec sets no limit (a uint32 allows 4 GiB); a crawl
// configuration or a statistics structure is the largest thing a frame
// carries, far below this.
const DefaultMaxFrame = 64 << 20

// HeaderLen is the length of the frame header: the body length as a
// big-endian uint32.
const HeaderLen = 4

// ErrFrameTooLarge reports a frame whose header announces more than the
// reader's maximum. The stream cannot be resynchronised: close it.
var ErrFrameTooLarge = errors.New("cmt: frame too large")

// FrameReader splits a byte stream into frames. It reads through its own
// buffer, so any split of the stream into reads works, and it never
// allocates more than the bytes that actually arrived (rounded up to the
// next power of two), so a header that lies about its length costs nothing.
//
// It is a standalone decoder with no knowledge of the messages inside;
// DecodeFrame turns a body into a message.
type FrameReader struct {
	r     *bufio.Reader
	max   int
	buf   []byte
	hdr   [HeaderLen]byte
	count int64 // bytes consumed, for error positions
}

// frameReadChunk is how much of a frame body is read before the buffer is
// grown again; the buffer grows only as the data arrives.
const frameReadChunk = 64 << 10

// NewFrameReader returns a FrameReader over r that rejects frames longer
// than maxFrame bytes (DefaultMaxFrame if maxFrame <= 0).
func NewFrameReader(r io.Reader, maxFrame int) *FrameReader {
	if maxFrame <= 0 {
		maxFrame = DefaultMaxFrame
	}
	return &FrameReader{r: bufio.NewReaderSize(r, frameReadChunk), max: maxFrame}
}

// Offset returns the number of stream bytes consumed by complete frames and
// headers so far.
func (fr *FrameReader) Offset() int64 { return fr.count }

// ReadFrame returns the body of the next frame: the marshalled
// (dict, priority) tuple, without the header. The slice is valid until the
// next call. At a clean end of stream (no byte of a new frame) it returns
// io.EOF; a stream that ends inside a frame gives io.ErrUnexpectedEOF; a
// header above the maximum gives an error wrapping ErrFrameTooLarge.
func (fr *FrameReader) ReadFrame() ([]byte, error) {
	if _, err := io.ReadFull(fr.r, fr.hdr[:]); err != nil {
		if err == io.EOF {
			return nil, io.EOF
		}
		return nil, fmt.Errorf("cmt: frame header at byte %d: %w", fr.count, err)
	}
	n := binary.BigEndian.Uint32(fr.hdr[:])
	if uint64(n) > uint64(fr.max) {
		return nil, fmt.Errorf("%w: header at byte %d announces %d bytes, limit %d", ErrFrameTooLarge, fr.count, n, fr.max)
	}
	start := fr.count
	fr.count += HeaderLen
	size := int(n)
	// Drop a large buffer left by an earlier big frame.
	if cap(fr.buf) > 4*frameReadChunk && size <= frameReadChunk {
		fr.buf = nil
	}
	have := 0
	for have < size {
		want := min(size, max(have*2, frameReadChunk))
		if cap(fr.buf) < want {
			nb := make([]byte, want)
			copy(nb, fr.buf[:have])
			fr.buf = nb
		}
		fr.buf = fr.buf[:want]
		m, err := io.ReadFull(fr.r, fr.buf[have:want])
		have += m
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, fmt.Errorf("cmt: frame at byte %d (%d of %d bytes): %w", start, have, size, err)
		}
	}
	fr.count += int64(size)
	if size == 0 {
		return fr.buf[:0:0], nil
	}
	return fr.buf[:size], nil
}

// Buffered returns the number of bytes read from the underlying reader and
// not yet returned in a frame.
func (fr *FrameReader) Buffered() int { return fr.r.Buffered() }

// FrameWriter writes frames through a buffer. Call Flush when the sender
// has nothing more to send for now.
type FrameWriter struct {
	w   *bufio.Writer
	buf []byte
}

// NewFrameWriter returns a FrameWriter over w with a buffer of size bytes
// (64 KiB if size <= 0).
func NewFrameWriter(w io.Writer, size int) *FrameWriter {
	if size <= 0 {
		size = frameReadChunk
	}
	return &FrameWriter{w: bufio.NewWriterSize(w, size)}
}

// WriteMessage encodes m with priority p and writes it as one frame.
func (fw *FrameWriter) WriteMessage(m Message, p Priority) error {
	b, err := AppendFrame(fw.buf[:0], m, p)
	if err != nil {
		return err
	}
	fw.buf = b
	_, err = fw.w.Write(b)
	return err
}

// WriteFrame writes a complete frame (header included), as AppendFrame
// builds it.
func (fw *FrameWriter) WriteFrame(frame []byte) error {
	_, err := fw.w.Write(frame)
	return err
}

// Flush writes any buffered data to the underlying writer.
func (fw *FrameWriter) Flush() error { return fw.w.Flush() }

// Buffered returns the number of bytes waiting in the buffer.
func (fw *FrameWriter) Buffered() int { return fw.w.Buffered() }

// AppendFrame appends the frame of message m with priority p to dst: the
// 4-byte big-endian body length, then the marshalled (dict, priority)
// tuple. On error dst is returned unchanged in length.
func AppendFrame(dst []byte, m Message, p Priority) ([]byte, error) {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	out, err := AppendPayload(dst, m, p)
	if err != nil {
		return dst[:start], err
	}
	n := len(out) - start - HeaderLen
	if uint64(n) > math.MaxUint32 {
		return dst[:start], fmt.Errorf("%w: %d bytes", ErrFrameTooLarge, n)
	}
	binary.BigEndian.PutUint32(out[start:], uint32(n))
	return out, nil
}

// EncodeFrame returns the frame of message m with priority p.
func EncodeFrame(m Message, p Priority) ([]byte, error) { return AppendFrame(nil, m, p) }
