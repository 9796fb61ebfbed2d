package store

import "github.com/cockroachdb/pebble"

// DB returns the store's Pebble database, for a component that keeps its
// own key space in it and must write in the same batches as the crawl
// steps (the feeding outbox of internal/feed). Its keys must start with a
// byte no Space uses, or live under SpaceMeta with a name prefix of its own.
func (s *Store) DB() *pebble.DB { return s.db }

// Pebble returns the Pebble batch underneath b, so that such a component
// adds its writes to a crawl step's batch and they commit atomically with it.
func (b *Batch) Pebble() *pebble.Batch { return b.b }
