package store

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/bloom"
	"github.com/cockroachdb/pebble/vfs"

	"github.com/trawl/trawl/internal/pebblefs"
)

// ErrStop, returned by an iteration callback, ends the iteration early; the
// iterating method then returns nil.
var ErrStop = errors.New("store: stop iteration")

// ErrClosed is returned by every method of a closed Store.
var ErrClosed = errors.New("store: closed")

// Default limits.
const (
	DefaultMaxDocSize = 64 << 20
	// DefaultCacheSize keeps the index and filter blocks of the crawl's
	// tables in memory: with Pebble's 8 MiB every seen-set and record
	// lookup of a large crawl read them from the files again.
	DefaultCacheSize = 64 << 20
	// DefaultMemTableSize: queue entries are written and deleted within
	// seconds; a larger memtable lets more of them die before a flush, and
	// means fewer, larger compactions.
	DefaultMemTableSize = 32 << 20
)

// Options configure Open. The zero value is usable.
type Options struct {
	// FS is the file system the database lives on; nil means the operating
	// system's. Tests pass vfs.NewMem() or vfs.NewStrictMem().
	FS vfs.FS
	// Sync makes every commit wait for fsync (survives power loss). Without
	// it a commit returns once its write-ahead log record reached the
	// operating system (internal/pebblefs): it survives a killed process
	// but not a machine crash. See the package comment.
	Sync bool
	// Codec compresses document bodies (default CodecSnappy).
	Codec Codec
	// SetCodec must be true for Codec's zero value (CodecNone) to be used.
	SetCodec bool
	// MaxDocSize refuses to store or load larger bodies (default 64 MiB).
	MaxDocSize int64
	// CacheSize is Pebble's block cache in bytes (default DefaultCacheSize).
	CacheSize int64
	// MemTableSize is Pebble's memtable size in bytes (default
	// DefaultMemTableSize; Pebble starts small and grows to it).
	MemTableSize uint64
	// Logger receives Pebble's messages (default: discarded below Warn).
	Logger *slog.Logger
	// ReadOnly opens an existing store for reading only: nothing in dir
	// is created or changed (the write-ahead log is replayed in memory, no
	// compactions), and a dir without a store is an error. Writes fail.
	// Pebble still takes the directory's lock, so the crawl owning the
	// store must not be running.
	ReadOnly bool
}

// Store is an open crawl store. It is safe for concurrent use; a Batch is not.
type Store struct {
	db *pebble.DB
	wo *pebble.WriteOptions
	// wal is the write-ahead log file system when commits do not fsync
	// (Options.Sync off): SyncWAL and CommitSync fsync through it.
	wal    *pebblefs.FS
	codec  Codec
	maxDoc int64
	closed *atomic.Bool // shared with the staged views (stage.go)
	routes routeCache
	csums  *csumFilter // checksums with an owner (ChecksumOwner's fast "no")
	docs   *docCounts  // stored documents per collection, once asked for (docextra.go)
	owners *docCounts  // owned checksums per collection, once asked for (ChecksumCount)
	dir    string
	// stage, in a staged view (Staged, stage.go), holds the writes its
	// batches committed and the driver has not applied yet; base is the
	// store they go to.
	stage *stage
	base  *Store
}

type pebbleLogger struct{ l *slog.Logger }

func (p pebbleLogger) Infof(format string, args ...any) {
	p.l.Debug(fmt.Sprintf(format, args...), "component", "pebble")
}

func (p pebbleLogger) Fatalf(format string, args ...any) {
	p.l.Error(fmt.Sprintf(format, args...), "component", "pebble")
	os.Exit(1)
}

