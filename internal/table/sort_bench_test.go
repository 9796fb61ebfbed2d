package table

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// BenchmarkSort sorts a 64 MiB table on its first column, with this package
// and with GNU sort (LC_ALL=C, same memory, one thread) on the same input.
//
//	go test -run '^$' -bench Sort -benchtime 3x ./internal/table
func BenchmarkSort(b *testing.B) {
	dir := b.TempDir()
	in := filepath.Join(dir, "in")
	genTable(b, in, 1_600_000, 3) // about 64 MiB
	fi, _ := os.Stat(in)
	out := filepath.Join(dir, "out")
	for _, mem := range []int64{200 << 20, 16 << 20} {
		name := "trawl-S" + itoaMB(mem)
		b.Run(name, func(b *testing.B) {
			b.SetBytes(fi.Size())
			opt := SortOptions{Mem: mem, Keys: []SortKey{{Start: 1, End: 1}}}
			for i := 0; i < b.N; i++ {
				if err := Sort(context.Background(), []string{in}, out, opt); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("gnu-sort-S"+itoaMB(mem), func(b *testing.B) {
			if _, err := exec.LookPath("sort"); err != nil {
				b.Skip("no sort")
			}
			b.SetBytes(fi.Size())
			for i := 0; i < b.N; i++ {
				cmd := exec.Command("sort", "-t", " ", "-k1,1", "-S", itoaMB(mem)+"M", "--parallel=1", "-T", dir, "-o", out, in)
				cmd.Env = append(os.Environ(), "LC_ALL=C")
				if err := cmd.Run(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func itoaMB(n int64) string {
	n >>= 20
	s := ""
	for {
		s = string(rune('0'+n%10)) + s
		n /= 10
		if n == 0 {
			return s
		}
	}
}
