package urls

import (
	"os"
	"path/filepath"
	"testing"
)

// sharedTestdata returns the directory sub of the peer test data, which
// lives in ../shared/testdata beside the repository (the module root), or
// in $TRAWL_SHARED_TESTDATA. Outside CI a missing directory skips the
// test; with CI=true it fails it, so that a conformance suite never passes
// by not running.
func sharedTestdata(t testing.TB, sub string) string {
	t.Helper()
	root := os.Getenv("TRAWL_SHARED_TESTDATA")
	if root == "" {
		dir, _ := os.Getwd()
		for dir != filepath.Dir(dir) {
			if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
				break
			}
			dir = filepath.Dir(dir)
		}
		root = filepath.Join(filepath.Dir(dir), "shared", "testdata")
	}
	path := filepath.Join(root, sub)
	if _, err := os.Stat(path); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("shared test data missing at %s (CI=true: a conformance suite may not skip): %v", path, err)
		}
		t.Skipf("shared test data not found at %s (it lives beside the repository, or set TRAWL_SHARED_TESTDATA): %v", path, err)
	}
	return path
}
