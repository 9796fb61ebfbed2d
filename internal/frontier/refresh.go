package frontier

import (
	"fmt"
	"sort"
	"time"

	"github.com/trawl/trawl/internal/store"
)

// RefreshReport says what starting a refresh cycle did.
type RefreshReport struct {
	Cycle       int64
	Seeded      int // start URIs queued
	Deferred    int // start URIs held for sites still finishing the previous cycle (soft)
	Truncated   int // queued entries dropped (scratch)
	CleanSite   int // known URIs not crawled for dbswitch cycles, queued to be checked
	Expired     int // known URIs not crawled for dbswitch cycles, handed to expired (dbswitch_delete)
	Rescheduled int // known URIs rescheduled (adaptive)
}

// maxBatchBytes bounds one batch of a refresh.
const maxBatchBytes = 4 << 20

// refreshChunk is how many entries one refresh transaction queues.
const refreshChunk = 4096

// Refresh starts the next refresh cycle at now. seeds are the start URIs
// (from start_uris and start_uri_files). refresh_mode decides what happens
// to the queues:
//
//   - scratch: every queue is truncated, then the seeds are queued.
//   - append: the seeds are queued after what is already queued.
//   - prepend: the seeds are queued in front of what is already queued.
//   - soft: a site whose queue is empty (or that reached max_doc) starts the
//     new cycle now; a site still working keeps its cycle and gets its seeds
//     once its queue is empty.
//   - adaptive: the seeds are appended, and each site's known URIs are
//     rescheduled, best score first, between adaptive coverage_min and
//     coverage_max_pct of them; they are served in refresh_quota proportion
//     to new URIs.
//
// In every mode the clean-site pass looks at the known URIs not crawled for
// more than dbswitch cycles: with dbswitch_delete they are handed to expired
// (which deletes them from the store and the index) and forgotten, otherwise
// they are queued with URIF_CLEANSITE so they get checked. expired may be nil.
//
// A refresh writes several batches; after a crash in the middle the cycle
// has started and the rest of the work is done by the next refresh.
func (f *Frontier) Refresh(now time.Time, seeds []Entry, expired func(site, uri string) error) (RefreshReport, error) {
	if f.err != nil {
		return RefreshReport{}, f.err
	}
	if f.txOpen {
		return RefreshReport{}, ErrTxOpen
	}
	f.cycle++
	f.cycleStart = now
	f.minor = 0
	for k := range f.subs {
		f.subs[k].start, f.subs[k].retry = now, time.Time{} // a cycle starts every subcollection's round too
	}
	rep := RefreshReport{Cycle: f.cycle}
	if f.bloom != nil && !f.cfg.WQFilter {
		f.bloom.reset()
	}
	if f.seenc != nil {
		f.seenc.reset() // every entry is of an earlier cycle now
	}
	if err := f.refreshSites(now, &rep); err != nil {
		return rep, err
	}
	if err := f.refreshSeeds(now, seeds, &rep); err != nil {
		return rep, err
	}
	if f.cfg.DBSwitch <= 0 && f.cfg.RefreshMode != RefreshAdaptive {
		return rep, nil
	}
	return rep, f.refreshKnown(now, expired, &rep)
}

// refreshSites is the first step of Refresh: every site's state (in
// memory, and on disk for the others) enters the new cycle as the refresh
// mode says.
func (f *Frontier) refreshSites(now time.Time, rep *RefreshReport) error {
	b := f.st.NewBatch()
	if err := f.writeGlobal(b); err != nil {
		b.Discard()
		return err
	}
	all, err := f.allSites()
	if err != nil {
		b.Discard()
		return err
	}
	for _, st := range all {
		switch f.cfg.RefreshMode {
		case RefreshScratch:
			rep.Truncated += st.queued() - len(st.fly)
			if st.queued() > 0 {
				if err := f.dropQueue(b, st); err != nil {
					b.Discard()
					return err
				}
			}
			f.refreshSite(st)
		case RefreshSoft:
			if (st.queued() == 0 && len(st.fly) == 0) || f.capped(st) {
				f.refreshSite(st)
			}
		default:
			f.refreshSite(st)
		}
		if err := f.writeMeta(b, st); err != nil {
			b.Discard()
			return err
		}
		if b.Len() > maxBatchBytes {
			if err := f.commit(b); err != nil {
				return err
			}
			b = f.st.NewBatch()
		}
	}
	if err := f.commit(b); err != nil {
		return err
	}
	f.stats.Dropped -= int64(rep.Truncated) // truncation is not a drop
	for _, st := range all {
		if f.sites[st.name] == nil && (st.queued() > 0 || st.blockedUntil.After(now)) {
			f.sites[st.name] = st
		}
		if f.sites[st.name] == st {
			f.settle(st, now)
		}
	}
	return nil
}

