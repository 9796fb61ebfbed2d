// Package testenv holds what tests need from the machine they run on: the
// peer test data beside the repository and external programs (warcio,
// etcd, GNU sort, Chromium, ...). Outside CI a missing prerequisite skips
// the test; with CI=true it fails it, so that no suite passes by not
// running. Only tests import this package.
package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// InCI reports whether the tests run under CI (CI=true), where a missing
// prerequisite is a failure.
func InCI() bool { return os.Getenv("CI") == "true" }

// Missing ends the test for a missing prerequisite: a failure under
// CI=true, a skip otherwise.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if InCI() {
		t.Fatalf("%s (CI=true: a missing prerequisite is a failure)", msg)
	}
	t.Skip(msg)
}

// Tool returns the path of the first of names found in PATH, or ends the
// test through Missing; install says how to get it.
func Tool(t testing.TB, install string, names ...string) string {
	t.Helper()
	for _, name := range names {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	Missing(t, "%v not installed (%s)", names, install)
	return ""
}

// ModuleRoot returns the directory holding go.mod, searched upwards from
// the working directory (a test's package directory).
func ModuleRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for d := dir; d != filepath.Dir(d); d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
	}
	t.Fatalf("testenv: no go.mod above %s", dir)
	return ""
}

// SharedTestdata returns the directory sub of the peer test data, which
// lives in ../shared/testdata beside the repository, or in
// $TRAWL_SHARED_TESTDATA; without it the test ends through Missing.
func SharedTestdata(t testing.TB, sub string) string {
	t.Helper()
	root := os.Getenv("TRAWL_SHARED_TESTDATA")
	if root == "" {
		root = filepath.Join(filepath.Dir(ModuleRoot(t)), "shared", "testdata")
	}
	path := filepath.Join(root, sub)
	if _, err := os.Stat(path); err != nil {
		Missing(t, "shared test data not found at %s (it lives beside the repository, or set TRAWL_SHARED_TESTDATA): %v", path, err)
	}
	return path
}
