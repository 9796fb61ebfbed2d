package table

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSizeChunk: a chunk's buffers are sized for the records mem holds at
// the input's record length, not for the most it could hold, and not
// beyond the input.
func TestSizeChunk(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	rec := strings.Repeat("x", 99) + "\n"
	if err := os.WriteFile(in, []byte(strings.Repeat(rec, 20000)), 0o644); err != nil {
		t.Fatal(err)
	}
	buf, recs := sizeChunk([]string{in}, 1<<20) // 2 MB of 100-byte records, 1 MiB chunks
	if n := (1 << 20) / (100 + recOverhead); cap(recs) < n || cap(recs) > n*5/4+64 {
		t.Errorf("index capacity %d for %d records a chunk", cap(recs), n)
	}
	if cap(buf) > 1<<20 || cap(buf) < (1<<20)*100/(100+recOverhead) {
		t.Errorf("buffer capacity %d", cap(buf))
	}
	buf, recs = sizeChunk([]string{in}, 1<<30) // the whole input fits
	if cap(recs) < 20000 || cap(recs) > 20000*5/4+64 || cap(buf) > 20000*100+1 {
		t.Errorf("whole input: index %d, buffer %d", cap(recs), cap(buf))
	}
}
