package frontier

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/trawl/trawl/internal/store"
)

// SubRefresh is a crawl subcollection (MS-FSCCFG 2.2.4.33) as the
// frontier sees it: the URIs Config.SubOf assigns to it may start their own
// refresh rounds inside the collection's refresh cycle.
type SubRefresh struct {
	Name string
	// Period is the subcollection's own refresh period (its refresh, lower
	// than the collection's); 0 when it has none, so that its rounds start
	// only when asked (RefreshSub, an operator's subcollection refetch).
	Period time.Duration
	Mode   RefreshMode // its refresh_mode
}

// errStopIter ends an iteration early.
var errStopIter = errors.New("frontier: stop")

// subState is the frontier's record of one subcollection's rounds.
type subState struct {
	last  uint64    // the generation its last round started at (0: none yet)
	start time.Time // when its current round started
	retry time.Time // soft mode: when to look again after a postponed round
}

// A subcollection round works through the seen-set: the frontier's
// generation f.gen grows by one at every round of any subcollection, every
// seen-set value records the generation it was written at, and a value
// older than the last round of its URI's subcollection counts as seen in an
// earlier cycle. Nothing else about the collection's cycle changes (the
// cycle number, max_doc per cycle, the clean-site pass).

// staleSeen reports whether a seen-set value written in cycle and at gen is
// from before the current cycle of uri (of site st): before the site's
// refresh cycle, or before the last round of uri's subcollection. mode is
// the refresh mode of whichever started the newer cycle.
func (f *Frontier) staleSeen(cycle int64, gen uint64, st *site, uri string) (bool, RefreshMode) {
	if cycle < st.cycle {
		return true, f.cfg.RefreshMode
	}
	if gen >= f.gen || f.cfg.SubOf == nil {
		return false, f.cfg.RefreshMode
	}
	k := f.cfg.SubOf(uri)
	if k < 0 || k >= len(f.subs) || gen >= f.subs[k].last {
		return false, f.cfg.RefreshMode
	}
	return true, f.cfg.Subs[k].Mode
}

// appendSubs encodes the subcollection state after the global cycle.
func (f *Frontier) appendSubs(v []byte) []byte {
	if f.gen == 0 && len(f.subs) == 0 {
		return v
	}
	v = binary.AppendUvarint(v, f.gen)
	v = binary.AppendUvarint(v, uint64(len(f.subs)))
	for i, s := range f.subs {
		v = store.AppendLP(v, f.cfg.Subs[i].Name)
		v = binary.AppendUvarint(v, s.last)
		v = binary.AppendVarint(v, unixNano(s.start))
	}
	return v
}

// readSubs decodes what appendSubs wrote (nothing in a store written before
// subcollection rounds) and matches it to the configured subcollections by
// name: one the store does not know starts its first round with the
// collection's cycle.
func (f *Frontier) readSubs(r *reader) {
	f.subs = make([]subState, len(f.cfg.Subs))
	for i := range f.subs {
		f.subs[i].start = f.cycleStart
	}
	if r.err != nil || len(r.b) == 0 {
		return
	}
	f.gen = r.uvarint(1<<64 - 1)
	n := r.uvarint(1 << 16)
	for i := uint64(0); i < n && r.err == nil; i++ {
		name := r.str()
		last := r.uvarint(1<<64 - 1)
		start := fromUnixNano(r.varint())
		for k := range f.cfg.Subs {
			if f.cfg.Subs[k].Name == name {
				f.subs[k] = subState{last: last, start: start}
			}
		}
	}
}

// SubRefreshDue returns the subcollections (indexes in Config.Subs) whose
// own refresh period has passed since their round started.
func (f *Frontier) SubRefreshDue(now time.Time) []int {
	var due []int
	for k, s := range f.subs {
		p := f.cfg.Subs[k].Period
		if p > 0 && !now.Before(s.start.Add(p)) && !now.Before(s.retry) {
			due = append(due, k)
		}
	}
	return due
}

