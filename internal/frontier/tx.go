package frontier

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/trawl/trawl/internal/store"
)

// ErrTxOpen is returned by Begin while another transaction is open.
var ErrTxOpen = errors.New("frontier: a transaction is already open")

// AddResult counts what Add did with its entries.
type AddResult struct {
	Queued, Duplicate, TooDeep, Recursive, Invalid, NoCrawl int
}

type txOp struct {
	st      *site
	add     bool
	class   uint8
	seq     uint64
	prepend bool
	e       Entry

	fetch  Fetch
	result Result
}

// Tx is one crawl step: the driver's own store writes (URI record, document)
// and the frontier's (queue entries, seen-set, site state) commit in one
// Pebble batch. The frontier's memory changes only when Commit succeeds.
type Tx struct {
	f       *Frontier
	b       *store.Batch
	ops     []txOp
	touched map[*site]bool
	seen    map[string]bool
	now     time.Time
	done    bool
}

// Begin starts a transaction. Only one may be open; Next returns nothing
// while it is.
func (f *Frontier) Begin(now time.Time) (*Tx, error) {
	if f.err != nil {
		return nil, f.err
	}
	if f.txOpen {
		return nil, ErrTxOpen
	}
	f.txOpen = true
	return &Tx{f: f, b: f.st.NewBatch(), touched: map[*site]bool{}, seen: map[string]bool{}, now: now}, nil
}

// Batch is the store batch the transaction commits; the driver adds its own
// writes (store.Batch.PutURI, PutDocument...) to it.
func (tx *Tx) Batch() *store.Batch { return tx.b }

// Discard abandons the transaction.
func (tx *Tx) Discard() {
	if !tx.done {
		tx.done = true
		tx.b.Discard()
		tx.f.txOpen = false
	}
}

// Add is Begin, Tx.Add and Commit in one.
func (f *Frontier) Add(now time.Time, entries ...Entry) (AddResult, error) {
	tx, err := f.Begin(now)
	if err != nil {
		return AddResult{}, err
	}
	r, err := tx.Add(entries...)
	if err != nil {
		tx.Discard()
		return r, err
	}
	return r, tx.Commit()
}

// Done is Begin, Tx.Done and Commit in one.
func (f *Frontier) Done(fe Fetch, res Result, now time.Time) error {
	tx, err := f.Begin(now)
	if err != nil {
		return err
	}
	if err := tx.Done(fe, res); err != nil {
		tx.Discard()
		return err
	}
	return tx.Commit()
}

type candidate struct {
	i   int
	key []byte
}

// Add queues entries after the depth, recursion and seen-set filters. The
// seen-set is checked in one sorted pass over the disk (DRUM-like).
func (tx *Tx) Add(entries ...Entry) (AddResult, error) {
	f := tx.f
	var res AddResult
	keep := make([]bool, len(entries))
	var disk []candidate
	for i := range entries {
		e := &entries[i]
		switch {
		case e.URI == "" || e.Site == "" || len(e.Extra) > f.cfg.MaxExtraLen:
			res.Invalid++
			continue
		case e.URIFlags&URIFNoCrawl != 0:
			res.NoCrawl++
			continue
		case e.URIFlags&URIFSiteURI != 0:
			// Only a signal to crawl what is queued for the site.
			st, err := f.getSite(e.Site)
			if err != nil {
				return res, err
			}
			tx.touched[st] = true
			continue
		case f.cfg.MaxHops >= 0 && e.Hops > f.cfg.MaxHops:
			res.TooDeep++
			continue
		case f.cfg.MaxURIRecursion > 0 && recursionDepth(e.URI, e.Referrer) > f.cfg.MaxURIRecursion:
			res.Recursive++
			continue
		}
		if e.QueueFlags&QFForce != 0 || e.URIFlags&URIFForce != 0 {
			keep[i] = true
			continue
		}
		if tx.seen[e.URI] {
			res.Duplicate++
			continue
		}
		tx.seen[e.URI] = true
		switch {
		case f.cfg.WQFilter && f.bloom != nil && !f.bloom.has(e.URI):
			keep[i] = true // certainly new: no disk read
		case f.cfg.WQFilter:
			disk = append(disk, candidate{i: i, key: f.seenKey(e.URI)})
		case f.bloom != nil && f.bloom.has(e.URI):
			res.Duplicate++ // bloom-only: a false positive skips a new URI
		default:
			keep[i] = true
		}
	}
	if len(disk) > 0 {
		sort.Slice(disk, func(a, b int) bool { return bytes.Compare(disk[a].key, disk[b].key) < 0 })
		it, err := f.st.NewRawIter(store.SpaceSeen, f.coll)
		if err != nil {
			return res, err
		}
		for _, c := range disk {
			e := &entries[c.i]
			dup := false
			if it.SeekGE(store.SpaceSeen, c.key) && bytes.Equal(it.Key(), c.key) {
				cyc, n := binary.Varint(it.Value())
				st, err := f.getSite(e.Site)
				if err != nil {
					it.Close()
					return res, err
				}
				dup = n > 0 && cyc >= st.cycle
			}
			if dup {
				res.Duplicate++
			} else {
				keep[c.i] = true
			}
		}
		if err := it.Close(); err != nil {
			return res, err
		}
	}
	for i := range entries {
		if !keep[i] {
			continue
		}
		if err := tx.queue(entries[i]); err != nil {
			return res, err
		}
		res.Queued++
	}
	f.stats.Duplicates += int64(res.Duplicate)
	f.stats.TooDeep += int64(res.TooDeep)
	f.stats.Recursive += int64(res.Recursive)
	f.stats.Invalid += int64(res.Invalid)
	return res, nil
}

