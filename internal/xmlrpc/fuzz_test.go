package xmlrpc

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func addSeeds(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "spec-*.xml"))
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, v := range roundTripValues() {
		if b, err := EncodeResponse(v); err == nil {
			f.Add(b)
		}
		if b, err := EncodeCall("m", v); err == nil {
			f.Add(b)
		}
	}
	f.Add(EncodeFault(&Fault{Code: 1, String: "x"}))
}

// FuzzDecodeMethodCall checks that DecodeCall never panics, and that a call
// it accepts encodes and decodes back to the same call.
func FuzzDecodeMethodCall(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := DecodeCall(bytes.NewReader(data), Limits{MaxBytes: 1 << 16})
		if err != nil {
			return
		}
		b, err := EncodeCall(c.Method, c.Params...)
		if err != nil {
			t.Fatalf("re-encoding %#v: %v", c, err)
		}
		c2, err := DecodeCall(bytes.NewReader(b), Limits{})
		if err != nil {
			t.Fatalf("decoding re-encoded call: %v\n%s", err, b)
		}
		if c2.Method != c.Method || !Equal(Array(c2.Params), Array(c.Params)) {
			t.Fatalf("round trip changed the call: %#v -> %#v", c, c2)
		}
	})
}

// FuzzDecodeResponse checks that DecodeResponse never panics, and that a
// response it accepts encodes and decodes back to the same value.
func FuzzDecodeResponse(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := DecodeResponse(bytes.NewReader(data), Limits{MaxBytes: 1 << 16})
		if err != nil {
			return
		}
		b, err := EncodeResponse(v)
		if err != nil {
			t.Fatalf("re-encoding %#v: %v", v, err)
		}
		v2, err := DecodeResponse(bytes.NewReader(b), Limits{})
		if err != nil {
			t.Fatalf("decoding re-encoded response: %v\n%s", err, b)
		}
		if !Equal(v, v2) {
			t.Fatalf("round trip changed the value: %#v -> %#v", v, v2)
		}
	})
}
