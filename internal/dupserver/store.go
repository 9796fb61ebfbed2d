package dupserver

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/trawl/trawl/internal/cmt"
)

// Key names one checksum of one crawl collection.
type Key struct {
	Collection string
	Checksum   cmt.Checksum
}

func (k Key) String() string { return k.Collection + "/" + k.Checksum.String() }

// compare orders keys as the on-disk encoding does: collection bytes, then
// the checksum.
func (k Key) compare(o Key) int {
	if c := strings.Compare(k.Collection, o.Collection); c != 0 {
		// A prefix sorts first in both orders: "a"+0x00 < "ab"+0x00
		// because 0x00 is below every byte of a valid name.
		return c
	}
	return bytes.Compare(k.Checksum[:], o.Checksum[:])
}

// Owner is who owns a checksum: the URI of the document that registered it
// first and the node scheduler that sent it (3.3.1).
type Owner struct {
	URI    string
	NodeID string
}

// CollectionRecord is a crawl collection known to a duplicate server or
// replica: its configuration as the last PPDUP_SET_CONFIG gave it (the ppdup
// section) and whether its removal is in progress (between
// PPDUP_CONF_REMOVE and PPDUP_CONF_REMOVE2).
type CollectionRecord struct {
	Name     string
	Config   cmt.Collection
	Removing bool
}

// Store is the checksum store of a duplicate server or replica. The machines
// call it synchronously from their single goroutine; implementations need not
// be safe for concurrent use unless they say so.
type Store interface {
	// Get returns the owner of k.
	Get(k Key) (Owner, bool, error)
	// Put sets the owner of k; with dirty it also marks k as not yet
	// acknowledged by the replica, in the same atomic write.
	Put(k Key, o Owner, dirty bool) error
	// Delete removes k's mapping (absent is not an error); with dirty it
	// also marks k, atomically.
	Delete(k Key, dirty bool) error
	// ClearDirty removes the dirty mark of k.
	ClearDirty(k Key) error
	// DirtyKeys returns up to limit dirty keys greater than after, in order.
	// The zero Key is below every valid key.
	DirtyKeys(after Key, limit int) ([]Key, error)
	// DeleteCollection removes every mapping and dirty mark of a collection.
	DeleteCollection(name string) error
	// Mappings calls fn for every mapping of a collection ("" for all of
	// them), in key order, until fn returns an error (returned as is).
	Mappings(collection string, fn func(Key, Owner) error) error

	// PutCollection stores a collection record.
	PutCollection(r CollectionRecord) error
	// DeleteCollectionRecord removes a collection record.
	DeleteCollectionRecord(name string) error
	// Collections returns every collection record, sorted by name.
	Collections() ([]CollectionRecord, error)

	// PutTombstone records that the replica has not yet confirmed the
	// removal of a collection; DeleteTombstone forgets it; Tombstones
	// lists them sorted.
	PutTombstone(name string) error
	DeleteTombstone(name string) error
	Tombstones() ([]string, error)

	// Fence returns the fencing record (the zero Fence if none was
	// written); SetFence replaces it, durably before it returns (package
	// comment, "Fencing").
	Fence() (Fence, error)
	SetFence(f Fence) error
}

// Fence is the fencing record of a duplicate server or replica store
// (package comment, "Fencing").
type Fence struct {
	// Epoch is the term of the primary this store belongs to: 0 outside a
	// failover pair, 1 for the first primary of a pair, one more at every
	// promotion.
	Epoch uint64
	// PromotablePeer (a duplicate server's store): its replica can be
	// promoted, so the duplicate server never answers a change its
	// replica has not acknowledged.
	PromotablePeer bool
	// Deposed (a duplicate server's store): the replica was promoted at a
	// higher epoch; this server accepts nothing until it is restarted as
	// a replica.
	Deposed bool
}

// ErrStoreClosed is returned by a closed store.
var ErrStoreClosed = errors.New("dupserver: store closed")

