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
	// Shorter counts entries that lowered the depth of a URI already seen
	// this cycle (crawlmode DEPTH): the queued entry was rewritten, or the
	// URI queued again when it had been served.
	Shorter int
}

type opKind uint8

const (
	opAdd       opKind = iota // an entry queued
	opDone                    // a fetch finished
	opUpdate                  // a queued entry rewritten in place (shorter path)
	opDropEntry               // a queued entry deleted (DropURIs)
	opDropSite                // every queued entry of a site deleted (DropSite)
)

type txOp struct {
	kind    opKind
	st      *site
	class   uint8
	seq     uint64
	prepend bool
	fresh   bool
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
	seen    map[string]int // URI -> index in ops of its queued entry, -1 when not queued here
	cache   []seenCacheOp  // seen-set cache changes, applied in order on commit
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
	return &Tx{f: f, b: f.st.NewBatch(), touched: map[*site]bool{}, seen: map[string]int{}, now: now}, nil
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

// cand is an entry of Add on its way through the filters.
type cand struct {
	e                      Entry
	keep, fresh, disk, dup bool
	shorter                bool      // a shorter path to a URI already seen this cycle
	old                    seenValue // its seen-set value (shorter)
	keyOff, keyLen         int       // seen-set key in Add's key buffer (disk)
}

// Add queues entries after the depth, recursion and seen-set filters. The
// seen-set is checked in one sorted pass over the disk (DRUM-like), behind
// a Bloom filter that lets certainly new URIs skip the disk.
//
// A URI's depth is the shortest path that leads to it: an entry for a URI
// already seen this cycle by a shorter path (shorter) lowers the hops and
// redirects of the queued entry in place, or, when that entry was already
// served, queues the URI again flagged QFReextract (AddResult.Shorter).
func (tx *Tx) Add(entries ...Entry) (AddResult, error) {
	f := tx.f
	var res AddResult
	depth := f.cfg.MaxHops >= 0
	cands := make([]cand, 0, len(entries))
	var local map[string]int // URI -> index in cands, for this call
	ndisk := 0
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
		case depth && e.Hops > f.cfg.MaxHops:
			res.TooDeep++
			continue
		case f.cfg.MaxURIRecursion > 0 && recursionDepth(e.URI, e.Referrer) > f.cfg.MaxURIRecursion:
			res.Recursive++
			continue
		}
		if e.QueueFlags&QFForce != 0 || e.URIFlags&URIFForce != 0 {
			cands = append(cands, cand{e: *e, keep: true})
			continue
		}
		if j, ok := local[e.URI]; ok {
			// The same URI twice in one call: keep the shortest path.
			if c := &cands[j]; f.shorter(e.Hops, e.Redirects, c.e.Hops, c.e.Redirects) {
				c.e.Hops, c.e.Redirects, c.e.Referrer, c.e.Extra = e.Hops, e.Redirects, e.Referrer, e.Extra
			}
			res.Duplicate++
			continue
		}
		if k, ok := tx.seen[e.URI]; ok {
			if k >= 0 && f.shorter(e.Hops, e.Redirects, tx.ops[k].e.Hops, tx.ops[k].e.Redirects) {
				if err := tx.lower(k, e); err != nil {
					return res, err
				}
				res.Shorter++
			} else {
				res.Duplicate++
			}
			continue
		}
		if local == nil {
			local = make(map[string]int, len(entries))
		}
		local[e.URI] = len(cands)
		c := cand{e: *e}
		switch {
		case f.cfg.WQFilter && f.bloom != nil && !f.bloom.has(e.URI):
			c.keep, c.fresh = true, true // certainly new: no disk read
		case f.cfg.WQFilter && f.cachedDup(e):
			c.dup = true // seen this cycle, from the seen-set cache: no disk read
			f.stats.CacheHits++
		case f.cfg.WQFilter:
			c.disk = true
			ndisk++
		case f.bloom != nil && f.bloom.has(e.URI):
			c.dup = true // bloom-only: a false positive skips a new URI
		default:
			c.keep = true
		}
		cands = append(cands, c)
	}
	if ndisk > 0 {
		if err := tx.checkSeen(cands, ndisk); err != nil {
			return res, err
		}
	}
	for i := range cands {
		c := &cands[i]
		switch {
		case c.dup:
			res.Duplicate++
			tx.seen[c.e.URI] = -1
		case c.shorter:
			if err := tx.shorten(c); err != nil {
				return res, err
			}
			res.Shorter++
		case c.keep:
			if err := tx.queue(c.e, c.fresh); err != nil {
				return res, err
			}
			res.Queued++
		}
	}
	f.stats.Duplicates += int64(res.Duplicate)
	f.stats.TooDeep += int64(res.TooDeep)
	f.stats.Recursive += int64(res.Recursive)
	f.stats.Invalid += int64(res.Invalid)
	f.stats.Shorter += int64(res.Shorter)
	return res, nil
}