// SubRefreshReport says what starting a subcollection round did.
type SubRefreshReport struct {
	Sub         string
	Postponed   bool // soft: the subcollection's URIs are still queued; asked again later
	Seeded      int  // start URIs queued
	Truncated   int  // queued entries dropped (scratch)
	Rescheduled int  // known URIs rescheduled (adaptive)
}

// softRetry is how long a postponed soft round waits before it looks
// again whether the subcollection's queue is empty.
func softRetry(period time.Duration) time.Duration {
	return min(max(period/20, time.Second), 30*time.Second)
}

// RefreshSub starts a new round of subcollection k at now: its URIs count
// as not seen, and its refresh_mode decides what happens to them:
//
//   - scratch: its queued entries are dropped (not those in flight), then
//     its start URIs are queued.
//   - append, prepend: its start URIs are queued behind, or in front of,
//     what is queued.
//   - soft: while any of its URIs is queued or in flight the round is
//     postponed (Postponed; SubRefreshDue asks again a little later); then
//     its start URIs are queued.
//   - adaptive: its start URIs are queued and its known URIs rescheduled
//     by score, per site, as at a refresh cycle.
//
// seeds are the collection's start URIs; only those of subcollection k are
// queued. With force the round starts even in soft mode (an operator's
// refetch). In bloom-only mode (no wqfilter) the filter cannot forget a
// subcollection: its start URIs are queued forcibly, and links already
// seen wait for the collection's cycle.
func (f *Frontier) RefreshSub(now time.Time, k int, seeds []Entry, force bool) (SubRefreshReport, error) {
	if f.err != nil {
		return SubRefreshReport{}, f.err
	}
	if f.txOpen {
		return SubRefreshReport{}, ErrTxOpen
	}
	if k < 0 || k >= len(f.cfg.Subs) || f.cfg.SubOf == nil {
		return SubRefreshReport{}, fmt.Errorf("frontier: no subcollection %d", k)
	}
	sub := f.cfg.Subs[k]
	rep := SubRefreshReport{Sub: sub.Name}
	var queued []subQueued
	if sub.Mode == RefreshScratch || (sub.Mode == RefreshSoft && !force) {
		var pending bool
		var err error
		if queued, pending, err = f.subQueue(k, sub.Mode == RefreshSoft); err != nil {
			return rep, err
		}
		if pending {
			f.subs[k].retry = now.Add(softRetry(sub.Period))
			rep.Postponed = true
			return rep, nil
		}
	}

	// The round starts: every seen-set value of its URIs is older now.
	f.gen++
	f.subs[k] = subState{last: f.gen, start: now}
	b := f.st.NewBatch()
	if err := f.writeGlobal(b); err != nil {
		b.Discard()
		return rep, err
	}
	if err := f.commit(b); err != nil {
		return rep, err
	}
	if err := f.dropSubQueued(now, queued, &rep); err != nil {
		return rep, err
	}
	f.stats.Dropped -= int64(rep.Truncated) // truncation is not a drop

	// Its start URIs.
	var batch []Entry
	for _, e := range seeds {
		if f.cfg.SubOf(e.URI) != k {
			continue
		}
		if e.URIFlags&(URIFStartURI|URIFStartURIFeed) == 0 {
			e.URIFlags |= URIFStartURI
		}
		if sub.Mode == RefreshPrepend {
			e.QueueFlags |= QFPrepend
		}
		if !f.cfg.WQFilter {
			e.QueueFlags |= QFForce
		}
		batch = append(batch, e)
	}
	if err := f.addChunks(now, batch, &rep.Seeded); err != nil {
		return rep, err
	}
	if sub.Mode != RefreshAdaptive {
		return rep, nil
	}
	batch, err := f.subRescheduled(k, sub.Name)
	if err != nil {
		return rep, err
	}
	// Queued after the iteration: Add reads the store the iterator walks.
	return rep, f.addChunks(now, batch, &rep.Rescheduled)
}

// subQueued is a queued entry of a subcollection.
type subQueued struct {
	site  string
	class uint8
	seq   uint64
}

