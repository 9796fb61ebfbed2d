package keyfilter

import (
	"fmt"
	"testing"
)

// TestFilter: no key added is ever reported absent, as string or bytes, and
// few keys not added are reported present while the filter is within its
// size.
func TestFilter(t *testing.T) {
	f := New(1000)
	if f.Limit() != MinKeys {
		t.Fatalf("limit %d, want %d", f.Limit(), MinKeys)
	}
	for i := range f.Limit() {
		if i%2 == 0 {
			f.Add('m', fmt.Sprint("http://a.test/", i))
		} else {
			f.AddBytes('m', []byte(fmt.Sprint("http://a.test/", i)))
		}
	}
	if !f.Full() {
		t.Fatal("not full after Limit additions")
	}
	for i := range f.Limit() {
		k := fmt.Sprint("http://a.test/", i)
		if !f.Has('m', k) || !f.HasBytes('m', []byte(k)) {
			t.Fatalf("key %d added and reported absent", i)
		}
	}
	fp := 0
	for i := range 100000 {
		if f.Has('l', fmt.Sprint("http://a.test/", i)) || f.HasBytes('m', []byte(fmt.Sprint("http://b.test/", i))) {
			fp++
		}
	}
	if fp > 4000 { // 2 x 100,000 lookups at about 1 %
		t.Errorf("%d false positives in 200,000 lookups", fp)
	}
	if g := New(MinKeys); g.Limit() != 2*MinKeys || g.Full() {
		t.Errorf("New(MinKeys): limit %d, full %v", g.Limit(), g.Full())
	}
}