// checkSeen looks the disk candidates up in the seen-set, in key order
// with one iterator.
func (tx *Tx) checkSeen(cands []cand, n int) error {
	f := tx.f
	idx := make([]int, 0, n)
	size := 0
	for i := range cands {
		if cands[i].disk {
			idx = append(idx, i)
			size += len(f.coll) + len(cands[i].e.URI)
		}
	}
	buf := make([]byte, 0, size)
	for _, i := range idx {
		c := &cands[i]
		c.keyOff = len(buf)
		buf = append(append(buf, f.coll...), c.e.URI...)
		c.keyLen = len(buf) - c.keyOff
	}
	key := func(i int) []byte { c := &cands[i]; return buf[c.keyOff : c.keyOff+c.keyLen] }
	sort.Slice(idx, func(a, b int) bool { return bytes.Compare(key(idx[a]), key(idx[b])) < 0 })
	it, err := f.st.NewRawIter(store.SpaceSeen, f.coll)
	if err != nil {
		return err
	}
	for _, i := range idx {
		c := &cands[i]
		k := key(i)
		if !it.SeekGE(store.SpaceSeen, k) || !bytes.Equal(it.Key(), k) {
			c.keep, c.fresh = true, true
			continue
		}
		sv, ok := decodeSeen(it.Value())
		if ok && f.seenc != nil {
			tx.cache = append(tx.cache, seenCacheOp{uri: c.e.URI, v: sv})
		}
		st, err := f.getSite(c.e.Site)
		if err != nil {
			it.Close()
			return err
		}
		known := false
		stale, mode := f.staleSeen(sv.cycle, sv.gen, st, c.e.URI)
		if ok && stale {
			if known, err = f.adaptiveKnown(&c.e, mode); err != nil {
				it.Close()
				return err
			}
		}
		switch {
		case known:
			c.dup = true // adaptive: a known URI is revisited by its score (adaptive.go)
		case !ok || stale:
			c.keep = true // seen in an earlier cycle
		case sv.full && f.shorter(c.e.Hops, c.e.Redirects, sv.hops, sv.redirects):
			c.shorter, c.old = true, sv
		default:
			c.dup = true
		}
	}
	return it.Close()
}

// seenCacheOp is a change to the seen-set cache that waits for the commit.
type seenCacheOp struct {
	uri string
	v   seenValue
	del bool
}

// forgetSeen drops uri from the seen-set cache now (so nothing in this
// transaction reads it from there) and again when the transaction commits
// (after any value an earlier read put back).
func (tx *Tx) forgetSeen(uri string) {
	if c := tx.f.seenc; c != nil {
		c.forget(uri)
		tx.cache = append(tx.cache, seenCacheOp{uri: uri, del: true})
	}
}

// cachedDup reports whether the seen-set cache shows e's URI seen in its
// site's current cycle by a path no longer than e's: the verdict checkSeen
// would give from the disk. Anything else is left to the disk.
func (f *Frontier) cachedDup(e *Entry) bool {
	if f.seenc == nil {
		return false
	}
	v, ok := f.seenc.get(e.URI)
	if !ok {
		return false
	}
	st := f.sites[e.Site]
	if st == nil {
		return false
	}
	if stale, _ := f.staleSeen(int64(v.cycle), uint64(v.gen), st, e.URI); stale {
		return false
	}
	return !(v.full && f.shorter(e.Hops, e.Redirects, int(v.hops), int(v.redirects)))
}

