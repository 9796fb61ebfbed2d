package marshal

import (
	"bytes"
	"encoding/hex"
	"errors"
	"runtime"
	"strings"
	"testing"
)

func le32(n uint32) string {
	return string([]byte{byte(n), byte(n >> 8), byte(n >> 16), byte(n >> 24)})
}

// nest returns depth lists, each holding the next, around inner.
func nest(depth int, inner string) string {
	return strings.Repeat("["+le32(1), depth) + inner
}

type badCase struct {
	name   string
	in     string
	err    error  // nil: must decode
	msg    string // substring of the error
	off    int    // error offset, -1 to not check
	pyNot  string // why CPython differs here, if it does
	noPy   bool   // CPython would allocate the claimed size: do not ask it
	py3Not string // why Python 3 differs here
}

var decodeCases = []badCase{
	{name: "empty", in: "", err: ErrTruncated, msg: "no type code", off: 0},
	{name: "code object", in: "c" + le32(0), err: ErrInvalid, msg: "0x63 'c'", off: 0},
	{name: "unknown object", in: "?", err: ErrInvalid, msg: "0x3f '?'", off: 0},
	{name: "unknown code", in: "(" + le32(1) + "q", err: ErrInvalid, msg: "unknown type code 0x71 'q'", off: 5},
	{name: "NULL at top", in: "0", err: ErrInvalid, msg: "NULL object", off: 0},
	{name: "NULL in tuple", in: "(" + le32(1) + "0", err: ErrInvalid, msg: "NULL object", off: 5},
	{name: "NULL as dict value", in: "{i" + le32(1) + "00", err: ErrInvalid, msg: "NULL object", off: 6,
		pyNot: "CPython drops a dict entry whose value is NULL and reads on"},
	{name: "dict not ended", in: "{i" + le32(1) + "N", err: ErrTruncated, off: 7},
	{name: "int short", in: "i\x01\x00", err: ErrTruncated, off: 0,
		pyNot: "CPython 2.7 reads the missing bytes of an int as 0xff"},
	{name: "int64 short", in: "I" + le32(1), err: ErrTruncated, off: 0,
		pyNot: "CPython 2.7 reads the missing bytes of an int as 0xff"},
	{name: "long top digit 0", in: "l" + le32(1) + "\x00\x00", err: ErrInvalid, msg: "unnormalized", off: 0},
	{name: "long digit 0x8000", in: "l" + le32(1) + "\x00\x80", err: ErrInvalid, msg: "digit out of range", off: 5},
	{name: "long over MaxLen", in: "l" + le32(0x7fffffff), err: ErrLimit, off: 0, noPy: true},
	{name: "long negative count over MaxLen", in: "l" + le32(0x80000000), err: ErrLimit, off: 0, noPy: true},
	{name: "long beyond input", in: "l" + le32(0x10000), err: ErrTruncated, off: 0, noPy: true},
	{name: "long short", in: "l" + le32(2) + "\x01\x00", err: ErrTruncated, off: 0},
	{name: "string beyond input", in: "s" + le32(0xffff) + "ab", err: ErrTruncated, msg: "exceeds the 2 bytes that remain", off: 0},
	{name: "string negative length", in: "s" + le32(0xffffffff), err: ErrInvalid, msg: "negative", off: 0},
	{name: "huge tuple", in: "(" + le32(0x00fffff0) + "N", err: ErrTruncated, off: 0, noPy: true},
	{name: "tuple over MaxLen", in: "(" + le32(0x7fffffff) + "N", err: ErrLimit, off: 0, noPy: true},
	{name: "huge list in tuple", in: "(" + le32(1) + "[" + le32(0x00fffff0), err: ErrTruncated, off: 5, noPy: true},
	{name: "ref out of range", in: "(" + le32(2) + "t" + le32(1) + "kR" + le32(1), err: ErrInvalid, msg: "string reference 1 out of range", off: 11},
	{name: "ref negative", in: "R" + le32(0xffffffff), err: ErrInvalid, off: 0},
	{name: "ref ok", in: "(" + le32(2) + "t" + le32(1) + "kR" + le32(0), py3Not: "Python 3 reads no R"},
	{name: "unicode not UTF-8", in: "u" + le32(1) + "\xff", err: ErrInvalid, msg: "UTF-8", off: 0},
	{name: "unicode overlong", in: "u" + le32(2) + "\xc0\x80", err: ErrInvalid, off: 0},
	{name: "unicode lone surrogate", in: "u" + le32(3) + "\xed\xa0\x80"},
	{name: "float text bad", in: "f\x03abc", err: ErrInvalid, msg: "bad float text", off: 1},
	{name: "float text underscore", in: "f\x031_0", err: ErrInvalid, off: 1},
	{name: "float text hex", in: "f\x050x1p1", err: ErrInvalid, off: 1},
	{name: "float text inf", in: "f\x04-inf"},
	{name: "float text short", in: "f\x05abc", err: ErrTruncated, off: 1},
	{name: "binary float short", in: "g\x00\x00", err: ErrTruncated, off: 0},
	{name: "complex short", in: "y" + le32(0) + le32(0), err: ErrTruncated, off: 0},
	{name: "text complex bad imag", in: "x\x011\x01z", err: ErrInvalid, off: 3},
	{name: "list dict key", in: "{[" + le32(0) + "N0", err: ErrInvalid, msg: "unhashable", off: 1},
	{name: "tuple-with-list dict key", in: "{(" + le32(1) + "[" + le32(0) + "N0", err: ErrInvalid, msg: "unhashable", off: 6},
	{name: "list in set", in: "<" + le32(1) + "[" + le32(0), err: ErrInvalid, msg: "unhashable", off: 5},
	{name: "dict in frozenset", in: ">" + le32(1) + "{0", err: ErrInvalid, msg: "unhashable", off: 5},
	{name: "frozenset dict key", in: "{>" + le32(1) + "i" + le32(1) + "N0"},
	{name: "depth 2000 empty list", in: nest(1999, "["+le32(0))},
	{name: "depth 2001", in: nest(2000, "N"), err: ErrLimit, msg: "recursion limit", off: 10000},
	{name: "dict at depth 2000", in: nest(1999, "{0"), err: ErrLimit, msg: "recursion limit", off: 9996},
	{name: "dict at depth 1999", in: nest(1998, "{0")},
}

