package nodesched

import (
	"fmt"

	"github.com/trawl/trawl/internal/config"
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
	// feedConf sets up (or reconfigures) the feeding of collection coll:
	// its content destinations, suspension state and dsfeed log.
	feedConf struct {
		coll     string
		dests    []config.Destination
		dsPaused bool
		state    FeedingState
		dsfeed   bool
	}
	// feedState is a changed CMD_ADM_CONF_FEEDING_SUSPEND state.
	feedState struct {
		coll  string
		state FeedingState
	}
)

// FeedResults counts the answers of a collection's primary content
// destinations (the pp_fed, pp_succeeded, pp_failed and pp_deleted
// counters).
type FeedResults struct{ Fed, Succeeded, Failed, Deleted int64 }

// SetFeedResults gives the machine the answers the feeding chain counted
// for coll (the driver does, before it drains the machine).
func (m *Machine) SetFeedResults(coll string, r FeedResults) {
	if m.feedResults == nil {
		m.feedResults = map[string]FeedResults{}
	}
	m.feedResults[coll] = r
}

// Records returns and clears what the machine asks its driver to persist
// since the last call: the feeding configurations first (so that the
// content operations of a collection set up in the same batch find its
// destinations), then the staged store writes (with their content
// operations), then the storage/uri_dir work. The driver applies
// them in order, before it sends the messages drained with them.
func (m *Machine) Records() []any {
	out := m.feedConfs
	m.feedConfs = nil
	if err := m.stageStats(); err != nil { // stats_persist.go
		// Nothing staged is committed without its counts.
		return append(out, fatalErr{fmt.Errorf("nodesched: staging the statistics: %w", err)})
	}
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

// applyFeedConf hands a feeding configuration record to fd (nil: no
// feeding chain).
func applyFeedConf(fd *Feeding, rec any) error {
	if fd == nil {
		return nil
	}
	switch x := rec.(type) {
	case feedConf:
		fc, err := fd.setup(x.coll, x.dests, x.dsPaused, x.state)
		if fc != nil {
			fc.dsfeed.Store(x.dsfeed)
		}
		return err
	case feedState:
		fd.setSuspended(x.coll, x.state)
	}
	return nil
}

// giveFeedResults gives m the answers fd counted for each collection.
func giveFeedResults(m *Machine, fd *Feeding) {
	if fd == nil {
		return
	}
	fd.mu.Lock()
	colls := make([]*feedColl, 0, len(fd.colls))
	for _, fc := range fd.colls {
		colls = append(colls, fc)
	}
	fd.mu.Unlock()
	for _, fc := range colls {
		m.SetFeedResults(fc.name, FeedResults{Fed: fc.base.Fed + fc.results.fed.Load(), Succeeded: fc.base.Succeeded + fc.results.succeeded.Load(),
			Failed: fc.base.Failed + fc.results.failed.Load(), Deleted: fc.base.Deleted + fc.results.deleted.Load()})
	}
}