// queue writes one entry (no filters).
func (tx *Tx) queue(e Entry) error {
	f := tx.f
	st, err := f.getSite(e.Site)
	if err != nil {
		return err
	}
	if e.Level <= 0 {
		if e.URIFlags&(URIFStartURI|URIFStartURIFeed) != 0 {
			e.Level = f.cfg.StartURILevel
		} else {
			e.Level = f.cfg.DefaultLevel
		}
	}
	if e.Level > f.cfg.Levels {
		e.Level = f.cfg.Levels
	}
	class := uint8(e.Level)
	prepend := e.QueueFlags&QFPrepend != 0
	switch {
	case e.QueueFlags&QFUrgent != 0:
		class, prepend = 0, true
	case e.URIFlags&URIFRescheduled != 0:
		class = uint8(f.cfg.Levels + 1)
	}
	q := &st.q[class]
	var seq uint64
	if prepend {
		q.headSeq--
		seq = q.headSeq
	} else {
		seq = q.tailSeq
		q.tailSeq++
	}
	if err := tx.b.SetRaw(store.SpaceQueue, f.queueKey(st.name, class, seq), encodeEntry(&e, class)); err != nil {
		return err
	}
	if f.cfg.WQFilter {
		if err := tx.b.SetRaw(store.SpaceSeen, f.seenKey(e.URI), binary.AppendVarint(nil, st.cycle)); err != nil {
			return err
		}
	}
	if f.bloom != nil {
		f.bloom.add(e.URI)
	}
	tx.touched[st] = true
	tx.ops = append(tx.ops, txOp{st: st, add: true, class: class, seq: seq, prepend: prepend, e: e})
	return nil
}

// Done records that a fetch finished: its queue entry goes, the URI is
// remembered as known, and the site's backoff is updated.
func (tx *Tx) Done(fe Fetch, res Result) error {
	f := tx.f
	st := f.sites[fe.Site]
	if st == nil {
		return fmt.Errorf("frontier: Done for %s: site %q has nothing in flight", fe.URI, fe.Site)
	}
	found := false
	for _, fl := range st.fly {
		if fl.class == fe.class && fl.seq == fe.seq && fl.epoch == fe.epoch {
			found = true
		}
	}
	if !found {
		return fmt.Errorf("frontier: Done for %s: not in flight", fe.URI)
	}
	if fe.epoch == st.epoch {
		if err := tx.b.DeleteRaw(store.SpaceQueue, f.queueKey(st.name, fe.class, fe.seq)); err != nil {
			return err
		}
	}
	if res.Outcome != NetError {
		kk := f.knownKey(st.name, fe.URI)
		k := KnownURI{URI: fe.URI, Site: st.name}
		if v, ok, err := f.st.GetRaw(store.SpaceKnown, kk); err != nil {
			return err
		} else if ok {
			if k, err = decodeKnown(st.name, fe.URI, v); err != nil {
				return err
			}
		}
		k.Hops, k.Level, k.LastCycle = fe.Hops, fe.Level, fe.Cycle
		if res.Outcome == Fetched || res.Outcome == NotModified {
			k.Fetches++
			if res.Changed {
				k.Changes++
			}
		}
		if err := tx.b.SetRaw(store.SpaceKnown, kk, encodeKnown(&k)); err != nil {
			return err
		}
	}
	tx.touched[st] = true
	tx.ops = append(tx.ops, txOp{st: st, fetch: fe, result: res})
	return nil
}