// Open opens (creating if needed, unless o.ReadOnly) the store in dir.
func Open(dir string, o Options) (*Store, error) {
	fs := o.FS
	if fs == nil {
		fs = vfs.Default
	}
	var wal *pebblefs.FS
	if !o.Sync {
		// Commits return once their log record reached the operating
		// system (internal/pebblefs), not after an fsync.
		wal = pebblefs.ProcessDurable(fs)
		fs = wal
	}
	po := &pebble.Options{FS: fs, Levels: make([]pebble.LevelOptions, 7)}
	for i := range po.Levels {
		// Bloom filters in the tables make point lookups of absent keys
		// (seen-set misses, new sites) cheap.
		po.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
	}
	if o.CacheSize <= 0 {
		o.CacheSize = DefaultCacheSize
	}
	po.Cache = pebble.NewCache(o.CacheSize)
	defer po.Cache.Unref()
	if o.MemTableSize == 0 {
		o.MemTableSize = DefaultMemTableSize
	}
	po.MemTableSize = o.MemTableSize
	po.ReadOnly = o.ReadOnly
	lg := o.Logger
	if lg == nil {
		lg = slog.New(slog.DiscardHandler)
	}
	po.Logger = pebbleLogger{lg}
	db, err := pebble.Open(dir, po)
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", dir, err)
	}
	s := &Store{db: db, wo: pebble.Sync, wal: wal, codec: CodecSnappy, maxDoc: DefaultMaxDocSize, dir: dir, docs: &docCounts{}, owners: &docCounts{}, closed: &atomic.Bool{}}
	if o.Codec != CodecNone || o.SetCodec {
		if o.Codec > CodecFlate {
			db.Close()
			return nil, fmt.Errorf("store: unknown codec %d", o.Codec)
		}
		s.codec = o.Codec
	}
	if o.MaxDocSize > 0 {
		s.maxDoc = o.MaxDocSize
	}
	if s.csums, err = loadCSumFilter(s); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// Close flushes nothing extra (committed batches are already in the WAL) and
// closes the database.
func (s *Store) Close() error {
	if s.base != nil {
		return errors.New("store: a staged view is not closed: close its store")
	}
	if !s.closed.CompareAndSwap(false, true) {
		return ErrClosed
	}
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("store: close: %w", err)
	}
	return nil
}

// Flush writes the memtable to disk tables (tests and shutdown use it).
func (s *Store) Flush() error {
	if s.closed.Load() {
		return ErrClosed
	}
	return s.db.Flush()
}

// SyncWAL waits until every batch committed so far is fsynced. A driver
// that commits without Options.Sync calls it on a timer (group commit) and
// treats what was committed before the call as durable.
func (s *Store) SyncWAL() error {
	if s.closed.Load() {
		return ErrClosed
	}
	if err := s.db.LogData(nil, pebble.Sync); err != nil {
		return fmt.Errorf("store: sync: %w", err)
	}
	return s.fsyncWAL()
}

// fsyncWAL fsyncs the write-ahead log when commits do not (Options.Sync
// off): what was committed survives a power loss too.
func (s *Store) fsyncWAL() error {
	if s.wal == nil {
		return nil
	}
	if err := s.wal.SyncWAL(); err != nil {
		return fmt.Errorf("store: sync: %w", err)
	}
	return nil
}

// Metrics returns Pebble's metrics (for stats and benchmarks).
func (s *Store) Metrics() *pebble.Metrics { return s.db.Metrics() }

// get returns a copy of the value of k.
func (s *Store) get(k []byte) ([]byte, bool, error) {
	if s.closed.Load() {
		return nil, false, ErrClosed
	}
	v, c, err := s.reader().Get(k)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("store: get: %w", err)
	}
	out := append([]byte(nil), v...)
	c.Close()
	return out, true, nil
}

// iterate calls fn for every key with prefix p, in key order. The slices are
// only valid during the call.
func (s *Store) iterate(p []byte, fn func(k, v []byte) error) error {
	if s.closed.Load() {
		return ErrClosed
	}
	it, err := s.reader().NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: prefixEnd(p)})
	if err != nil {
		return fmt.Errorf("store: iterator: %w", err)
	}
	for it.First(); it.Valid(); it.Next() {
		if err := fn(it.Key(), it.Value()); err != nil {
			it.Close()
			if errors.Is(err, ErrStop) {
				return nil
			}
			return err
		}
	}
	if err := it.Close(); err != nil {
		return fmt.Errorf("store: iterate: %w", err)
	}
	return nil
}