// shorter reports whether a path of hops and redirects is shorter than
// one of oldHops and oldRedirects: no longer in either measure and shorter
// in one (hops count only under crawlmode DEPTH). Paths neither of which
// is shorter keep the first (see docs/decisions/frontier.md).
func (f *Frontier) shorter(hops, redirects, oldHops, oldRedirects int) bool {
	if f.cfg.MaxHops < 0 {
		return redirects < oldRedirects
	}
	return hops <= oldHops && redirects <= oldRedirects && (hops < oldHops || redirects < oldRedirects)
}

// lower gives the entry queued by ops[k] in this transaction the shorter
// path of e.
func (tx *Tx) lower(k int, e *Entry) error {
	op := &tx.ops[k]
	op.e.Hops, op.e.Redirects, op.e.Referrer, op.e.Extra = e.Hops, e.Redirects, e.Referrer, e.Extra
	return tx.writeQueued(op)
}

// writeQueued (re)writes the queue entry and seen-set value of op.
func (tx *Tx) writeQueued(op *txOp) error {
	f := tx.f
	if err := tx.b.SetRaw(store.SpaceQueue, f.queueKey(op.st.name, op.class, op.seq), appendQueued(nil, &op.e, op.class, op.fresh)); err != nil {
		return err
	}
	if f.cfg.WQFilter {
		v := appendSeen(make([]byte, 0, 24), seenValue{cycle: op.st.cycle, hops: op.e.Hops, class: op.class, seq: op.seq, redirects: op.e.Redirects, gen: f.gen})
		if err := tx.b.SetRaw(store.SpaceSeen, f.seenKey(op.e.URI), v); err != nil {
			return err
		}
		if f.seenc != nil {
			sv, _ := decodeSeen(v)
			tx.cache = append(tx.cache, seenCacheOp{uri: op.e.URI, v: sv})
		}
	}
	return nil
}

// shorten handles a shorter path to a URI seen this cycle: its queued entry
// gets the new depth in place; if it was served already (or is in flight)
// the URI is queued again, flagged QFReextract so that the driver takes its
// links again from what it stored instead of fetching it again.
func (tx *Tx) shorten(c *cand) error {
	f := tx.f
	st, err := f.getSite(c.e.Site)
	if err != nil {
		return err
	}
	o := c.old
	if int(o.class) < len(st.q) && !st.isFlying(int(o.class), o.seq) {
		v, ok, err := f.st.GetRaw(store.SpaceQueue, f.queueKey(st.name, o.class, o.seq))
		if err != nil {
			return err
		}
		if ok {
			old, class, fresh, err := decodeQueued(v)
			if err == nil && old.URI == c.e.URI && class == o.class {
				old.Hops, old.Redirects, old.Referrer, old.Extra = c.e.Hops, c.e.Redirects, c.e.Referrer, c.e.Extra
				tx.ops = append(tx.ops, txOp{kind: opUpdate, st: st, class: class, seq: o.seq, fresh: fresh, e: old})
				tx.seen[old.URI] = len(tx.ops) - 1
				tx.touched[st] = true
				return tx.writeQueued(&tx.ops[len(tx.ops)-1])
			}
		}
	}
	e := c.e
	e.QueueFlags |= QFReextract
	return tx.queue(e, false)
}

