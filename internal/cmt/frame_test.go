package cmt

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
	"github.com/trawl/trawl/internal/marshal"
)

// specFrames returns every section 4 example frame, PPDUP codes made
// normative, concatenated, and the frames one by one.
func specFrames(t testing.TB) ([]byte, [][]byte) {
	t.Helper()
	ack := mustHex(t, hex45ConfigAckAsPrinted)
	ack[3] = 0x24
	frames := [][]byte{
		mustHex(t, hex41Init), mustHex(t, hex42AddRoute), mustHex(t, hex43DNSRequest), mustHex(t, hex43DNSReply),
		mustHex(t, hex44URI), withCommand(t, mustHex(t, hex45SetConfig), CmdPPDUPSetConfig),
		withCommand2(t, ack, CmdPPDUPConfigAck),
		withCommand(t, mustHex(t, hex46Add), CmdPPDUPAdd), withCommand(t, mustHex(t, hex46AddOK), CmdPPDUPAddOK),
	}
	return bytes.Join(frames, nil), frames
}

func readAll(t *testing.T, fr *FrameReader) []Frame {
	t.Helper()
	var out []Frame
	for {
		body, err := fr.ReadFrame()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		f, err := DecodeFrame(body)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, f)
	}
}

func TestFrameReaderSplits(t *testing.T) {
	stream, _ := specFrames(t)
	want := readAll(t, NewFrameReader(bytes.NewReader(stream), 0))
	if len(want) != 10 {
		t.Fatalf("%d frames, want 10", len(want))
	}
	readers := map[string]func() io.Reader{
		"one byte":  func() io.Reader { return iotest.OneByteReader(bytes.NewReader(stream)) },
		"half":      func() io.Reader { return iotest.HalfReader(bytes.NewReader(stream)) },
		"data+err":  func() io.Reader { return iotest.DataErrReader(bytes.NewReader(stream)) },
		"pipe 7":    func() io.Reader { return chunked(stream, 7) },
		"pipe 4096": func() io.Reader { return chunked(stream, 4096) },
	}
	for name, r := range readers {
		t.Run(name, func(t *testing.T) {
			got := readAll(t, NewFrameReader(r(), 0))
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// chunked returns a reader that hands out data n bytes per Read.
func chunked(data []byte, n int) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		for len(data) > 0 {
			k := min(n, len(data))
			if _, err := pw.Write(data[:k]); err != nil {
				return
			}
			data = data[k:]
		}
		pw.Close()
	}()
	return pr
}

func header(n uint32) []byte { return binary.BigEndian.AppendUint32(nil, n) }

func TestFrameReaderErrors(t *testing.T) {
	tests := []struct {
		name  string
		input []byte
		max   int
		is    error
		want  string
	}{
		{"too large", append(header(1<<20+1), 1, 2, 3), 1 << 20, ErrFrameTooLarge, "announces 1048577 bytes, limit 1048576"},
		{"too large default", header(DefaultMaxFrame + 1), 0, ErrFrameTooLarge, "limit 67108864"},
		{"max uint32", header(0xFFFFFFFF), 0, ErrFrameTooLarge, "4294967295"},
		{"short header", []byte{0, 0}, 0, io.ErrUnexpectedEOF, "frame header at byte 0"},
		{"short body", append(header(10), 1, 2, 3), 0, io.ErrUnexpectedEOF, "(3 of 10 bytes)"},
		// A header that lies: 60 MiB announced, 10 bytes sent.
		{"lying header", append(header(60<<20), make([]byte, 10)...), 0, io.ErrUnexpectedEOF, "(10 of 62914560 bytes)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fr := NewFrameReader(bytes.NewReader(tt.input), tt.max)
			_, err := fr.ReadFrame()
			if !errors.Is(err, tt.is) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v, want %v mentioning %q", err, tt.is, tt.want)
			}
			if cap(fr.buf) > frameReadChunk {
				t.Errorf("buffer grew to %d bytes for %d bytes of input", cap(fr.buf), len(tt.input))
			}
		})
	}
}

