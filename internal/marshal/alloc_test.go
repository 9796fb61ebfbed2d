//go:build !race

package marshal

import (
	"strings"
	"testing"
)

// TestDecodeAllocs bounds the allocations of Decode on the CMD_UM_URI
// benchmark message: 52 before the slabs and shared boxes, 27 with them
// (the copy of the message, the element, pair and dict-stack slabs, 9
// containers, 12 distinct non-empty strings and 2 ints above 255).
func TestDecodeAllocs(t *testing.T) {
	m := benchMessage()
	data := appendBenchMsg(nil, &m)
	if n := testing.AllocsPerRun(100, func() {
		if _, err := Decode(data); err != nil {
			t.Fatal(err)
		}
	}); n > 27 {
		t.Errorf("Decode: %v allocations, want at most 27", n)
	}
}

// TestReadSharedStringAllocs: the strings of a small message cost one
// allocation together; those of a large one one each.
func TestReadSharedStringAllocs(t *testing.T) {
	small := "(" + le32(3) + "s" + le32(3) + "abc" + "s" + le32(2) + "de" + "s" + le32(2) + "fg"
	big := small + strings.Repeat("N", SharedStringMax)
	for _, tt := range []struct {
		data string
		want float64
	}{{small, 1}, {big, 3}} {
		r := NewReader(nil, Limits{})
		data := []byte(tt.data)
		n := testing.AllocsPerRun(100, func() {
			r.Reset(data)
			if _, err := r.ReadTupleHeader(); err != nil {
				t.Fatal(err)
			}
			for range 3 {
				if _, err := r.ReadSharedString(); err != nil {
					t.Fatal(err)
				}
			}
		})
		if n != tt.want {
			t.Errorf("message of %d bytes: %v allocations, want %v", len(tt.data), n, tt.want)
		}
	}
}