// validCollection reports why a collection name cannot be stored, or nil.
func validCollection(name string) error {
	switch {
	case name == "":
		return errors.New("missing collection name (PKT_DSPECNAME)")
	case strings.IndexByte(name, 0) >= 0:
		return errors.New("collection name contains a NUL byte")
	}
	return nil
}

// MemStore is an in-memory Store, safe for concurrent use (tests read it
// while a server runs). Its contents do not survive the process.
type MemStore struct {
	mu         sync.Mutex
	mappings   map[Key]Owner
	dirty      map[Key]struct{}
	colls      map[string]CollectionRecord
	tombstones map[string]struct{}
	fence      Fence
	// FailWrites, when set, makes every write fail with it (tests of the
	// error paths).
	FailWrites error
}

// NewMemStore returns an empty MemStore.
func NewMemStore() *MemStore {
	return &MemStore{
		mappings:   map[Key]Owner{},
		dirty:      map[Key]struct{}{},
		colls:      map[string]CollectionRecord{},
		tombstones: map[string]struct{}{},
	}
}

func (s *MemStore) Get(k Key) (Owner, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.mappings[k]
	return o, ok, nil
}

func (s *MemStore) Put(k Key, o Owner, dirty bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.FailWrites != nil {
		return s.FailWrites
	}
	s.mappings[k] = o
	if dirty {
		s.dirty[k] = struct{}{}
	}
	return nil
}

func (s *MemStore) Delete(k Key, dirty bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.FailWrites != nil {
		return s.FailWrites
	}
	delete(s.mappings, k)
	if dirty {
		s.dirty[k] = struct{}{}
	}
	return nil
}

func (s *MemStore) ClearDirty(k Key) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.dirty, k)
	return nil
}

func (s *MemStore) DirtyKeys(after Key, limit int) ([]Key, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var all []Key
	for k := range s.dirty {
		if k.compare(after) > 0 {
			all = append(all, k)
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].compare(all[j]) < 0 })
	if len(all) > limit {
		all = all[:limit]
	}
	return all, nil
}

func (s *MemStore) DeleteCollection(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.FailWrites != nil {
		return s.FailWrites
	}
	for k := range s.mappings {
		if k.Collection == name {
			delete(s.mappings, k)
		}
	}
	for k := range s.dirty {
		if k.Collection == name {
			delete(s.dirty, k)
		}
	}
	return nil
}

func (s *MemStore) Mappings(collection string, fn func(Key, Owner) error) error {
	s.mu.Lock()
	keys := make([]Key, 0, len(s.mappings))
	for k := range s.mappings {
		if collection == "" || k.Collection == collection {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].compare(keys[j]) < 0 })
	owners := make([]Owner, len(keys))
	for i, k := range keys {
		owners[i] = s.mappings[k]
	}
	s.mu.Unlock()
	for i, k := range keys {
		if err := fn(k, owners[i]); err != nil {
			return err
		}
	}
	return nil
}

func (s *MemStore) PutCollection(r CollectionRecord) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.FailWrites != nil {
		return s.FailWrites
	}
	s.colls[r.Name] = r
	return nil
}

func (s *MemStore) DeleteCollectionRecord(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.colls, name)
	return nil
}

func (s *MemStore) Collections() ([]CollectionRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]CollectionRecord, 0, len(s.colls))
	for _, r := range s.colls {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (s *MemStore) PutTombstone(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tombstones[name] = struct{}{}
	return nil
}

func (s *MemStore) DeleteTombstone(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.tombstones, name)
	return nil
}

func (s *MemStore) Tombstones() ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.tombstones))
	for n := range s.tombstones {
		out = append(out, n)
	}
	sort.Strings(out)
	return out, nil
}

func (s *MemStore) Fence() (Fence, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fence, nil
}

func (s *MemStore) SetFence(f Fence) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.FailWrites != nil {
		return s.FailWrites
	}
	s.fence = f
	return nil
}

// Dirty returns the number of dirty keys (tests).
func (s *MemStore) Dirty() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.dirty)
}

// errorf builds a package error.
func errorf(format string, args ...any) error {
	return fmt.Errorf("dupserver: "+format, args...)
}