func TestDecodeErrors(t *testing.T) {
	for _, tc := range decodeCases {
		t.Run(tc.name, func(t *testing.T) {
			v, err := Decode([]byte(tc.in))
			if tc.err == nil {
				if err != nil {
					t.Fatalf("Decode: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Decode = %s, want an error", FormatPython(v))
			}
			if !errors.Is(err, tc.err) {
				t.Errorf("error %q does not wrap %v", err, tc.err)
			}
			if !strings.Contains(err.Error(), tc.msg) || !strings.HasPrefix(err.Error(), "marshal: ") {
				t.Errorf("error %q does not say %q", err, tc.msg)
			}
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("error %T is not a *DecodeError", err)
			}
			if tc.off >= 0 && de.Offset != tc.off {
				t.Errorf("error at offset %d, want %d (%v)", de.Offset, tc.off, err)
			}
			// Skip agrees with ReadValue.
			if err := NewReader([]byte(tc.in), Limits{}).Skip(); err == nil {
				t.Errorf("Skip accepted what Decode refused")
			}
		})
	}
}

// TestDecodeErrorsAgreeWithCPython loads every case with CPython and
// checks it accepts and refuses the same inputs (except where the case says
// why not) and, where it accepts, loads the same value.
func TestDecodeErrorsAgreeWithCPython(t *testing.T) {
	script := pyCommon + `
sys.setrecursionlimit(20000)
while True:
    try:
        data = readrec()
    except EOFError:
        break
    try:
        line = 'ok ' + desc(marshal.loads(data))
    except Exception as e:
        line = 'err %s' % type(e).__name__
    stdout.write((line + '\n').encode('ascii'))
`
	for name, py := range pythons(t) {
		t.Run(name, func(t *testing.T) {
			var in []byte
			var cases []badCase
			for _, tc := range decodeCases {
				if tc.noPy {
					continue
				}
				cases = append(cases, tc)
				in = appendRec(in, []byte(tc.in))
			}
			lines := strings.Split(strings.TrimSuffix(string(runPython(t, py, script, in)), "\n"), "\n")
			if len(lines) != len(cases) {
				t.Fatalf("got %d answers for %d cases", len(lines), len(cases))
			}
			for i, tc := range cases {
				pyOK := strings.HasPrefix(lines[i], "ok ")
				weOK := tc.err == nil
				if pyOK != weOK && tc.pyNot == "" && (name != "python3" || tc.py3Not == "") {
					t.Errorf("%s: %s says %q, trawl accepts: %v", tc.name, name, lines[i], weOK)
				}
				if pyOK && weOK {
					v, _ := Decode([]byte(tc.in))
					if d := describe(v); "ok "+d != lines[i] {
						t.Errorf("%s: trawl %s, %s %s", tc.name, d, name, lines[i])
					}
				}
			}
		})
	}
}

func TestDecodeTrailing(t *testing.T) {
	_, err := Decode([]byte("NN"))
	if !errors.Is(err, ErrTrailing) {
		t.Fatalf("Decode(NN) error %v, want ErrTrailing", err)
	}
	v, n, err := DecodeLimits([]byte("NN"), Limits{})
	if err != nil || n != 1 || !Equal(v, None{}) {
		t.Fatalf("DecodeLimits(NN) = %v, %d, %v", v, n, err)
	}
}

