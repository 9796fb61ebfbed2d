package multinode

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/vfs"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/marshal"
)

// RouteStore is the routing database of the multinode scheduler on disk
// (MS-FSCMT 3.2.1 "Routing database"), a Pebble store with two kinds of
// record per collection:
//
//	"a" collection 0x00 attribute  ->  node id      a routing decision
//	"s" collection 0x00 site       ->  attribute    a routed crawl site
//	"c" collection                 ->  state        the collection's suspensions (PersistState)
//	"t" collection 0x00 node       ->  report       a node scheduler's statistics (PersistStats)
//	"u" collection 0x00 node 0x00 site -> counters  a site's, from that node scheduler
//
// A report is the marshal bytes of the tuple (seq, counters), counters the
// marshal bytes of a dictionary (internal/multinode/nodestats.go).
//
// The state value is the crawl state byte, a flag byte (1: feeding of
// every destination suspended) and the suspended destinations, each
// followed by a NUL byte.
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
func stateKey(coll string) []byte      { return []byte("c" + coll) }

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
		case PersistState:
			if strings.IndexByte(x.Collection, 0) >= 0 {
				return errors.New("multinode: collection name with a NUL byte")
			}
			if x.State == cmt.StateActive && !x.FeedAll && len(x.FeedDests) == 0 {
				if err := b.Delete(stateKey(x.Collection), nil); err != nil {
					return err
				}
			} else if err := b.Set(stateKey(x.Collection), encodeState(x), nil); err != nil {
				return err
			}
			n++
		case PersistStats:
			k, err := b2n(putStats(b, x))
			if err != nil {
				return err
			}
			n += k
		case DropRoutes:
			if err := b.Delete(stateKey(x.Collection), nil); err != nil {
				return err
			}
			for _, k := range []string{"a", "s", "t", "u"} {
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

func encodeState(x PersistState) []byte {
	v := []byte{byte(x.State), 0}
	if x.FeedAll {
		v[1] = 1
	}
	for _, d := range x.FeedDests {
		if strings.IndexByte(d, 0) < 0 {
			v = append(append(v, d...), 0)
		}
	}
	return v
}

// decodeState reads what encodeState wrote; ok is false for a value that
// is not one.
func decodeState(coll string, v []byte) (PersistState, bool) {
	if len(v) < 2 || v[1] > 1 || (len(v) > 2 && v[len(v)-1] != 0) {
		return PersistState{}, false
	}
	st := PersistState{Collection: coll, State: cmt.CollectionState(v[0]), FeedAll: v[1] == 1}
	if !st.State.Valid() {
		return PersistState{}, false
	}
	if len(v) > 2 {
		st.FeedDests = strings.Split(string(v[2:len(v)-1]), "\x00")
	}
	return st, true
}

// LoadStates calls fn for every persisted collection state (PersistState);
// a record that cannot be read is skipped.
func (s *RouteStore) LoadStates(fn func(PersistState)) error {
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte("c"), UpperBound: []byte("d")})
	if err != nil {
		return fmt.Errorf("multinode: read routing database: %w", err)
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		if st, ok := decodeState(string(it.Key()[1:]), it.Value()); ok {
			fn(st)
		}
	}
	return it.Error()
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

func b2n(ok bool, err error) (int, error) {
	if ok {
		return 1, err
	}
	return 0, err
}

// putStats writes a PersistStats into b; it reports whether it wrote.
func putStats(b *pebble.Batch, x PersistStats) (bool, error) {
	if strings.IndexByte(x.Collection, 0) >= 0 || strings.IndexByte(x.Node, 0) >= 0 {
		return false, nil // a node id with a NUL byte keeps its statistics in memory only
	}
	v, err := marshal.Encode(marshal.Tuple{marshal.Int(x.Seq), x.Coll})
	if err != nil {
		return false, fmt.Errorf("multinode: statistics of %s: %w", x.Node, err)
	}
	pre := x.Collection + "\x00" + x.Node
	if err := b.Set([]byte("t"+pre), v, nil); err != nil {
		return false, err
	}
	for site, d := range x.Sites {
		if strings.IndexByte(site, 0) >= 0 {
			continue
		}
		v, err := marshal.Encode(d)
		if err != nil {
			return false, fmt.Errorf("multinode: statistics of %s: %w", x.Node, err)
		}
		if err := b.Set([]byte("u"+pre+"\x00"+site), v, nil); err != nil {
			return false, err
		}
	}
	return true, nil
}

// LoadStats calls fn for every persisted node scheduler report
// (PersistStats): one call with Seq and Coll per report, one with Sites
// per site; a record that cannot be read is skipped.
func (s *RouteStore) LoadStats(fn func(PersistStats)) error {
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte("t"), UpperBound: []byte("v")})
	if err != nil {
		return fmt.Errorf("multinode: read routing database: %w", err)
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		k := string(it.Key())
		parts := strings.SplitN(k[1:], "\x00", 3)
		v, err := marshal.Decode(it.Value())
		if err != nil {
			continue
		}
		switch {
		case k[0] == 't' && len(parts) == 2:
			t, ok := v.(marshal.Tuple)
			if !ok || len(t) != 2 {
				continue
			}
			seq, ok1 := t[0].(marshal.Int)
			d, ok2 := t[1].(marshal.Dict)
			if ok1 && ok2 {
				fn(PersistStats{Collection: parts[0], Node: parts[1], Seq: int64(seq), Coll: d})
			}
		case k[0] == 'u' && len(parts) == 3:
			if d, ok := v.(marshal.Dict); ok {
				fn(PersistStats{Collection: parts[0], Node: parts[1], Sites: map[string]marshal.Dict{parts[2]: d}})
			}
		}
	}
	return it.Error()
}
