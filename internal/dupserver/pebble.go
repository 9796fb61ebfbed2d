package dupserver

import (
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/vfs"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/marshal"
	"github.com/trawl/trawl/internal/pebblefs"
)

// Key kinds of the Pebble layout (see the package comment).
const (
	kindMapping   = 'm'
	kindDirty     = 'd'
	kindColl      = 'c'
	kindTombstone = 't'
	kindFence     = 'e'
)

// PebbleOptions configure OpenPebble. The zero value is usable.
type PebbleOptions struct {
	// FS is the file system (nil: the operating system's).
	FS vfs.FS
	// Sync makes every write wait for fsync. Without it a write returns
	// once it reached the operating system (internal/pebblefs): it
	// survives a killed process, not a machine crash
	// (docs/decisions/dupserver.md).
	Sync bool
	// Logger receives Pebble's messages (nil: discarded).
	Logger *slog.Logger
}

// PebbleStore is a Store in a Pebble database. It is safe for concurrent use.
type PebbleStore struct {
	db     *pebble.DB
	wo     *pebble.WriteOptions
	closed atomic.Bool
}

type pebbleLogger struct{ l *slog.Logger }

func (p pebbleLogger) Infof(format string, args ...any) {
	p.l.Debug(fmt.Sprintf(format, args...), "component", "pebble")
}

// Fatalf is called by Pebble on an unrecoverable error (a corrupt database
// or a failed invariant); as Pebble's own default logger does, it ends the
// process.
func (p pebbleLogger) Fatalf(format string, args ...any) {
	p.l.Error(fmt.Sprintf(format, args...), "component", "pebble")
	os.Exit(1)
}

// OpenPebble opens (creating if needed) the checksum store in dir.
func OpenPebble(dir string, o PebbleOptions) (*PebbleStore, error) {
	lg := o.Logger
	if lg == nil {
		lg = slog.New(slog.DiscardHandler)
	}
	fs := o.FS
	if fs == nil {
		fs = vfs.Default
	}
	if !o.Sync {
		// A commit returns once its log record reached the operating
		// system (internal/pebblefs): an answer sent after it is never
		// about a write a killed process loses.
		fs = pebblefs.ProcessDurable(fs)
	}
	db, err := pebble.Open(dir, &pebble.Options{FS: fs, Logger: pebbleLogger{lg}})
	if err != nil {
		return nil, errorf("open %s: %w", dir, err)
	}
	return &PebbleStore{db: db, wo: pebble.Sync}, nil
}

// Close closes the database.
func (s *PebbleStore) Close() error {
	if !s.closed.CompareAndSwap(false, true) {
		return ErrStoreClosed
	}
	if err := s.db.Close(); err != nil {
		return errorf("close: %w", err)
	}
	return nil
}

func (s *PebbleStore) check() error {
	if s.closed.Load() {
		return ErrStoreClosed
	}
	return nil
}

func keyBytes(kind byte, k Key) []byte {
	b := make([]byte, 0, 2+len(k.Collection)+len(k.Checksum))
	b = append(b, kind)
	b = append(b, k.Collection...)
	b = append(b, 0)
	return append(b, k.Checksum[:]...)
}

func parseKey(b []byte) (Key, bool) {
	var k Key
	if len(b) < 1+1+len(k.Checksum) || b[len(b)-len(k.Checksum)-1] != 0 {
		return k, false
	}
	k.Collection = string(b[1 : len(b)-len(k.Checksum)-1])
	copy(k.Checksum[:], b[len(b)-len(k.Checksum):])
	return k, true
}

// collRange returns the key range of one collection's keys of a kind.
func collRange(kind byte, name string) (lo, hi []byte) {
	lo = append(append([]byte{kind}, name...), 0)
	hi = append(append([]byte{kind}, name...), 1)
	return lo, hi
}

func encodeOwner(o Owner) []byte {
	b := binary.AppendUvarint(make([]byte, 0, 2+len(o.URI)+len(o.NodeID)), uint64(len(o.URI)))
	b = append(b, o.URI...)
	return append(b, o.NodeID...)
}

func decodeOwner(b []byte) (Owner, error) {
	n, w := binary.Uvarint(b)
	if w <= 0 || n > uint64(len(b)-w) {
		return Owner{}, errors.New("dupserver: corrupt owner record")
	}
	return Owner{URI: string(b[w : w+int(n)]), NodeID: string(b[w+int(n):])}, nil
}