// Commit applies the frontier's changes to memory, writes the touched
// sites' state into the batch and commits it. If the commit fails the
// frontier is broken (ErrBroken) and must be reopened from the store, which
// holds the state before the transaction.
func (tx *Tx) Commit() error {
	if tx.done {
		return fmt.Errorf("frontier: transaction already finished")
	}
	tx.done = true
	f := tx.f
	f.txOpen = false
	for i := 0; i < len(tx.ops); i++ { // applying a Done may queue more (soft refresh)
		op := &tx.ops[i]
		if op.add {
			f.applyAdd(op)
		} else if err := f.applyDone(tx, op); err != nil {
			tx.b.Discard()
			f.err = fmt.Errorf("%w: %v", ErrBroken, err)
			return f.err
		}
	}
	for st := range tx.touched {
		if err := f.writeMeta(tx.b, st); err != nil {
			tx.b.Discard()
			f.err = fmt.Errorf("%w: %v", ErrBroken, err)
			return f.err
		}
	}
	if err := f.commit(tx.b); err != nil {
		return err
	}
	for st := range tx.touched {
		f.settle(st, tx.now)
	}
	return nil
}

func (f *Frontier) applyAdd(op *txOp) {
	st := op.st
	q := &st.q[op.class]
	unloaded := st.unloaded(int(op.class))
	q.count++
	f.stats.Added++
	he := headEntry{seq: op.seq, e: op.e}
	switch {
	case op.prepend:
		q.head = append(q.head, headEntry{})
		copy(q.head[1:], q.head)
		q.head[0] = he
		if len(q.head) > 2*f.cfg.HeadSize {
			for i := f.cfg.HeadSize; i < len(q.head); i++ {
				q.head[i] = headEntry{}
			}
			q.head = q.head[:f.cfg.HeadSize]
			q.from = q.head[len(q.head)-1].seq + 1
		}
	case unloaded == 0 && len(q.head) < f.cfg.HeadSize && op.seq >= q.from:
		q.head = append(q.head, he)
		q.from = op.seq + 1
	}
	if op.class == 0 && st.mode == modeWaiting {
		// Urgent work: re-enter the wait heap ahead of non-urgent sites.
		st.mode = modeIdle
	}
}

func (f *Frontier) applyDone(tx *Tx, op *txOp) error {
	st, fe := op.st, op.fetch
	for i, fl := range st.fly {
		if fl.class == fe.class && fl.seq == fe.seq && fl.epoch == fe.epoch {
			st.fly = append(st.fly[:i], st.fly[i+1:]...)
			break
		}
	}
	if len(st.fly) == 0 {
		st.fly = nil
	}
	if fe.epoch == st.epoch {
		st.q[fe.class].count--
	}
	f.stats.Completed++
	if op.result.Outcome == NetError {
		f.backoffSite(st, tx.now)
		if f.cfg.MaxBackoffCounter > 0 && st.backoff > f.cfg.MaxBackoffCounter {
			st.stopped = true
			if err := f.dropQueue(tx.b, st); err != nil {
				return err
			}
		}
	} else if st.backoff > 0 || !st.backoffUntil.IsZero() {
		st.backoff = 0
		st.backoffUntil = time.Time{}
	}
	st.readyVer++
	st.inReady = false
	if f.cfg.RefreshMode == RefreshSoft && st.cycle < f.cycle && st.queued() == 0 && len(st.fly) == 0 {
		return f.softRefreshSite(tx, st)
	}
	return nil
}

// dropQueue removes every queued entry of st (in flight ones finish but no
// longer count).
func (f *Frontier) dropQueue(b *store.Batch, st *site) error {
	if err := b.DeletePrefix(store.SpaceQueue, f.queuePrefix(st.name)); err != nil {
		return err
	}
	for i := range st.q {
		q := &st.q[i]
		f.stats.Dropped += int64(q.count - st.flyCount(i))
		// Sequence numbers keep growing: a stale Done never deletes a new entry.
		q.count, q.head, q.from = 0, nil, q.headSeq
	}
	st.epoch++
	st.dirty = true
	return nil
}