// queue writes one entry (no filters). fresh says the seen-set had no
// record of the URI.
func (tx *Tx) queue(e Entry, fresh bool) error {
	f := tx.f
	st, err := f.getSite(e.Site)
	if err != nil {
		return err
	}
	if e.Level <= 0 {
		switch {
		case e.URIFlags&(URIFStartURI|URIFStartURIFeed) != 0:
			e.Level = f.cfg.StartURILevel
		case f.cfg.PutLevel != nil:
			if e.Level = f.cfg.PutLevel(e.URI); e.Level <= 0 {
				e.Level = f.cfg.DefaultLevel
			}
		default:
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
	tx.ops = append(tx.ops, txOp{kind: opAdd, st: st, class: class, seq: seq, prepend: prepend, fresh: fresh, e: e})
	tx.seen[e.URI] = len(tx.ops) - 1
	if err := tx.writeQueued(&tx.ops[len(tx.ops)-1]); err != nil {
		return err
	}
	if f.bloom != nil {
		f.bloom.add(e.URI)
		f.bloomN++
	}
	tx.touched[st] = true
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
		if !fe.fresh { // a fresh URI was never served: it has no known record
			if v, ok, err := f.st.GetRaw(store.SpaceKnown, kk); err != nil {
				return err
			} else if ok {
				if k, err = decodeKnown(st.name, fe.URI, v); err != nil {
					return err
				}
			}
		}
		k.Hops, k.Level, k.LastCycle, k.LastTick = fe.Hops, fe.Level, fe.Cycle, f.tick()
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
	tx.ops = append(tx.ops, txOp{kind: opDone, st: st, fetch: fe, result: res})
	return nil
}

// DropSite removes every queued entry of site and forgets its URIs (their
// seen-set entries and known records, and start URIs held for a soft
// refresh), as CMD_UM_DELETE_SITE asks: a later link to them queues them
// again. uris are further URIs of the site the caller has records of.
// Fetches in flight finish, but their Done no longer counts. It returns the
// number of queued entries removed. In bloom-only mode (no wqfilter) the
// filter cannot forget: the URIs stay seen until the next cycle.
func (tx *Tx) DropSite(site string, uris []string) (int, error) {
	f := tx.f
	st, err := f.getSite(site)
	if err != nil {
		return 0, err
	}
	forget := func(uri string) error {
		if k, ok := tx.seen[uri]; ok && k >= 0 && tx.ops[k].st == st {
			tx.seen[uri] = -1
		}
		tx.forgetSeen(uri)
		return tx.b.DeleteRaw(store.SpaceSeen, f.seenKey(uri))
	}
	p := f.queuePrefix(site)
	err = f.st.IterRaw(store.SpaceQueue, p, func(_, v []byte) error {
		e, _, err := decodeEntry(v)
		if err != nil {
			return err
		}
		return forget(e.URI)
	})
	if err != nil {
		return 0, err
	}
	err = f.st.IterRaw(store.SpaceKnown, p, func(k, _ []byte) error { return forget(string(k[len(p):])) })
	if err != nil {
		return 0, err
	}
	for _, u := range uris {
		if err := forget(u); err != nil {
			return 0, err
		}
	}
	for _, sp := range []store.Space{store.SpaceQueue, store.SpaceKnown} {
		if err := tx.b.DeletePrefix(sp, p); err != nil {
			return 0, err
		}
	}
	if err := tx.b.DeletePrefix(store.SpaceFrontier, f.deferredPrefix(site)); err != nil {
		return 0, err
	}
	n := st.queued() - len(st.fly)
	for _, fl := range st.fly {
		if fl.epoch != st.epoch {
			n++ // counted no more
		}
	}
	tx.touched[st] = true
	tx.ops = append(tx.ops, txOp{kind: opDropSite, st: st})
	return max(n, 0), nil
}

// DropURIs removes the queued entries of the given URIs of site and forgets
// them (seen-set entries, known records), as CMD_UM_DELETE_URIS asks. An
// entry in flight finishes. It returns the number of queued entries removed.
func (tx *Tx) DropURIs(site string, uris []string) (int, error) {
	f := tx.f
	if len(uris) == 0 {
		return 0, nil
	}
	st, err := f.getSite(site)
	if err != nil {
		return 0, err
	}
	want := make(map[string]bool, len(uris))
	for _, u := range uris {
		want[u] = true
	}
	n := 0
	if st.queued() > 0 {
		p := f.queuePrefix(site)
		err = f.st.IterRaw(store.SpaceQueue, p, func(k, v []byte) error {
			if len(k) != len(p)+9 {
				return fmt.Errorf("%w: queue key of %d bytes", errCorrupt, len(k))
			}
			e, class, err := decodeEntry(v)
			if err != nil {
				return err
			}
			seq := binary.BigEndian.Uint64(k[len(p)+1:])
			if !want[e.URI] || int(class) >= len(st.q) || k[len(p)] != class || st.isFlying(int(class), seq) {
				return nil
			}
			n++
			tx.ops = append(tx.ops, txOp{kind: opDropEntry, st: st, class: class, seq: seq})
			return tx.b.DeleteRaw(store.SpaceQueue, k)
		})
		if err != nil {
			return 0, err
		}
	}
	for _, u := range uris {
		if k, ok := tx.seen[u]; ok && k >= 0 && tx.ops[k].st == st {
			tx.seen[u] = -1
		}
		tx.forgetSeen(u)
		if err := tx.b.DeleteRaw(store.SpaceSeen, f.seenKey(u)); err != nil {
			return 0, err
		}
		if err := tx.b.DeleteRaw(store.SpaceKnown, f.knownKey(site, u)); err != nil {
			return 0, err
		}
	}
	tx.touched[st] = true
	return n, nil
}

// DropSite is Begin, Tx.DropSite and Commit in one.
func (f *Frontier) DropSite(now time.Time, site string, uris []string) (int, error) {
	tx, err := f.Begin(now)
	if err != nil {
		return 0, err
	}
	n, err := tx.DropSite(site, uris)
	if err != nil {
		tx.Discard()
		return 0, err
	}
	return n, tx.Commit()
}

// DropURIs is Begin, Tx.DropURIs and Commit in one.
func (f *Frontier) DropURIs(now time.Time, site string, uris []string) (int, error) {
	tx, err := f.Begin(now)
	if err != nil {
		return 0, err
	}
	n, err := tx.DropURIs(site, uris)
	if err != nil {
		tx.Discard()
		return 0, err
	}
	return n, tx.Commit()
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
		switch op.kind {
		case opAdd:
			f.applyAdd(op)
		case opDone:
			if err := f.applyDone(tx, op); err != nil {
				tx.b.Discard()
				f.err = fmt.Errorf("%w: %v", ErrBroken, err)
				return f.err
			}
		case opUpdate:
			q := &op.st.q[op.class]
			for j := range q.head {
				if q.head[j].seq == op.seq {
					q.head[j].e = op.e
				}
			}
		case opDropEntry:
			q := &op.st.q[op.class]
			for j := range q.head {
				if q.head[j].seq == op.seq {
					q.head = append(q.head[:j], q.head[j+1:]...)
					break
				}
			}
			if q.count > 0 {
				op.st.addCount(int(op.class), -1)
			}
			f.stats.Dropped++
		case opDropSite:
			f.clearQueue(op.st)
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
	if f.seenc != nil {
		for _, op := range tx.cache {
			if op.del {
				f.seenc.forget(op.uri)
			} else {
				f.seenc.set(op.uri, op.v)
			}
		}
	}
	for st := range tx.touched {
		f.settle(st, tx.now)
	}
	if f.bloomAuto && f.bloomN > f.bloomCap {
		if err := f.resizeBloom(4 * f.bloomCap); err != nil {
			f.err = fmt.Errorf("%w: %v", ErrBroken, err)
			return f.err
		}
	}
	return nil
}

func (f *Frontier) applyAdd(op *txOp) {
	st := op.st
	q := &st.q[op.class]
	unloaded := st.unloaded(int(op.class))
	st.addCount(int(op.class), 1)
	f.stats.Added++
	he := headEntry{seq: op.seq, e: op.e, fresh: op.fresh}
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
		st.addCount(int(fe.class), -1)
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
	f.clearQueue(st)
	return nil
}

// clearQueue is the in-memory part of dropQueue.
func (f *Frontier) clearQueue(st *site) {
	for i := range st.q {
		q := &st.q[i]
		f.stats.Dropped += int64(q.count - st.flyCount(i))
		// Sequence numbers keep growing: a stale Done never deletes a new entry.
		st.setCount(i, 0)
		q.head, q.from = nil, q.headSeq
	}
	st.epoch++
	st.dirty = true
}