func (s *PebbleStore) Get(k Key) (Owner, bool, error) {
	if err := s.check(); err != nil {
		return Owner{}, false, err
	}
	v, closer, err := s.db.Get(keyBytes(kindMapping, k))
	if errors.Is(err, pebble.ErrNotFound) {
		return Owner{}, false, nil
	}
	if err != nil {
		return Owner{}, false, errorf("get %s: %w", k, err)
	}
	defer closer.Close()
	o, err := decodeOwner(v)
	if err != nil {
		return Owner{}, false, fmt.Errorf("%w (key %s)", err, k)
	}
	return o, true, nil
}

func (s *PebbleStore) Put(k Key, o Owner, dirty bool) error {
	if err := s.check(); err != nil {
		return err
	}
	b := s.db.NewBatch()
	defer b.Close()
	_ = b.Set(keyBytes(kindMapping, k), encodeOwner(o), nil)
	if dirty {
		_ = b.Set(keyBytes(kindDirty, k), nil, nil)
	}
	if err := b.Commit(s.wo); err != nil {
		return errorf("put %s: %w", k, err)
	}
	return nil
}

func (s *PebbleStore) Delete(k Key, dirty bool) error {
	if err := s.check(); err != nil {
		return err
	}
	b := s.db.NewBatch()
	defer b.Close()
	_ = b.Delete(keyBytes(kindMapping, k), nil)
	if dirty {
		_ = b.Set(keyBytes(kindDirty, k), nil, nil)
	}
	if err := b.Commit(s.wo); err != nil {
		return errorf("delete %s: %w", k, err)
	}
	return nil
}

func (s *PebbleStore) ClearDirty(k Key) error {
	if err := s.check(); err != nil {
		return err
	}
	if err := s.db.Delete(keyBytes(kindDirty, k), s.wo); err != nil {
		return errorf("clear dirty %s: %w", k, err)
	}
	return nil
}

func (s *PebbleStore) DirtyKeys(after Key, limit int) ([]Key, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte{kindDirty}, UpperBound: []byte{kindDirty + 1}})
	if err != nil {
		return nil, errorf("dirty keys: %w", err)
	}
	defer it.Close()
	start := keyBytes(kindDirty, after)
	var out []Key
	for ok := it.SeekGE(start); ok && len(out) < limit; ok = it.Next() {
		k, valid := parseKey(it.Key())
		if !valid || k == after {
			continue
		}
		out = append(out, k)
	}
	if err := it.Error(); err != nil {
		return nil, errorf("dirty keys: %w", err)
	}
	return out, nil
}

func (s *PebbleStore) DeleteCollection(name string) error {
	if err := s.check(); err != nil {
		return err
	}
	b := s.db.NewBatch()
	defer b.Close()
	for _, kind := range []byte{kindMapping, kindDirty} {
		lo, hi := collRange(kind, name)
		_ = b.DeleteRange(lo, hi, nil)
	}
	if err := b.Commit(s.wo); err != nil {
		return errorf("delete collection %q: %w", name, err)
	}
	return nil
}

func (s *PebbleStore) Mappings(collection string, fn func(Key, Owner) error) error {
	if err := s.check(); err != nil {
		return err
	}
	lo, hi := []byte{kindMapping}, []byte{kindMapping + 1}
	if collection != "" {
		lo, hi = collRange(kindMapping, collection)
	}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return errorf("mappings: %w", err)
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		k, valid := parseKey(it.Key())
		if !valid {
			return errorf("corrupt mapping key %q", it.Key())
		}
		o, err := decodeOwner(it.Value())
		if err != nil {
			return err
		}
		if err := fn(k, o); err != nil {
			return err
		}
	}
	if err := it.Error(); err != nil {
		return errorf("mappings: %w", err)
	}
	return nil
}

func collKey(kind byte, name string) []byte { return append([]byte{kind}, name...) }