// count returns the number of keys with prefix p.
func (s *Store) count(p []byte) (int, error) {
	n := 0
	err := s.iterate(p, func(_, _ []byte) error { n++; return nil })
	return n, err
}

// Batch collects writes that commit atomically. A crawl step puts the URI
// record, the document, the new queue entries and the seen-set entries in
// one batch.
type Batch struct {
	s *Store
	b *pebble.Batch
	// route changes, applied to the store's route cache on commit
	routes    []routeChange
	routesAll bool
	// document and owned checksum count changes, applied on commit
	// (docextra.go)
	docs, owners batchDocs
	// after run once the batch is applied (OnCommit)
	after []func()
	// sync: a staged batch committed with CommitSync (stage.go)
	sync bool
}

// NewBatch starts a batch.
func (s *Store) NewBatch() *Batch { return &Batch{s: s, b: s.db.NewBatch()} }

// Commit applies the batch atomically with the store's durability (Options.Sync).
// The batch cannot be used afterwards.
func (b *Batch) Commit() error { return b.commit(b.s.wo, false) }

// CommitSync applies the batch and waits for fsync whatever Options.Sync says.
func (b *Batch) CommitSync() error {
	if err := b.commit(pebble.Sync, true); err != nil {
		return err
	}
	return b.s.fsyncWAL()
}

// commit applies the batch with wo; on a staged view it stages it, asking
// for an fsync when fsync is set (CommitSync). The store's own write
// options are pebble.Sync (a write(2) on the process-durable file system),
// so wo cannot tell Commit from CommitSync.
func (b *Batch) commit(wo *pebble.WriteOptions, fsync bool) error {
	if b.s.stage != nil {
		return b.staged(fsync)
	}
	if b.s.closed.Load() {
		b.b.Close()
		return ErrClosed
	}
	err := b.b.Commit(wo)
	b.b.Close()
	if err != nil {
		return fmt.Errorf("store: commit: %w", err)
	}
	if len(b.routes) > 0 || b.routesAll {
		b.s.routes.apply(b.routes, b.routesAll)
	}
	b.s.docs.apply(&b.docs)
	b.s.owners.apply(&b.owners)
	for _, f := range b.after {
		f()
	}
	return nil
}

// OnCommit registers f to run once the batch is applied, after the
// functions registered before it; a batch that is discarded or fails to
// commit runs none. The functions run on the committing goroutine, so they
// see what the batch wrote: work outside the store that must never run
// ahead of it (files named after the batch's records) goes here. On a
// staged view they run when the batch is staged (stage.go).
func (b *Batch) OnCommit(f func()) { b.after = append(b.after, f) }

// Discard drops the batch without applying it.
func (b *Batch) Discard() { b.b.Close() }

// Empty reports whether nothing was written to the batch.
func (b *Batch) Empty() bool { return b.b.Empty() }

// Len is the batch's size in bytes.
func (b *Batch) Len() int { return b.b.Len() }

// PutURI writes the record of r.URI and indexes it under r.Site. The site of
// a URI must not change (it is derived from the URI).
func (b *Batch) PutURI(collection string, r *URIRecord) error {
	if err := b.b.Set(key(SpaceURI, r.URI, collection), MarshalRecord(r), nil); err != nil {
		return err
	}
	return b.b.Set(key(SpaceSite, r.URI, collection, r.Site), nil, nil)
}

// DeleteURI removes the record, its site index entry and its document
// (with its response header).
func (b *Batch) DeleteURI(collection, site, uri string) error {
	if err := b.trackDoc(collection, uri, false); err != nil {
		return err
	}
	for _, k := range [][]byte{key(SpaceURI, uri, collection), key(SpaceSite, uri, collection, site), key(SpaceDoc, uri, collection), key(SpaceHeader, uri, collection)} {
		if err := b.b.Delete(k, nil); err != nil {
			return err
		}
	}
	return nil
}

