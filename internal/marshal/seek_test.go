package marshal

import (
	"errors"
	"strings"
	"testing"
)

// interned is a message with interned strings and references to them on
// both sides of the middle element: ('a', (t'k', R0), (t'm', R1, R0)).
var internedMsg = "(" + le32(3) + "s" + le32(1) + "a" +
	"(" + le32(2) + "t" + le32(1) + "k" + "R" + le32(0) +
	"(" + le32(3) + "t" + le32(1) + "m" + "R" + le32(1) + "R" + le32(0)

func TestMarkSeek(t *testing.T) {
	want, err := Decode([]byte(internedMsg))
	if err != nil {
		t.Fatal(err)
	}
	elems := want.(Tuple)
	tests := []struct {
		name string
		// skip is how many elements to read before the mark; ahead how
		// many more to read before seeking back.
		skip, ahead int
	}{
		{"back to the start of the elements", 0, 3},
		{"back over one interned string", 1, 2},
		{"back over the last element", 2, 1},
		{"forward again", 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewReader([]byte(internedMsg), Limits{})
			if _, err := r.ReadTupleHeader(); err != nil {
				t.Fatal(err)
			}
			for range tt.skip {
				if err := r.Skip(); err != nil {
					t.Fatal(err)
				}
			}
			m := r.Mark()
			if m.Offset() != r.Offset() {
				t.Fatalf("mark at %d, reader at %d", m.Offset(), r.Offset())
			}
			for range tt.ahead {
				if _, err := r.ReadValue(); err != nil {
					t.Fatal(err)
				}
			}
			end := r.Mark()
			r.Seek(m)
			// Reading again from the mark gives the same values, however
			// far the reader had gone.
			for i := tt.skip; i < len(elems); i++ {
				v, err := r.ReadValue()
				if err != nil {
					t.Fatalf("element %d after Seek: %v", i, err)
				}
				if !Equal(v, elems[i]) {
					t.Fatalf("element %d after Seek: %s, want %s", i, FormatPython(v), FormatPython(elems[i]))
				}
			}
			if r.Remaining() != 0 {
				t.Fatalf("%d bytes left", r.Remaining())
			}
			// A later mark is reachable too.
			r.Seek(end)
			if r.Offset() != end.Offset() {
				t.Fatalf("Seek(end): at %d, want %d", r.Offset(), end.Offset())
			}
		})
	}
}

// TestSeekRefBeforeString: after reading a 't' string further on, a
// reference that comes before that string in the message is still out of
// range, as CPython reads it.
func TestSeekRefBeforeString(t *testing.T) {
	data := []byte("R" + le32(0) + "t" + le32(1) + "k")
	r := NewReader(data, Limits{})
	r.Seek(Mark{off: 5})
	if b, err := r.ReadBytes(); err != nil || string(b) != "k" {
		t.Fatalf("ReadBytes = %q, %v", b, err)
	}
	r.Seek(Mark{})
	_, err := r.ReadBytes()
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "out of range (0 interned strings)") {
		t.Fatalf("reference before its string: %v", err)
	}
	// A 't' read twice is in the table once.
	r.Seek(Mark{off: 5})
	if _, err := r.ReadBytes(); err != nil {
		t.Fatal(err)
	}
	if len(r.interned) != 1 {
		t.Fatalf("%d interned strings, want 1", len(r.interned))
	}
}

// TestSeekElementCount: Seek sets the element count back, so reading a
// part again does not count its elements twice against MaxTotal.
func TestSeekElementCount(t *testing.T) {
	data := []byte("(" + le32(3) + "N" + "N" + "N")
	r := NewReader(data, Limits{MaxTotal: 3})
	m := r.Mark()
	for range 3 {
		if err := r.Skip(); err != nil {
			t.Fatal(err)
		}
		r.Seek(m)
	}
	if _, err := r.ReadValue(); err != nil {
		t.Fatal(err)
	}
}

// TestSeekForeignMark: a mark from elsewhere never makes the reader panic.
func TestSeekForeignMark(t *testing.T) {
	data := []byte(internedMsg)
	for _, m := range []Mark{{-5, -1}, {len(data) + 10, 1 << 40}, {7, 0}, {3, 2}} {
		r := NewReader(data, Limits{})
		_, _ = r.ReadValue()
		r.Seek(m)
		for r.Remaining() > 0 {
			if _, err := r.ReadValue(); err != nil {
				break
			}
		}
	}
}

func TestReadSharedString(t *testing.T) {
	small := "(" + le32(4) + "s" + le32(3) + "abc" + "s" + le32(0) + "t" + le32(2) + "de" + "R" + le32(0)
	big := small + strings.Repeat("N", SharedStringMax)
	for _, data := range []string{small, big} {
		r := NewReader([]byte(data), Limits{})
		read := func() []string {
			r.Reset([]byte(data))
			if _, err := r.ReadTupleHeader(); err != nil {
				t.Fatal(err)
			}
			var out []string
			for range 4 {
				s, err := r.ReadSharedString()
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, s)
			}
			return out
		}
		got := read()
		if strings.Join(got, ",") != "abc,,de,de" {
			t.Fatalf("strings %q", got)
		}
		r.Reset([]byte(data))
		if _, err := r.ReadSharedString(); !errors.Is(err, ErrType) {
			t.Fatalf("ReadSharedString of a tuple: %v", err)
		}
	}
	// A unicode string is its UTF-8.
	r := NewReader([]byte("u"+le32(2)+"\xc3\xa9"), Limits{})
	if s, err := r.ReadSharedString(); s != "é" || err != nil {
		t.Fatalf("unicode: %q, %v", s, err)
	}
}
