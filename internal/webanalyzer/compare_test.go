package webanalyzer

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/trawl/trawl/internal/table"
)

// TestCompareLinksAndNoLinks: 3.6.5.2.5 through the registry, as a worker's
// pythontasks call runs it: records copied in order; for a page in both
// tables the older side goes, the links on a tie.
func TestCompareLinksAndNoLinks(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "x.")
	write := func(name, s string) {
		if err := os.WriteFile(p+name, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// a: links newer than no_links; b: no_links newer; c: a tie; d, e:
	// one side only.
	write("links_by_from_tmp.0", ""+
		"a t1 0 0000000000000000020 x\n"+
		"a t2 1 0000000000000000010 y\n"+
		"b t3 0 0000000000000000010 z\n"+
		"c t4 0 0000000000000000030 w\n"+
		"d t5 0 0000000000000000001 v\n")
	write("no_links_by_urihash_tmp.0", ""+
		"a 0000000000000000015 http://a/\n"+
		"b 0000000000000000011 http://b/\n"+
		"c 0000000000000000030 http://c/\n"+
		"e 0000000000000000005 http://e/\n")
	reg := table.NewRegistry()
	Register(reg)
	f, err := reg.Task("wamakefileutils.compare_links_and_nolinks")
	if err != nil {
		t.Fatal(err)
	}
	if err := f([]string{p, "0", "4"}); err != nil {
		t.Fatal(err)
	}
	read := func(name string) string {
		b, err := os.ReadFile(p + name)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if got, want := read("links_by_from.0"), ""+
		"a t1 0 0000000000000000020 x\n"+
		"a t2 1 0000000000000000010 y\n"+
		"d t5 0 0000000000000000001 v\n"; got != want {
		t.Errorf("links:\n%s\nwant:\n%s", got, want)
	}
	if got, want := read("no_links_by_urihash.0"), ""+
		"b 0000000000000000011 http://b/\n"+
		"c 0000000000000000030 http://c/\n"+
		"e 0000000000000000005 http://e/\n"; got != want {
		t.Errorf("no_links:\n%s\nwant:\n%s", got, want)
	}
	if err := f([]string{p, "zero", "4"}); err == nil {
		t.Error("a non-integer index was accepted")
	}
}
