package index

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cockroachdb/pebble"
)

// Document versions (Op.Version) live in a small Pebble database beside
// the bleve index (DIR/versions), one key per document:
//
//	versionKey(DocID) -> big-endian uint64
//
// They used to be bleve "internal" values set in each batch, but scorch
// writes every internal value into its bolt snapshot on every persist, so
// the cost of a persist grew with the number of documents ever indexed and
// feeding a large crawl became quadratic (bbolt's node.put copying was 45%
// of the CPU of a 90,000-page crawl). Versions are written after the bleve
// batch is persisted and before Apply returns: a crash in between leaves the
// index ahead of the versions, and the feeder's replay applies the same ops
// again, which is harmless. An index written by an older trawl still has
// its versions as internal values: a document without a version here falls
// back to them.
func openVersions(dir string, readOnly bool) (*pebble.DB, error) {
	vdir := filepath.Join(dir, "versions")
	if readOnly {
		if _, err := os.Stat(vdir); errors.Is(err, os.ErrNotExist) {
			return nil, nil // an index of an older trawl: versions are internal values
		}
	}
	db, err := pebble.Open(vdir, &pebble.Options{Logger: quietLogger{}, ReadOnly: readOnly})
	if err != nil {
		return nil, fmt.Errorf("index: versions: %w", err)
	}
	return db, nil
}

// quietLogger drops Pebble's informational messages.
type quietLogger struct{}

func (quietLogger) Infof(string, ...interface{})  {}
func (quietLogger) Errorf(string, ...interface{}) {}
func (quietLogger) Fatalf(format string, args ...interface{}) {
	panic(fmt.Sprintf("index: versions: "+format, args...))
}

type appliedVersion struct {
	id  string
	ver uint64
}

// version returns the last version applied to document id (0: none);
// internal reads bleve's internal values for indexes of older trawls.
func (p *part) version(internal func([]byte) ([]byte, error), id string) (uint64, error) {
	k := versionKey(id)
	if p.vers != nil {
		v, closer, err := p.vers.Get(k)
		switch {
		case err == nil:
			defer closer.Close()
			if len(v) != 8 {
				return 0, fmt.Errorf("index: version of %q: %d bytes", id, len(v))
			}
			return binary.BigEndian.Uint64(v), nil
		case err != pebble.ErrNotFound:
			return 0, err
		}
	}
	raw, err := internal(k)
	if err != nil || len(raw) != 8 {
		return 0, err
	}
	return binary.BigEndian.Uint64(raw), nil
}

// appliedFields is a partial-update record to save (fields.go).
type appliedFields struct {
	id  string
	rec fieldsRec
}

// saveVersions records the versions and partial-update records of a
// persisted batch (fsynced).
func (p *part) saveVersions(vs []appliedVersion, fs []appliedFields) error {
	if p.vers == nil || p.ro || len(vs)+len(fs) == 0 {
		return nil
	}
	b := p.vers.NewBatch()
	var v [8]byte
	for _, a := range vs {
		binary.BigEndian.PutUint64(v[:], a.ver)
		if err := b.Set(versionKey(a.id), v[:], nil); err != nil {
			b.Close()
			return fmt.Errorf("index: versions: %w", err)
		}
	}
	for _, a := range fs {
		if err := b.Set(fieldsKey(a.id), a.rec.encode(), nil); err != nil {
			b.Close()
			return fmt.Errorf("index: versions: %w", err)
		}
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return fmt.Errorf("index: versions: %w", err)
	}
	return nil
}
