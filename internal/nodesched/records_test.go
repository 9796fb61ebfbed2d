package nodesched

import (
	"testing"

	"github.com/trawl/trawl/internal/store"
)

// persist applies m's records as its driver does: the staged store writes
// are committed to st (no feeding chain), the uri_dir work runs at once.
func persist(t testing.TB, m *Machine, st *store.Store) {
	t.Helper()
	for _, r := range m.Records() {
		switch x := r.(type) {
		case storeWrites:
			if err := commitWrites(st, nil, x); err != nil {
				t.Fatal(err)
			}
		case uriDirWork:
			x.f()
		}
	}
}
