package table

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/trawl/trawl/internal/marshal"
	"github.com/trawl/trawl/internal/testenv"
)

func TestParseSpecs(t *testing.T) {
	in, err := ParseInputSpec(`c:\x\y:3:2`)
	if err != nil || in != (InputSpec{File: `c:\x\y`, NumCols: 3, Key: 2}) {
		t.Errorf("input spec %+v %v", in, err)
	}
	for _, bad := range []string{"a:0:1", "a:3:4", "a:3:0", "a:3", ":3:1", "a:x:1"} {
		if _, err := ParseInputSpec(bad); err == nil {
			t.Errorf("input spec %q accepted", bad)
		}
	}
	out, err := ParseOutputSpec("p:0:4")
	if err != nil || out != (OutputSpec{Prefix: "p", Key: 0, Split: 4}) || out.Name(3) != "p.3" {
		t.Errorf("output spec %+v %v", out, err)
	}
	// The spec's valid and invalid sort keys (2.2.3.8).
	for s, want := range map[string]SortKey{
		"-k1": {Start: 1}, "-k1,1": {Start: 1, End: 1}, "-k1,1r": {Start: 1, End: 1, Reverse: true},
		"-k1,5": {Start: 1, End: 5}, "-k2,2n": {Start: 2, End: 2, Numeric: true},
		"-k2,2nr": {Start: 2, End: 2, Numeric: true, Reverse: true}, "-k12,12": {Start: 12, End: 12},
	} {
		if got, err := ParseSortKey(s); err != nil || got != want {
			t.Errorf("ParseSortKey(%q) = %+v, %v", s, got, err)
		}
	}
	for _, bad := range []string{"-k0", "-k-1", "-k1,2n", "-k2,1", "-kx", "k1", "-k1,1rn"} {
		if _, err := ParseSortKey(bad); err == nil {
			t.Errorf("ParseSortKey(%q) accepted", bad)
		}
	}
}

func TestBucketIsPythonCRC32Modulo(t *testing.T) {
	// Python 2: zlib.crc32(v) % n (signed CRC, result with the divisor's sign).
	for _, tc := range []struct {
		v    string
		n, b int
	}{{"a", 7, 0}, {"a", 3, 2}, {"hello", 7, 2}, {"hello", 3, 1}, {"key42", 7, 4}, {"key42", 3, 0}, {"", 7, 0}} {
		if got := Bucket([]byte(tc.v), tc.n); got != tc.b {
			t.Errorf("Bucket(%q, %d) = %d, want %d", tc.v, tc.n, got, tc.b)
		}
	}
	if LongBucket([]byte("-7"), 3) != 2 || LongBucket([]byte("123456789012345678901234567890"), 7) != mod7("123456789012345678901234567890") {
		t.Error("LongBucket")
	}
}

func mod7(s string) int {
	r := 0
	for _, c := range s {
		r = (r*10 + int(c-'0')) % 7
	}
	return r
}

// genTable writes n records "key num text" with repeated keys.
func genTable(t testing.TB, path string, n int, seed uint64) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 1))
	var b bytes.Buffer
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "k%04d %d w%x\n", r.IntN(n/3+1), r.IntN(2000)-1000, r.Uint32()%4096)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func needGNUSort(t *testing.T) {
	t.Helper()
	testenv.Tool(t, "GNU coreutils", "sort")
}

// sortArgs splits GNU sort's arguments ("-u", "-kPOS") and returns them
// with the SortOptions they mean, with mem bytes of memory.
func sortArgs(t *testing.T, keys string, mem int64) ([]string, SortOptions) {
	t.Helper()
	args := strings.Fields(keys)
	opt := SortOptions{Mem: mem}
	for _, a := range args {
		if a == "-u" {
			opt.Unique = true
			continue
		}
		k, err := ParseSortKey(a)
		if err != nil {
			t.Fatal(err)
		}
		opt.Keys = append(opt.Keys, k)
	}
	return args, opt
}

func TestSortMatchesGNUSort(t *testing.T) {
	needGNUSort(t)
	dir := t.TempDir()
	in1, in2 := filepath.Join(dir, "in1"), filepath.Join(dir, "in2")
	genTable(t, in1, 20000, 1)
	genTable(t, in2, 5000, 2)
	for _, keys := range []string{"", "-k1,1", "-k2,2n", "-k2,2nr", "-k1,1r -k3", "-k2,3", "-u -k1,1", "-u"} {
		t.Run(keys, func(t *testing.T) {
			out := filepath.Join(dir, "out")
			// 64 KiB of memory: the sort spills dozens of runs.
			args, opt := sortArgs(t, keys, 64<<10)
			if err := Sort(context.Background(), []string{in1, in2}, out, opt); err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(out)
			cmd := exec.Command("sort", append(append([]string{"-t", " "}, args...), in1, in2)...)
			cmd.Env = append(os.Environ(), "LC_ALL=C")
			want, err := cmd.Output()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("sort %s differs from GNU sort (%d vs %d bytes)", keys, len(got), len(want))
			}
			// Merge mode over two sorted halves gives the same.
			if opt.Unique {
				return
			}
			a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
			_ = Sort(context.Background(), []string{in1}, a, opt)
			_ = Sort(context.Background(), []string{in2}, b, opt)
			m := opt
			m.Merge = true
			if err := Sort(context.Background(), []string{a, b}, out, m); err != nil {
				t.Fatal(err)
			}
			got, _ = os.ReadFile(out)
			if !bytes.Equal(got, want) {
				t.Fatal("merge mode differs")
			}
		})
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}