func (s *PebbleStore) PutCollection(r CollectionRecord) error {
	if err := s.check(); err != nil {
		return err
	}
	c := r.Config
	c.Name = r.Name
	cfg := cmt.CrawlConfig{Collections: []cmt.Collection{c}}
	v, err := cfg.Value()
	if err != nil {
		return errorf("collection %q: %w", r.Name, err)
	}
	enc, err := marshal.Encode(v)
	if err != nil {
		return errorf("collection %q: %w", r.Name, err)
	}
	flags := byte(0)
	if r.Removing {
		flags = 1
	}
	if err := s.db.Set(collKey(kindColl, r.Name), append([]byte{flags}, enc...), s.wo); err != nil {
		return errorf("collection %q: %w", r.Name, err)
	}
	return nil
}

func (s *PebbleStore) DeleteCollectionRecord(name string) error {
	if err := s.check(); err != nil {
		return err
	}
	if err := s.db.Delete(collKey(kindColl, name), s.wo); err != nil {
		return errorf("collection %q: %w", name, err)
	}
	return nil
}

func (s *PebbleStore) Collections() ([]CollectionRecord, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte{kindColl}, UpperBound: []byte{kindColl + 1}})
	if err != nil {
		return nil, errorf("collections: %w", err)
	}
	defer it.Close()
	var out []CollectionRecord
	for ok := it.First(); ok; ok = it.Next() {
		name := string(it.Key()[1:])
		val := it.Value()
		if len(val) < 1 {
			return nil, errorf("corrupt collection record %q", name)
		}
		v, err := marshal.Decode(val[1:])
		if err != nil {
			return nil, errorf("collection record %q: %w", name, err)
		}
		cfg, err := cmt.CrawlConfigFromValue(v)
		if err != nil {
			return nil, errorf("collection record %q: %w", name, err)
		}
		r := CollectionRecord{Name: name, Removing: val[0]&1 != 0}
		if c, ok := cfg.Collection(name); ok {
			r.Config = *c
		}
		out = append(out, r)
	}
	if err := it.Error(); err != nil {
		return nil, errorf("collections: %w", err)
	}
	return out, nil
}

func (s *PebbleStore) PutTombstone(name string) error {
	if err := s.check(); err != nil {
		return err
	}
	if err := s.db.Set(collKey(kindTombstone, name), nil, s.wo); err != nil {
		return errorf("tombstone %q: %w", name, err)
	}
	return nil
}

func (s *PebbleStore) DeleteTombstone(name string) error {
	if err := s.check(); err != nil {
		return err
	}
	if err := s.db.Delete(collKey(kindTombstone, name), s.wo); err != nil {
		return errorf("tombstone %q: %w", name, err)
	}
	return nil
}

func (s *PebbleStore) Tombstones() ([]string, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte{kindTombstone}, UpperBound: []byte{kindTombstone + 1}})
	if err != nil {
		return nil, errorf("tombstones: %w", err)
	}
	defer it.Close()
	var out []string
	for ok := it.First(); ok; ok = it.Next() {
		out = append(out, string(it.Key()[1:]))
	}
	if err := it.Error(); err != nil {
		return nil, errorf("tombstones: %w", err)
	}
	return out, nil
}

// Fence reads the fencing record: key 'e', value uvarint(epoch) flags(1)
// (bit 0 PromotablePeer, bit 1 Deposed).
func (s *PebbleStore) Fence() (Fence, error) {
	if err := s.check(); err != nil {
		return Fence{}, err
	}
	v, closer, err := s.db.Get([]byte{kindFence})
	if errors.Is(err, pebble.ErrNotFound) {
		return Fence{}, nil
	}
	if err != nil {
		return Fence{}, errorf("fence: %w", err)
	}
	defer closer.Close()
	e, n := binary.Uvarint(v)
	if n <= 0 || len(v) != n+1 {
		return Fence{}, errorf("fence: malformed record")
	}
	return Fence{Epoch: e, PromotablePeer: v[n]&1 != 0, Deposed: v[n]&2 != 0}, nil
}

// SetFence writes the fencing record with fsync: an epoch is never
// reused after a machine crash.
func (s *PebbleStore) SetFence(f Fence) error {
	if err := s.check(); err != nil {
		return err
	}
	v := binary.AppendUvarint(nil, f.Epoch)
	var flags byte
	if f.PromotablePeer {
		flags |= 1
	}
	if f.Deposed {
		flags |= 2
	}
	if err := s.db.Set([]byte{kindFence}, append(v, flags), pebble.Sync); err != nil {
		return errorf("fence: %w", err)
	}
	return nil
}
