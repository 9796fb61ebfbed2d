package multinode

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/vfs"
)

// RouteStore is the routing database of the multinode scheduler on disk
// (MS-FSCMT 3.2.1 "Routing database"), a Pebble store with two kinds of
// record per collection:
//
//	"a" collection 0x00 attribute  ->  node id      a routing decision
//	"s" collection 0x00 site       ->  attribute    a routed crawl site
//
// Collection names come from XML and cannot hold a NUL byte. Every write
// is synced before it returns: a routing decision is announced to the node
// schedulers only after it is durable.
type RouteStore struct {
	db *pebble.DB
}

// OpenRouteStore opens (or creates) the routing database in dir. fs is the
// file system (nil: the operating system's); log receives Pebble's messages
// (nil discards them).
func OpenRouteStore(dir string, fs vfs.FS, log *slog.Logger) (*RouteStore, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	opts := &pebble.Options{FS: fs, Logger: pebbleLogger{log}}
	if fs == nil {
		opts.FS = vfs.Default
	}
	db, err := pebble.Open(dir, opts)
	if err != nil {
		return nil, fmt.Errorf("multinode: open routing database %s: %w", dir, err)
	}
	return &RouteStore{db: db}, nil
}

// pebbleLogger passes Pebble's messages to slog: information at debug
// level, errors as errors. Pebble calls Fatalf on an invariant violation
// and expects it not to return.
type pebbleLogger struct{ log *slog.Logger }

func (l pebbleLogger) Infof(format string, args ...interface{}) {
	l.log.Debug("multinode: pebble: " + fmt.Sprintf(format, args...))
}
func (l pebbleLogger) Errorf(format string, args ...interface{}) {
	l.log.Error("multinode: pebble: " + fmt.Sprintf(format, args...))
}
func (l pebbleLogger) Fatalf(format string, args ...interface{}) {
	msg := "multinode: pebble: " + fmt.Sprintf(format, args...)
	l.log.Error(msg)
	panic(msg)
}

// Close closes the store.
func (s *RouteStore) Close() error { return s.db.Close() }

func attrKey(coll, attr string) []byte { return []byte("a" + coll + "\x00" + attr) }
func siteKey(coll, site string) []byte { return []byte("s" + coll + "\x00" + site) }

// Apply writes the routing actions among acts (PersistRoute, DropRoutes)
// in one synced batch. Other actions are ignored.
func (s *RouteStore) Apply(acts []Action) error {
	b := s.db.NewBatch()
	defer b.Close()
	n := 0
	for _, a := range acts {
		switch x := a.(type) {
		case PersistRoute:
			if strings.IndexByte(x.Collection, 0) >= 0 {
				return errors.New("multinode: collection name with a NUL byte")
			}
			if x.Attr != "" && x.NodeID != "" {
				if err := b.Set(attrKey(x.Collection, x.Attr), []byte(x.NodeID), nil); err != nil {
					return err
				}
				n++
			}
			if x.Site != "" && x.Attr != "" {
				if err := b.Set(siteKey(x.Collection, x.Site), []byte(x.Attr), nil); err != nil {
					return err
				}
				n++
			}
		case DropRoutes:
			for _, k := range []string{"a", "s"} {
				lo := []byte(k + x.Collection + "\x00")
				hi := []byte(k + x.Collection + "\x01")
				if err := b.DeleteRange(lo, hi, nil); err != nil {
					return err
				}
				n++
			}
		}
	}
	if n == 0 {
		return nil
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return fmt.Errorf("multinode: write routing database: %w", err)
	}
	return nil
}

// StoredRoute is one record of the routing database.
type StoredRoute struct {
	Collection string
	Attr       string
	NodeID     string // set for a routing decision
	Site       string // set for a routed site (NodeID empty)
}

// Load calls fn for every record, decisions before sites.
func (s *RouteStore) Load(fn func(StoredRoute)) error {
	it, err := s.db.NewIter(nil)
	if err != nil {
		return fmt.Errorf("multinode: read routing database: %w", err)
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		k := string(it.Key())
		if len(k) < 2 {
			continue
		}
		i := strings.IndexByte(k, 0)
		if i < 0 {
			continue
		}
		coll, rest := k[1:i], k[i+1:]
		v := string(it.Value())
		switch k[0] {
		case 'a':
			fn(StoredRoute{Collection: coll, Attr: rest, NodeID: v})
		case 's':
			fn(StoredRoute{Collection: coll, Site: rest, Attr: v})
		}
	}
	return it.Error()
}