func TestSplitMergeReduce(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	w := func(name, s string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(s), 0o644)
		return p
	}
	main := w("main", "a 1\nb 2\nb 3\nd 4\n")
	other := w("other", "a x\nb y\nc z\nd w\n")
	reg := NewRegistry()
	join, _ := reg.Merge("table.join", nil)
	out := OutputSpec{Prefix: filepath.Join(dir, "j"), Key: 1, Split: 1}
	if err := Merge(ctx, []InputSpec{{main, 2, 1}, {other, 2, 1}}, out, join, false); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(out.Name(0))
	if string(got) != "a 1 x\nb 2 y\nb 3 y\nd 4 w\n" {
		t.Errorf("join:\n%s", got)
	}
	var seen []string
	rec := func(key []byte, g [][][]byte, emit Emit) error {
		seen = append(seen, fmt.Sprintf("%s:%d,%d", key, len(g[0]), len(g[1])))
		return nil
	}
	if err := Merge(ctx, []InputSpec{{main, 2, 1}, {other, 2, 1}}, out, rec, true); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a:1,1", "b:2,1", "c:0,1", "d:1,1"}, seen); diff != "" {
		t.Errorf("reduce mode groups: %s", diff)
	}
	cnt, _ := reg.Reduce("table.count", nil)
	ro := OutputSpec{Prefix: filepath.Join(dir, "r"), Key: 1, Split: 2}
	if err := Reduce(ctx, InputSpec{main, 2, 1}, ro, cnt); err != nil {
		t.Fatal(err)
	}
	var all []string
	for i := 0; i < 2; i++ {
		b, _ := os.ReadFile(ro.Name(i))
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if l != "" {
				all = append(all, l)
				if Bucket([]byte(l[:1]), 2) != i {
					t.Errorf("%q in file %d", l, i)
				}
			}
		}
	}
	if diff := cmp.Diff([]string{"a 1", "b 2", "d 1"}, sortedCopy(all)); diff != "" {
		t.Error(diff)
	}
	// Split through the command line, CRC and long_split.
	nums := w("nums", "5 a\n-7 b\n9 c\n")
	if err := Main(ctx, []string{"split", nums, "-o", filepath.Join(dir, "s") + ":1:3", "--splitfunction2", "wamakefileutils.long_split"}, reg); err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"9 c\n", "", "5 a\n-7 b\n"} {
		b, _ := os.ReadFile(filepath.Join(dir, fmt.Sprintf("s.%d", i)))
		if string(b) != want {
			t.Errorf("s.%d = %q, want %q", i, b, want)
		}
	}
}

func sortedCopy(s []string) []string {
	c := append([]string(nil), s...)
	for i := range c {
		for j := i + 1; j < len(c); j++ {
			if c[j] < c[i] {
				c[i], c[j] = c[j], c[i]
			}
		}
	}
	return c
}

func TestFuncvarsAndCLIErrors(t *testing.T) {
	d := marshal.Dict{{Key: marshal.Str("fromdate"), Value: marshal.Str("2012-06-30")}}
	s, err := EncodeFuncvars(d)
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeFuncvars(s)
	if err != nil || !marshal.Equal(d, back) {
		t.Fatalf("funcvars round trip: %v", err)
	}
	reg := NewRegistry()
	for _, args := range [][]string{
		{}, {"nosuch"}, {"sort"}, {"sort", "-k0", "a", "-o", "b"}, {"merge", "-i", "a:1:1", "-o", "p:1:1"},
		{"merge", "-i", "a:1:1", "-i", "b:1:1", "-o", "p:1:1", "-l", "nosuch"}, {"reduce", "-i", "a:1:1"},
		{"split", "x"}, {"pythontasks", "nosuch"}, {"pythontasks", "_local_touch_func"},
	} {
		if err := Main(context.Background(), args, reg); err == nil {
			t.Errorf("Main(%q) succeeded", args)
		}
	}
}

// TestSortKeyPrefixes: keys that share their first 8 bytes, are prefixes
// of one another or hold bytes below SP sort as GNU sort orders them (the
// sort compares 8-byte prefixes first).
func TestSortKeyPrefixes(t *testing.T) {
	needGNUSort(t)
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	r := rand.New(rand.NewPCG(3, 4))
	stems := []string{"", "a", "abcdefg", "abcdefgh", "abcdefghi", "abcdefgh\x01", "abcdefg\x01", "abcdefgh\x7f", "\x01\x01", "zzzzzzzzzzzz"}
	var b bytes.Buffer
	for i := 0; i < 5000; i++ {
		fmt.Fprintf(&b, "%s%s %s%d x\n", stems[r.IntN(len(stems))], strings.Repeat("b", r.IntN(3)),
			stems[r.IntN(len(stems))], r.IntN(5))
	}
	if err := os.WriteFile(in, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, keys := range []string{"", "-k1,1", "-k2,2 -k1,1", "-k1,1r -k2", "-u -k2,2", "-k1,2"} {
		for _, mem := range []int64{16 << 10, 200 << 20} {
			args, opt := sortArgs(t, keys, mem)
			out := filepath.Join(dir, "out")
			if err := Sort(context.Background(), []string{in}, out, opt); err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(out)
			cmd := exec.Command("sort", append(append([]string{"-t", " "}, args...), in)...)
			cmd.Env = append(os.Environ(), "LC_ALL=C")
			want, err := cmd.Output()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("sort %q (memory %d) differs from GNU sort", keys, mem)
			}
		}
	}
}