// PutDocument stores body compressed with the store's codec.
func (b *Batch) PutDocument(collection, uri string, body []byte) error {
	return b.PutDocumentCodec(collection, uri, body, b.s.codec)
}

// PutDocumentCodec stores body compressed with codec c (the codec is
// recorded with the body, so documents of one store may differ).
func (b *Batch) PutDocumentCodec(collection, uri string, body []byte, c Codec) error {
	if int64(len(body)) > b.s.maxDoc {
		return fmt.Errorf("store: document of %d bytes exceeds the %d byte limit", len(body), b.s.maxDoc)
	}
	v, err := encodeDoc(c, body)
	if err != nil {
		return err
	}
	if err := b.trackDoc(collection, uri, true); err != nil {
		return err
	}
	return b.b.Set(key(SpaceDoc, uri, collection), v, nil)
}

// DeleteDocument removes a stored body and its response header.
func (b *Batch) DeleteDocument(collection, uri string) error {
	if err := b.trackDoc(collection, uri, false); err != nil {
		return err
	}
	if err := b.b.Delete(key(SpaceHeader, uri, collection), nil); err != nil {
		return err
	}
	return b.b.Delete(key(SpaceDoc, uri, collection), nil)
}

// URI returns the record of uri.
func (s *Store) URI(collection, uri string) (*URIRecord, bool, error) {
	v, found, err := s.get(key(SpaceURI, uri, collection))
	if err != nil || !found {
		return nil, false, err
	}
	r, err := UnmarshalRecord(uri, v)
	if err != nil {
		return nil, false, fmt.Errorf("store: record of %s: %w", uri, err)
	}
	return r, true, nil
}

// Document returns the stored body of uri, decompressed.
func (s *Store) Document(collection, uri string) ([]byte, bool, error) {
	v, found, err := s.get(key(SpaceDoc, uri, collection))
	if err != nil || !found {
		return nil, false, err
	}
	body, err := decodeDoc(v, s.maxDoc)
	if err != nil {
		return nil, false, fmt.Errorf("store: document of %s: %w", uri, err)
	}
	return body, true, nil
}

// URIs calls fn for every record of collection whose URI starts with
// uriPrefix ("" for all), in URI order.
func (s *Store) URIs(collection, uriPrefix string, fn func(*URIRecord) error) error {
	p := key(SpaceURI, "", collection)
	return s.iterate(key(SpaceURI, uriPrefix, collection), func(k, v []byte) error {
		uri := string(k[len(p):])
		r, err := UnmarshalRecord(uri, v)
		if err != nil {
			return fmt.Errorf("store: record of %s: %w", uri, err)
		}
		return fn(r)
	})
}

// SiteURIs calls fn for every URI of site in collection, in URI order.
func (s *Store) SiteURIs(collection, site string, fn func(uri string) error) error {
	p := key(SpaceSite, "", collection, site)
	return s.iterate(p, func(k, _ []byte) error { return fn(string(k[len(p):])) })
}

// Sites calls fn for every site of collection with the number of its URIs.
// It reads every key of the site index.
func (s *Store) Sites(collection string, fn func(site string, uris int) error) error {
	p := key(SpaceSite, "", collection)
	cur, n := "", 0
	err := s.iterate(p, func(k, _ []byte) error {
		site, _, err := ReadLP(k[len(p):])
		if err != nil {
			return err
		}
		if site != cur && n > 0 {
			if err := fn(cur, n); err != nil {
				return err
			}
			n = 0
		}
		cur = site
		n++
		return nil
	})
	if err != nil {
		return err
	}
	if n > 0 {
		if err := fn(cur, n); err != nil && !errors.Is(err, ErrStop) {
			return err
		}
	}
	return nil
}

// CountURIs returns the number of URI records in collection.
func (s *Store) CountURIs(collection string) (int, error) {
	return s.count(key(SpaceURI, "", collection))
}

