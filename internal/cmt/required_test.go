package cmt

import (
	"testing"
)

// TestRequiredKeysAlwaysWritten: a PPDUP_ADD or PPDUP_REMOVE with an empty
// node id or an all-zero checksum is still written with those keys, so a
// replica receiving it forwarded sees exactly what was sent.
func TestRequiredKeysAlwaysWritten(t *testing.T) {
	for _, m := range []Message{
		&PPDUPAdd{Collection: "c", URI: "http://a/"},
		&PPDUPRemove{Collection: "c", URI: "http://a/"},
	} {
		d, err := MessageDict(m)
		if err != nil {
			t.Fatalf("%v: %v", m.Code(), err)
		}
		for _, k := range []string{"cs", "id", "dn", "ur", "cm"} {
			if _, ok := d.Get(k); !ok {
				t.Errorf("%v: key %q missing from %v", m.Code(), k, d)
			}
		}
	}
}
