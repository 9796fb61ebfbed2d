package lint

import (
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// moduleSizes measures the module once for the tests that read it.
var moduleSizes = sync.OnceValues(func() ([]Oversize, error) { return Sizes(filepath.Join("..", "..")) })

// TestSizes: no command, file or function of the module over its limit,
// outside Tables and SizeExceptions.
func TestSizes(t *testing.T) {
	all, err := moduleSizes()
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range unlisted(all) {
		t.Errorf("%v", o)
	}
}

// TestSizeExceptionsStillHold fails when a listed table or exception is
// no longer over its limit (or is gone), so that the lists shrink as the
// work is done.
func TestSizeExceptionsStillHold(t *testing.T) {
	all, err := moduleSizes()
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range stale(all, Tables, SizeExceptions) {
		t.Errorf("%q is no longer over its limit: remove it from the list", key)
	}
}

// TestPlantedSizes measures a module with an oversize command, file and
// function (and a method) planted beside places just at their limits.
func TestPlantedSizes(t *testing.T) {
	root := t.TempDir()
	lines := func(n int) string { return strings.Repeat("//\n", n) }
	body := func(name string, n int) string { // a function of n lines
		return "func " + name + " {\n" + lines(n-2) + "}\n"
	}
	files := map[string]string{
		"go.mod": "module example.com/m\n\ngo 1.22\n",
		// cmd/big has 2000 lines in two files; cmd/small 1999.
		"cmd/big/main.go":      "package main\n" + lines(999),
		"cmd/big/sub/x.go":     "package sub\n" + lines(999),
		"cmd/small/main.go":    "package main\n" + lines(1998),
		"cmd/big/main_test.go": "package main\n" + lines(5000),
		// A file of 901 lines, one of 900; a file outside internal/ may be longer.
		"internal/a/big.go": "package a\n" + lines(900),
		"internal/a/ok.go":  "package a\n" + lines(899),
		"tools/long.go":     "package tools\n" + lines(2000),
		// Functions of 151 and 150 lines, and a method of 151.
		"internal/b/f.go": "package b\n\n" + body("long()", 151) + body("fits()", 150) + body("(t *T) Method()", 151),
		// Test files and testdata are not measured.
		"internal/b/f_test.go":     "package b\n\n" + body("longTest()", 400),
		"internal/b/testdata/x.go": "package x\n" + lines(1000),
	}
	plant(t, root, files)
	all, err := Sizes(root)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range all {
		got = append(got, o.String())
	}
	want := []string{
		"cmd/big: total has 2000 lines (limit 1999)",
		"internal/a/big.go: file has 901 lines (limit 900)",
		"internal/b/f.go:304: func T.Method has 151 lines (limit 150)",
		"internal/b/f.go:3: func long has 151 lines (limit 150)",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("oversize places (-want +got):\n%s", d)
	}
	// An exception for a place that fits now is stale.
	exceptions := map[string]string{"internal/b/f.go: func long": "", "internal/a/ok.go: file": "", "cmd/small: total": ""}
	if d := cmp.Diff([]string{"cmd/small: total", "internal/a/ok.go: file"}, stale(all, exceptions)); d != "" {
		t.Errorf("stale exceptions (-want +got):\n%s", d)
	}
}
