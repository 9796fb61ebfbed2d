package crawlpipe

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadFileCapped(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "uris.txt")
	if err := os.WriteFile(name, []byte(strings.Repeat("x", 10)), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFileCapped(name, 10); err != nil || len(b) != 10 {
		t.Errorf("10 bytes under a 10-byte cap: %d bytes, %v", len(b), err)
	}
	if _, err := ReadFileCapped(name, 9); err == nil || !strings.Contains(err.Error(), "larger than 9 bytes") {
		t.Errorf("10 bytes under a 9-byte cap: %v, want a size error naming the file", err)
	}
	if _, err := ReadFileCapped(filepath.Join(dir, "missing"), 9); !os.IsNotExist(err) {
		t.Errorf("missing file: %v", err)
	}
}
