package table

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestRemoveCollTasks: remove_coll_directory removes dir/collection;
// remove_coll_files removes the [prefix.]collection.timestamp.name files
// of that collection and nothing else.
func TestRemoveCollTasks(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"web.1700000000.links", "taken.web.1700000001.links", "other.1700000000.links",
		"web.notatime.links", "README"} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "web", "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := NewRegistry()
	files, err := r.Task("wamakefileutils.remove_coll_files")
	if err != nil {
		t.Fatal(err)
	}
	if err := files([]string{dir, "web"}); err != nil {
		t.Fatal(err)
	}
	var left []string
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		left = append(left, e.Name())
	}
	if want := []string{"README", "other.1700000000.links", "web", "web.notatime.links"}; !slices.Equal(left, want) {
		t.Errorf("left %q, want %q", left, want)
	}
	coll, err := r.Task("wamakefileutils.remove_coll_directory")
	if err != nil {
		t.Fatal(err)
	}
	if err := coll([]string{dir, "web"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "web")); !os.IsNotExist(err) {
		t.Errorf("the collection's directory is still there (%v)", err)
	}
	if err := coll([]string{dir, "../x"}); err == nil {
		t.Error("a collection name that is not alphanumeric was accepted")
	}
	if err := files([]string{dir}); err == nil {
		t.Error("one parameter was accepted")
	}
}
