package nodesched

import (
	"github.com/trawl/trawl/internal/feed"
	"github.com/trawl/trawl/internal/store"
)

// What the machine leaves for its driver to persist (Machine.Records): the
// machine reads and writes the crawl store through a staged view
// (store.Staged), so its writes reach Pebble only when the driver commits
// them, in the order of the records, before the messages of the same batch
// are sent.
type (
	// storeWrites is every store write the machine staged since the last
	// Records (nil b: none), with the content operations to put in the
	// feeding outboxes in the same Pebble batch.
	storeWrites struct {
		b    *store.Batch
		feed []feedPut
	}
	// feedPut is the content operations of one commit of collection coll,
	// for its destinations (only: the destination named, or all).
	feedPut struct {
		coll string
		ops  []feed.Operation
		only string
	}
	// uriDirWork is storage/uri_dir file work (uridir.go), for the file
	// writer once the writes before it are committed.
	uriDirWork struct{ f func() }
)

// Records returns and clears what the machine asks its driver to persist
// since the last call: the staged store writes (with their content
// operations) first, then the storage/uri_dir work. The driver applies
// them in order, before it sends the messages drained with them.
func (m *Machine) Records() []any {
	var out []any
	if b := m.st.TakeStaged(); b != nil || len(m.feedPuts) > 0 {
		out = append(out, storeWrites{b: b, feed: m.feedPuts})
		m.feedPuts = nil
	}
	out = append(out, m.work...)
	m.work = nil
	return out
}

// commitWrites commits w to st in one Pebble batch, with its content
// operations in the feeding outboxes (fd; nil: no feeding chain).
func commitWrites(st *store.Store, fd *Feeding, w storeWrites) error {
	b := w.b
	if b == nil {
		b = st.NewBatch()
	}
	commit := b.Commit
	if b.Sync() {
		commit = b.CommitSync
	}
	if fd == nil || len(w.feed) == 0 {
		return commit()
	}
	// The operations of one outbox go in one PutWith (a later one on a
	// URI supersedes an earlier one there); the outboxes nest around the
	// one commit.
	var order []*feedColl
	byColl := map[*feedColl][]feed.Operation{}
	for _, p := range w.feed {
		fc := fd.coll(p.coll)
		if fc == nil {
			continue
		}
		if _, ok := byColl[fc]; !ok {
			order = append(order, fc)
		}
		for _, op := range p.ops {
			for _, t := range fc.targets {
				if p.only != "" && !targetNamed(t, p.only) {
					continue
				}
				op.Destination, op.Collection = t.Name, t.Collection
				byColl[fc] = append(byColl[fc], op)
			}
		}
	}
	for _, fc := range order {
		inner, ops := commit, byColl[fc]
		commit = func() error {
			_, err := fc.ob.PutWith(b.Pebble(), inner, ops...)
			return err
		}
	}
	return commit()
}
