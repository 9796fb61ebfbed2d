package marshal

import (
	"runtime"
	"testing"
)

func fuzzSeeds(f *testing.F) {
	for _, tc := range b5 {
		for _, h := range tc.ver {
			if h != "" {
				f.Add(mustHex(f, h))
			}
		}
	}
	for _, tc := range decodeCases {
		if len(tc.in) < 200 {
			f.Add([]byte(tc.in))
		}
	}
}

// FuzzDecode: decoding never panics, allocates at most a small multiple of
// the input, agrees with Skip, and what it decodes encodes and formats to
// something that reads back equal.
func FuzzDecode(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		v, n, err := DecodeLimits(data, Limits{})
		runtime.ReadMemStats(&after)
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64*uint64(len(data))+8192 {
			t.Fatalf("decoding %d bytes allocated %d bytes", len(data), alloc)
		}
		r := NewReader(data, Limits{})
		serr := r.Skip()
		if (err == nil) != (serr == nil) || (err == nil && r.Offset() != n) {
			t.Fatalf("DecodeLimits: %d, %v; Skip: %d, %v", n, err, r.Offset(), serr)
		}
		// Reading again after a Seek back gives the same value or error.
		r2 := NewReader(data, Limits{})
		m := r2.Mark()
		_ = r2.Skip()
		r2.Seek(m)
		again, err2 := r2.ReadValue()
		if (err == nil) != (err2 == nil) || (err != nil && err.Error() != err2.Error()) ||
			(err == nil && (r2.Offset() != n || !Equal(v, again))) {
			t.Fatalf("after Seek: %v, %v; first: %v, %v", again, err2, v, err)
		}
		// Small limits fail cleanly too.
		_, _, _ = DecodeLimits(data, Limits{MaxDepth: 3, MaxLen: 4, MaxTotal: 5})
		if err != nil {
			return
		}
		enc, err := Encode(v)
		if err != nil {
			t.Fatalf("Encode(%s): %v", FormatPython(v), err)
		}
		v2, err := Decode(enc)
		if err != nil || !Equal(v, v2) {
			t.Fatalf("Decode(Encode(%s)) = %v, %v", FormatPython(v), v2, err)
		}
		lit := FormatPython(v)
		v3, err := ParsePython(lit)
		if err != nil || !Equal(v, v3) {
			t.Fatalf("ParsePython(%s) = %v, %v", lit, v3, err)
		}
	})
}

// FuzzParsePython: parsing never panics, and what it parses formats,
// parses, encodes and decodes back to an equal value.
func FuzzParsePython(f *testing.F) {
	for _, tc := range b5 {
		f.Add(FormatPython(tc.want))
	}
	for _, s := range []string{
		"set([1, 2])", "frozenset([])", "frozenset({(1, 2)})", "...", "5L", "-0x10L", "0o17", "0b101", "017",
		`'a\x00\'b'`, `"dq\"\n"`, `u'\u00e9\U0001f600\ud800'`, `b'\377'`, "float('nan')", "float('-inf')",
		"complex(-0.0, float('nan'))", "(1,)", "{1: 2,}", "[1, [2, [3]]]", "(-1e999-1e999j)", "2j", "-.5e-3",
		"{(1, 'a'): {u'b': None}}", "StopIteration", "Ellipsis", "'''tri\nple'''", "u'\\N{x}'", "{[1]: 2}",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParsePython(s)
		if err != nil {
			return
		}
		lit := FormatPython(v)
		v2, err := ParsePython(lit)
		if err != nil || !Equal(v, v2) {
			t.Fatalf("ParsePython(%q) = %s; reparse: %v, %v", s, lit, v2, err)
		}
		if FormatPython(v2) != lit {
			t.Fatalf("format not stable: %s then %s", lit, FormatPython(v2))
		}
		enc, err := Encode(v)
		if err != nil {
			t.Fatalf("Encode(%s): %v", lit, err)
		}
		v3, err := Decode(enc)
		if err != nil || !Equal(v, v3) {
			t.Fatalf("Decode(Encode(%s)) = %v, %v", lit, v3, err)
		}
	})
}