func TestDecodeLimits(t *testing.T) {
	tests := []struct {
		name string
		in   string
		lim  Limits
		err  error
	}{
		{"string within MaxLen", "s" + le32(3) + "abc", Limits{MaxLen: 3}, nil},
		{"string over MaxLen", "s" + le32(4) + "abcd", Limits{MaxLen: 3}, ErrLimit},
		{"tuple over MaxLen", "(" + le32(4) + "NNNN", Limits{MaxLen: 3}, ErrLimit},
		{"long over MaxLen", "l" + le32(4) + "\x01\x00\x01\x00\x01\x00\x01\x00", Limits{MaxLen: 3}, ErrLimit},
		{"total within", "(" + le32(2) + "(" + le32(1) + "NN", Limits{MaxTotal: 3}, nil},
		{"total over", "(" + le32(2) + "(" + le32(2) + "NNN", Limits{MaxTotal: 3}, ErrLimit},
		{"dict pairs count", "(" + le32(1) + "{NNNN0", Limits{MaxTotal: 2}, ErrLimit},
		{"depth within", nest(2, "N"), Limits{MaxDepth: 3}, nil},
		{"depth over", nest(3, "N"), Limits{MaxDepth: 3}, ErrLimit},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := DecodeLimits([]byte(tc.in), tc.lim)
			if !errors.Is(err, tc.err) || (tc.err == nil) != (err == nil) {
				t.Errorf("err = %v, want %v", err, tc.err)
			}
		})
	}
}

// TestDecodeBigLengthsFailFast: a declared length far beyond the input is
// refused before anything is allocated for it.
func TestDecodeBigLengthsFailFast(t *testing.T) {
	for _, in := range []string{
		"s" + le32(0x7fffffff), "u" + le32(0x7fffffff), "(" + le32(0x7fffffff), "[" + le32(0x7fffffff),
		"<" + le32(0x7fffffff), ">" + le32(0x7fffffff), "l" + le32(0x7fffffff), "l" + le32(0x80000001),
	} {
		data := []byte(in)
		n := allocBytes(100, func() {
			if _, err := Decode(data); err == nil {
				t.Fatal("no error")
			}
		})
		if n > 512 { // the error value and its message
			t.Errorf("%x: %d bytes allocated", in, n)
		}
	}
}

// TestDecodeAllocationBound: the memory a decode allocates is bounded by a
// small multiple of the input, whatever the counts claim, even for a
// chain of containers that each claim as many elements as bytes remain.
func TestDecodeAllocationBound(t *testing.T) {
	var b bytes.Buffer
	for i := 0; i < 1500; i++ {
		b.WriteString("(" + le32(uint32(10000-5*i)))
	}
	in := b.Bytes()
	if after := float64(allocBytes(20, func() { _, _ = Decode(in) })); after > 64*float64(len(in)) {
		t.Errorf("decoding %d bytes allocated %v bytes", len(in), after)
	}
}

// allocBytes returns the bytes f allocates per call, averaged over n calls.
func allocBytes(n int, f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range n {
		f()
	}
	runtime.ReadMemStats(&after)
	return (after.TotalAlloc - before.TotalAlloc) / uint64(n)
}

func TestReaderTyped(t *testing.T) {
	data, _ := hex.DecodeString("28040000006905000000740100000078520000000075020000006162")
	r := NewReader(data, Limits{})
	n, err := r.ReadTupleHeader()
	if err != nil || n != 4 {
		t.Fatalf("ReadTupleHeader = %d, %v", n, err)
	}
	if _, err := r.ReadBytes(); !errors.Is(err, ErrType) {
		t.Fatalf("ReadBytes on an int: %v, want ErrType", err)
	}
	if v, err := r.ReadInt(); err != nil || v != 5 {
		t.Fatalf("ReadInt = %d, %v", v, err)
	}
	if s, err := r.ReadString(); err != nil || s != "x" {
		t.Fatalf("ReadString = %q, %v", s, err)
	}
	if c, b, err := r.ReadText(); err != nil || c != 's' || string(b) != "x" {
		t.Fatalf("ReadText (R) = %c %q %v", c, b, err)
	}
	if c, b, err := r.ReadText(); err != nil || c != 'u' || string(b) != "ab" {
		t.Fatalf("ReadText (u) = %c %q %v", c, b, err)
	}
	if r.Remaining() != 0 {
		t.Fatalf("%d bytes left", r.Remaining())
	}
	// Reset clears the string table.
	r.Reset([]byte("R\x00\x00\x00\x00"))
	if _, err := r.ReadBytes(); !errors.Is(err, ErrInvalid) {
		t.Fatalf("R after Reset: %v", err)
	}
}