// CountSite returns the number of URIs of site in collection.
func (s *Store) CountSite(collection, site string) (int, error) {
	return s.count(key(SpaceSite, "", collection, site))
}

// CountDocuments returns the number of stored documents in collection.
func (s *Store) CountDocuments(collection string) (int, error) {
	return s.count(key(SpaceDoc, "", collection))
}

// --- raw key spaces (the frontier's) ---

func rawKey(sp Space, k []byte) []byte {
	out := make([]byte, 1+len(k))
	out[0] = byte(sp)
	copy(out[1:], k)
	return out
}

// SetRaw writes k (inside space sp) = v.
func (b *Batch) SetRaw(sp Space, k, v []byte) error { return b.b.Set(rawKey(sp, k), v, nil) }

// DeleteRaw deletes k inside space sp.
func (b *Batch) DeleteRaw(sp Space, k []byte) error { return b.b.Delete(rawKey(sp, k), nil) }

// DeletePrefix deletes every key of space sp starting with prefix.
func (b *Batch) DeletePrefix(sp Space, prefix []byte) error {
	start := rawKey(sp, prefix)
	end := prefixEnd(start)
	if end == nil {
		return fmt.Errorf("store: cannot delete an unbounded prefix")
	}
	if sp == SpaceRoute {
		b.routesAll = true
	}
	if sp == SpaceDoc {
		b.docs.reset = true // counts are taken again when next asked for
	}
	if sp == SpaceChecksum {
		b.owners.reset = true
	}
	return b.b.DeleteRange(start, end, nil)
}

// GetRaw returns a copy of the value of k inside space sp.
func (s *Store) GetRaw(sp Space, k []byte) ([]byte, bool, error) { return s.get(rawKey(sp, k)) }

// IterRaw calls fn for every key of space sp with the given prefix (the key
// passed to fn has the space byte removed).
func (s *Store) IterRaw(sp Space, prefix []byte, fn func(k, v []byte) error) error {
	return s.iterate(rawKey(sp, prefix), func(k, v []byte) error { return fn(k[1:], v) })
}

// RawIter is a positioned iterator over one prefix of a raw key space. Keys
// exclude the space byte; they and the values are valid until the next move.
type RawIter struct {
	it  *pebble.Iterator
	buf []byte // the last sought key, reused
}

// NewRawIter opens an iterator over the keys of sp starting with prefix.
// Close it when done.
func (s *Store) NewRawIter(sp Space, prefix []byte) (*RawIter, error) {
	if s.closed.Load() {
		return nil, ErrClosed
	}
	lo := rawKey(sp, prefix)
	it, err := s.reader().NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: prefixEnd(lo)})
	if err != nil {
		return nil, fmt.Errorf("store: iterator: %w", err)
	}
	return &RawIter{it: it}, nil
}

// First moves to the first key.
func (r *RawIter) First() bool { return r.it.First() }

// Last moves to the last key.
func (r *RawIter) Last() bool { return r.it.Last() }

// SeekGE moves to the first key >= k (k excludes the space byte).
func (r *RawIter) SeekGE(sp Space, k []byte) bool {
	r.buf = append(append(r.buf[:0], byte(sp)), k...)
	return r.it.SeekGE(r.buf)
}

// Next moves to the next key.
func (r *RawIter) Next() bool { return r.it.Next() }

// Valid reports whether the iterator is on a key.
func (r *RawIter) Valid() bool { return r.it.Valid() }

// Key is the current key without the space byte.
func (r *RawIter) Key() []byte { return r.it.Key()[1:] }

// Value is the current value.
func (r *RawIter) Value() []byte { return r.it.Value() }

// Close releases the iterator.
func (r *RawIter) Close() error { return r.it.Close() }

// PutMeta stores a named metadata value (schema versions, checkpoints).
func (b *Batch) PutMeta(name string, v []byte) error { return b.b.Set(key(SpaceMeta, name), v, nil) }

// Meta returns a named metadata value.
func (s *Store) Meta(name string) ([]byte, bool, error) { return s.get(key(SpaceMeta, name)) }
