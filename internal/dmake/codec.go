package dmake

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// Codec carries Messages over a byte stream for internal/loop's Stream
// transport. Decode reads one line (at most MaxLine bytes) and, for the
// data-stream commands, its stream (at most MaxData bytes). A line that
// does not parse is returned as a Message with Err set, so the machine can
// log or answer it and the connection goes on; an over-long line, a
// stream that cannot be read or does not end in LF end the connection.
type Codec struct{}

// Encode writes m's wire form.
func (Codec) Encode(w *bufio.Writer, m Message) error {
	_, err := w.Write(AppendLine(nil, &m))
	return err
}

// Decode reads one message.
func (Codec) Decode(r *bufio.Reader) (Message, error) {
	line, err := readLine(r)
	if err != nil {
		return Message{}, err
	}
	m, err := ParseLine(line)
	if err != nil {
		return Message{Err: fmt.Errorf("%w: %q", err, truncate(bytes.TrimRight(line, "\n")))}, nil
	}
	if !HasData(m.Name) {
		return cloneMessage(m), nil
	}
	n, err := DataLen(&m)
	if err != nil {
		return Message{}, fmt.Errorf("%w (%v)", ErrDesync, err)
	}
	data := make([]byte, n+1)
	if _, err := io.ReadFull(r, data); err != nil {
		return Message{}, fmt.Errorf("dmake: reading a %s stream: %w", m.Name, err)
	}
	if data[n] != '\n' {
		return Message{}, ErrDesync
	}
	m = cloneMessage(m)
	m.Args, m.B64 = m.Args[:1], m.B64[:1]
	m.Data = data[:n]
	return m, nil
}

// readLine reads up to and including LF, refusing lines over MaxLine.
func readLine(r *bufio.Reader) ([]byte, error) {
	var buf []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(buf)+len(chunk) > MaxLine {
			return nil, ErrTooLong
		}
		if err == nil {
			if buf == nil {
				return chunk, nil
			}
			return append(buf, chunk...), nil
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			buf = append(buf, chunk...)
			continue
		}
		if err == io.EOF && len(buf)+len(chunk) > 0 {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
}
