package store

import "github.com/cockroachdb/pebble"

// A staged view (Staged) is a Store whose batches do not reach Pebble when
// they commit: Commit adds their writes to the view's stage, one indexed
// Pebble batch, and the view's reads go through that batch, so that the
// view sees its own writes before they are durable. TakeStaged hands the
// stage over as one batch of the underlying store, which its owner commits
// (Batch.Commit: the store's route cache learns the staged routes then).
// The functions a view's batch registers with OnCommit run when the batch
// is staged: the view's owner, which applies the stage, orders the work
// they hand it after that commit.
//
// This is how a protocol machine that keeps its state in the store (the
// node scheduler's) does no I/O of its own: it reads and writes through a
// staged view, and its driver commits what it staged as a record of its
// Ready batch before sending the batch's messages.
//
// A view is not safe for concurrent use (its stage is one Pebble batch);
// the store's other readers see only what the owner committed.

// stage is what a view's batches committed and its owner has not taken.
type stage struct {
	b         *pebble.Batch // indexed; nil while nothing is staged
	routes    []routeChange
	routesAll bool
	sync      bool
}

// Staged returns a staged view of s (see above). The view shares s's
// database, codec, limits, checksum filter and document counts; it keeps
// its own route cache (of what it sees).
func (s *Store) Staged() *Store {
	if s.base != nil {
		s = s.base
	}
	return &Store{db: s.db, wo: s.wo, codec: s.codec, maxDoc: s.maxDoc, closed: s.closed, csums: s.csums,
		docs: s.docs, owners: s.owners, dir: s.dir, stage: &stage{}, base: s}
}

// IsStaged reports whether s is a staged view.
func (s *Store) IsStaged() bool { return s.stage != nil }

// TakeStaged returns the writes staged on the view s since the last call as
// one batch of the underlying store, or nil when nothing was staged; the
// view reads the store directly again until its next commit. Commit the
// batch (CommitSync is used when a staged batch asked for a sync), or
// Discard it: the view does not see it either way.
func (s *Store) TakeStaged() *Batch {
	st := s.stage
	if st == nil || st.b == nil {
		return nil
	}
	b := &Batch{s: s.base, b: st.b, routes: st.routes, routesAll: st.routesAll, sync: st.sync}
	*st = stage{}
	return b
}

// Sync reports whether a staged batch was committed with CommitSync.
func (b *Batch) Sync() bool { return b.sync }

// reader is what s's reads go through: the stage when it holds writes.
func (s *Store) reader() pebble.Reader {
	if s.stage != nil && s.stage.b != nil {
		return s.stage.b
	}
	return s.db
}

// staged adds b's writes to its view's stage.
func (b *Batch) staged(sync bool) error {
	s := b.s
	defer b.b.Close()
	if s.closed.Load() {
		return ErrClosed
	}
	st := s.stage
	if st.b == nil {
		st.b = s.db.NewIndexedBatch()
	}
	if err := st.b.Apply(b.b, nil); err != nil {
		return err
	}
	if len(b.routes) > 0 || b.routesAll {
		s.routes.apply(b.routes, b.routesAll)
		st.routes = append(st.routes, b.routes...)
		st.routesAll = st.routesAll || b.routesAll
	}
	// The document counts are shared with the store: they change when
	// the view sees the change.
	s.docs.apply(&b.docs)
	s.owners.apply(&b.owners)
	st.sync = st.sync || sync
	for _, f := range b.after {
		f()
	}
	return nil
}
