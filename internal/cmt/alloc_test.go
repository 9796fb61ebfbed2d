//go:build !race

package cmt

import (
	"testing"

	"github.com/trawl/trawl/internal/marshal"
)

// TestDecodeURIAllocs: a CMD_UM_URI message decodes in one pass with the
// message, the redirect trail and one copy of the body for all its
// strings; DecodeMessage adds its marshal Reader.
func TestDecodeURIAllocs(t *testing.T) {
	body, err := EncodePayload(&UMURI{Collection: "web", Entry: benchEntry()}, PriorityNormal)
	if err != nil {
		t.Fatal(err)
	}
	dec := NewDecoder(marshal.Limits{})
	if n := testing.AllocsPerRun(100, func() {
		if _, err := dec.Decode(body); err != nil {
			t.Fatal(err)
		}
	}); n > 3 {
		t.Errorf("Decoder.Decode: %v allocations, want at most 3", n)
	}
	if n := testing.AllocsPerRun(100, func() {
		if _, err := DecodeMessage(body); err != nil {
			t.Fatal(err)
		}
	}); n > 4 {
		t.Errorf("DecodeMessage: %v allocations, want at most 4", n)
	}
}
