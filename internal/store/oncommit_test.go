package store

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestBatchOnCommit: the functions registered with OnCommit run in order
// once the batch is applied (and see what it wrote), never for a batch
// that is discarded or cannot commit.
func TestBatchOnCommit(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  func(s *Store, b *Batch) error
		want []string
	}{
		{"commit", func(_ *Store, b *Batch) error { return b.Commit() }, []string{"first saw true", "second"}},
		{"commit sync", func(_ *Store, b *Batch) error { return b.CommitSync() }, []string{"first saw true", "second"}},
		{"discard", func(_ *Store, b *Batch) error { b.Discard(); return nil }, nil},
		{"closed store", func(s *Store, b *Batch) error { s.Close(); return b.Commit() }, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openMem(t, Options{})
			b := s.NewBatch()
			if err := b.PutURI("c", &URIRecord{URI: "http://a/", Site: "a"}); err != nil {
				t.Fatal(err)
			}
			var got []string
			b.OnCommit(func() {
				_, ok, _ := s.URI("c", "http://a/")
				got = append(got, map[bool]string{true: "first saw true", false: "first saw false"}[ok])
			})
			b.OnCommit(func() { got = append(got, "second") })
			err := tc.end(s, b)
			if tc.name == "closed store" && !errors.Is(err, ErrClosed) {
				t.Errorf("commit on a closed store: %v", err)
			} else if tc.name != "closed store" && err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("functions run (-want +got):\n%s", d)
			}
		})
	}
}