// allSites returns every site of the collection by name: those in memory
// and those only on disk.
func (f *Frontier) allSites() ([]*site, error) {
	all := make([]*site, 0, len(f.sites))
	for _, st := range f.sites {
		all = append(all, st)
	}
	sp := f.metaKey('s', "")
	err := f.st.IterRaw(store.SpaceFrontier, sp, func(k, v []byte) error {
		name := string(k[len(sp):])
		if f.sites[name] != nil {
			return nil
		}
		st, err := decodeSiteMeta(name, v, f.classes)
		if err != nil {
			return fmt.Errorf("frontier: site %q: %w", name, err)
		}
		all = append(all, st)
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(all, func(i, j int) bool { return all[i].name < all[j].name })
	return all, nil
}

// refreshAdder queues the entries of a refresh refreshChunk at a time.
type refreshAdder struct {
	f     *Frontier
	now   time.Time
	batch []Entry
}

// add queues e, counting the queued entries in counter.
func (a *refreshAdder) add(e Entry, counter *int) error {
	a.batch = append(a.batch, e)
	if len(a.batch) >= refreshChunk {
		return a.flush(counter)
	}
	return nil
}

// flush queues what add holds.
func (a *refreshAdder) flush(counter *int) error {
	if len(a.batch) == 0 {
		return nil
	}
	r, err := a.f.Add(a.now, a.batch...)
	*counter += r.Queued
	a.batch = a.batch[:0]
	return err
}

// refreshSeeds is the second step of Refresh: the seeds are queued, or
// held for the sites still in their previous cycle (soft).
func (f *Frontier) refreshSeeds(now time.Time, seeds []Entry, rep *RefreshReport) error {
	add := &refreshAdder{f: f, now: now}
	var deferred *store.Batch
	for _, e := range seeds {
		if e.URIFlags&(URIFStartURI|URIFStartURIFeed) == 0 {
			e.URIFlags |= URIFStartURI
		}
		if f.cfg.RefreshMode == RefreshPrepend {
			e.QueueFlags |= QFPrepend
		}
		if f.cfg.RefreshMode == RefreshSoft && e.Site != "" {
			st, err := f.getSite(e.Site)
			if err != nil {
				return err
			}
			if st.cycle < f.cycle {
				if deferred == nil {
					deferred = f.st.NewBatch()
				}
				k := append(f.deferredPrefix(st.name), e.URI...)
				if err := deferred.SetRaw(store.SpaceFrontier, k, encodeEntry(&e, 0)); err != nil {
					deferred.Discard()
					return err
				}
				rep.Deferred++
				continue
			}
		}
		if err := add.add(e, &rep.Seeded); err != nil {
			return err
		}
	}
	if err := add.flush(&rep.Seeded); err != nil {
		return err
	}
	if deferred != nil {
		return f.commit(deferred)
	}
	return nil
}

// refreshKnown is the third step of Refresh: the clean-site pass and the
// adaptive rescheduling over the known URIs, site by site.
func (f *Frontier) refreshKnown(now time.Time, expired func(site, uri string) error, rep *RefreshReport) error {
	add := &refreshAdder{f: f, now: now}
	del := f.st.NewBatch()
	var cur string
	var known []KnownURI
	var ranked []Ranked
	finishSite := func() error {
		if f.cfg.RefreshMode != RefreshAdaptive || len(known) == 0 {
			known = known[:0]
			return nil
		}
		taken, limit := f.topKnown(known, ranked)
		ranked = taken[:0]
		f.decided(CauseRefresh, "", known, limit, taken)
		for _, k := range taken {
			if err := add.add(Entry{URI: k.URI, Site: k.Site, Hops: k.Hops, Level: k.Level, URIFlags: URIFRescheduled}, &rep.Rescheduled); err != nil {
				return err
			}
		}
		known = known[:0]
		return nil
	}
	var clean []Entry
	err := f.st.IterRaw(store.SpaceKnown, f.coll, func(k, v []byte) error {
		site, rest, err := store.ReadLP(k[len(f.coll):])
		if err != nil {
			return err
		}
		uri := string(rest)
		ku, err := decodeKnown(site, uri, v)
		if err != nil {
			return err
		}
		if site != cur {
			if err := finishSite(); err != nil {
				return err
			}
			cur = site
		}
		if f.cfg.DBSwitch > 0 && f.cycle-1-ku.LastCycle > int64(f.cfg.DBSwitch) {
			if f.cfg.DBSwitchDelete {
				if expired != nil {
					if err := expired(site, uri); err != nil {
						return err
					}
				}
				rep.Expired++
				return f.forgetKnown(del, k, uri)
			}
			clean = append(clean, Entry{URI: uri, Site: site, Hops: ku.Hops, Level: ku.Level, URIFlags: URIFCleanSite})
			return nil
		}
		known = append(known, ku)
		return nil
	})
	if err == nil {
		err = finishSite()
	}
	if err == nil {
		err = add.flush(&rep.Rescheduled)
	}
	if err != nil {
		del.Discard()
		return err
	}
	if err := f.commit(del); err != nil {
		return err
	}
	for len(clean) > 0 {
		n := min(len(clean), refreshChunk)
		r, err := f.Add(now, clean[:n]...)
		rep.CleanSite += r.Queued
		if err != nil {
			return err
		}
		clean = clean[n:]
	}
	return nil
}

// forgetKnown forgets a known URI that expired (dbswitch_delete): its
// known record (key k) and its seen entry are deleted in del.
func (f *Frontier) forgetKnown(del *store.Batch, k []byte, uri string) error {
	if err := del.DeleteRaw(store.SpaceKnown, k); err != nil {
		return err
	}
	if f.seenc != nil {
		f.seenc.forget(uri)
	}
	return del.DeleteRaw(store.SpaceSeen, f.seenKey(uri))
}

// softRefreshSite starts the new cycle of a site whose queue just emptied
// (soft mode) and queues the start URIs held for it.
func (f *Frontier) softRefreshSite(tx *Tx, st *site) error {
	f.refreshSite(st)
	p := f.deferredPrefix(st.name)
	var seeds []Entry
	err := f.st.IterRaw(store.SpaceFrontier, p, func(k, v []byte) error {
		e, _, err := decodeEntry(v)
		if err != nil {
			return err
		}
		seeds = append(seeds, e)
		return tx.b.DeleteRaw(store.SpaceFrontier, k)
	})
	if err != nil {
		return err
	}
	for _, e := range seeds {
		if err := tx.queue(e, false); err != nil {
			return err
		}
	}
	return nil
}