// subQueue returns the queued entries of subcollection k, site by site
// (in flight ones included: they are still in the queue space until
// done); with soft, only whether there is any (pending).
func (f *Frontier) subQueue(k int, soft bool) (queued []subQueued, pending bool, err error) {
	err = f.st.IterRaw(store.SpaceQueue, f.coll, func(key, v []byte) error {
		e, _, err := decodeEntry(v)
		if err != nil || f.cfg.SubOf(e.URI) != k {
			return err
		}
		if soft {
			pending = true
			return errStopIter
		}
		rest := key[len(f.coll):]
		site, tail, err := store.ReadLP(rest)
		if err != nil || len(tail) != 9 {
			return fmt.Errorf("%w: queue key", errCorrupt)
		}
		queued = append(queued, subQueued{site: site, class: tail[0], seq: binary.BigEndian.Uint64(tail[1:])})
		return nil
	})
	if err != nil && !errors.Is(err, errStopIter) {
		return nil, false, err
	}
	return queued, pending, nil
}

// dropSubQueued drops the queued entries of a subcollection's scratch
// round (not those in flight), a chunk per transaction.
func (f *Frontier) dropSubQueued(now time.Time, queued []subQueued, rep *SubRefreshReport) error {
	for len(queued) > 0 {
		n := min(len(queued), refreshChunk)
		tx, err := f.Begin(now)
		if err != nil {
			return err
		}
		for _, q := range queued[:n] {
			st, err := f.getSite(q.site)
			if err != nil {
				tx.Discard()
				return err
			}
			if int(q.class) >= len(st.q) || st.isFlying(int(q.class), q.seq) {
				continue
			}
			if err := tx.b.DeleteRaw(store.SpaceQueue, f.queueKey(st.name, q.class, q.seq)); err != nil {
				tx.Discard()
				return err
			}
			tx.ops = append(tx.ops, txOp{kind: opDropEntry, st: st, class: q.class, seq: q.seq})
			tx.touched[st] = true
			rep.Truncated++
		}
		if err := tx.Commit(); err != nil {
			return err
		}
		queued = queued[n:]
	}
	return nil
}

// addChunks queues entries refreshChunk at a time, counting the queued
// ones in counter.
func (f *Frontier) addChunks(now time.Time, entries []Entry, counter *int) error {
	for len(entries) > 0 {
		n := min(len(entries), refreshChunk)
		r, err := f.Add(now, entries[:n]...)
		*counter += r.Queued
		entries = entries[n:]
		if err != nil {
			return err
		}
	}
	return nil
}

// subRescheduled returns the known URIs of subcollection k (named name)
// that an adaptive round reschedules, best first per site.
func (f *Frontier) subRescheduled(k int, name string) ([]Entry, error) {
	var batch []Entry
	var cur string
	var known []KnownURI
	var ranked []Ranked
	finish := func() {
		if len(known) > 0 {
			taken, limit := f.topKnown(known, ranked)
			ranked = taken[:0]
			f.decided(CauseSub, name, known, limit, taken)
			for _, ku := range taken {
				batch = append(batch, Entry{URI: ku.URI, Site: ku.Site, Hops: ku.Hops, Level: ku.Level, URIFlags: URIFRescheduled})
			}
		}
		known = known[:0]
	}
	err := f.st.IterRaw(store.SpaceKnown, f.coll, func(key, v []byte) error {
		site, rest, err := store.ReadLP(key[len(f.coll):])
		if err != nil {
			return err
		}
		uri := string(rest)
		if f.cfg.SubOf(uri) != k {
			return nil
		}
		ku, err := decodeKnown(site, uri, v)
		if err != nil {
			return err
		}
		if site != cur {
			finish()
			cur = site
		}
		known = append(known, ku)
		return nil
	})
	if err != nil {
		return nil, err
	}
	finish()
	return batch, nil
}

// SubIndex returns the index in Config.Subs of the subcollection named
// name, or -1.
func (f *Frontier) SubIndex(name string) int {
	for k, s := range f.cfg.Subs {
		if s.Name == name {
			return k
		}
	}
	return -1
}
