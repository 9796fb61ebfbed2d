package xmlrpc

import (
	"bytes"
	"testing"
)

func BenchmarkDecodeSpec43(b *testing.B) {
	body := readSpec(b, "43-response")
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeResponse(bytes.NewReader(body), Limits{}); err != nil {
			b.Fatal(err)
		}
	}
}