func TestFrameReaderLargeAndEmpty(t *testing.T) {
	big := bytes.Repeat([]byte("x"), 3<<20)
	msg := &UMLog{Collection: "c", File: LogSite, Text: string(big)}
	var stream []byte
	stream = append(stream, header(0)...)
	stream, err := AppendFrame(stream, msg, PriorityNormal)
	if err != nil {
		t.Fatal(err)
	}
	stream, _ = AppendFrame(stream, &UMKeepalive{}, PriorityHigh)
	fr := NewFrameReader(iotest.HalfReader(bytes.NewReader(stream)), 4<<20)
	body, err := fr.ReadFrame()
	if err != nil || len(body) != 0 {
		t.Fatalf("empty frame: %d bytes, %v", len(body), err)
	}
	if _, err := DecodeFrame(body); !errors.Is(err, ErrMalformed) {
		t.Errorf("empty body: %v", err)
	}
	body, err = fr.ReadFrame()
	if err != nil {
		t.Fatal(err)
	}
	f, err := DecodeFrame(body)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Message.(*UMLog); got.Text != msg.Text {
		t.Errorf("text of %d bytes, want %d", len(got.Text), len(msg.Text))
	}
	body, err = fr.ReadFrame()
	if err != nil {
		t.Fatal(err)
	}
	if f, err = DecodeFrame(body); err != nil || f.Message.Code() != CmdUMKeepalive {
		t.Fatalf("%v %v", f, err)
	}
	// The big buffer was dropped for the small frame.
	if cap(fr.buf) > frameReadChunk {
		t.Errorf("buffer kept %d bytes", cap(fr.buf))
	}
	if fr.Offset() != int64(len(stream)) {
		t.Errorf("offset %d, want %d", fr.Offset(), len(stream))
	}
}

func TestFrameWriter(t *testing.T) {
	var buf bytes.Buffer
	fw := NewFrameWriter(&buf, 0)
	if err := fw.WriteMessage(&UMDNSRequest{Collection: "example", Site: "www.contoso.com"}, PriorityHigh); err != nil {
		t.Fatal(err)
	}
	if buf.Len() != 0 || fw.Buffered() == 0 {
		t.Errorf("written before Flush")
	}
	if err := fw.Flush(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), mustHex(t, hex43DNSRequest)) {
		t.Errorf("got %X", buf.Bytes())
	}
	if err := fw.WriteMessage(&UMKeepalive{}, 3); err == nil {
		t.Error("priority 3 accepted")
	}
}

// FuzzFrameReader feeds arbitrary streams to the frame reader and the
// message decoder: no panic, no buffer beyond what arrived, and every
// message that decodes re-encodes to bytes that decode and re-encode to
// the same bytes.
func FuzzFrameReader(f *testing.F) {
	stream, frames := specFrames(f)
	f.Add(stream)
	for _, fr := range frames {
		f.Add(fr)
	}
	for _, m := range allMessages() {
		b, err := EncodeFrame(m.msg, PriorityHigh)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add(mustHex(f, hex45ConfigAckAsPrinted))
	f.Add(append(header(1<<30), 1, 2))
	const maxFrame = 1 << 20
	f.Fuzz(func(t *testing.T, data []byte) {
		fr := NewFrameReader(bytes.NewReader(data), maxFrame)
		dec := NewDecoder(marshal.Limits{MaxDepth: 100})
		for range 64 {
			body, err := fr.ReadFrame()
			if cap(fr.buf) > max(frameReadChunk, 2*len(data)) {
				t.Fatalf("buffer of %d bytes for %d bytes of input", cap(fr.buf), len(data))
			}
			if err != nil {
				if err != io.EOF && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, ErrFrameTooLarge) {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			fm, err := dec.Decode(body)
			if err != nil {
				if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrUnknownCommand) {
					t.Fatalf("error %v is neither malformed nor unknown", err)
				}
				continue
			}
			enc1, err := EncodeFrame(fm.Message, fm.Priority)
			if err != nil {
				t.Fatalf("decoded %#v does not encode: %v", fm.Message, err)
			}
			fm2, err := DecodeFrame(enc1[HeaderLen:])
			if err != nil {
				t.Fatalf("re-encoded %X does not decode: %v", enc1, err)
			}
			enc2, err := EncodeFrame(fm2.Message, fm2.Priority)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(enc1, enc2) {
				t.Fatalf("unstable:\n%X\n%X", enc1, enc2)
			}
		}
	})
}
