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

	// 1. Every site's state (in memory, and on disk for the others).
	b := f.st.NewBatch()
	if err := f.writeGlobal(b); err != nil {
		b.Discard()
		return rep, err
	}
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
		b.Discard()
		return rep, err
	}
	sort.Slice(all, func(i, j int) bool { return all[i].name < all[j].name })
	for _, st := range all {
		switch f.cfg.RefreshMode {
		case RefreshScratch:
			rep.Truncated += st.queued() - len(st.fly)
			if st.queued() > 0 {
				if err := f.dropQueue(b, st); err != nil {
					b.Discard()
					return rep, err
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
			return rep, err
		}
		if b.Len() > maxBatchBytes {
			if err := f.commit(b); err != nil {
				return rep, err
			}
			b = f.st.NewBatch()
		}
	}
	if err := f.commit(b); err != nil {
		return rep, err
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

	// 2. Seeds.
	var batch []Entry
	flush := func(counter *int) error {
		if len(batch) == 0 {
			return nil
		}
		r, err := f.Add(now, batch...)
		*counter += r.Queued
		batch = batch[:0]
		return err
	}
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
				return rep, err
			}
			if st.cycle < f.cycle {
				if deferred == nil {
					deferred = f.st.NewBatch()
				}
				k := append(f.deferredPrefix(st.name), e.URI...)
				if err := deferred.SetRaw(store.SpaceFrontier, k, encodeEntry(&e, 0)); err != nil {
					deferred.Discard()
					return rep, err
				}
				rep.Deferred++
				continue
			}
		}
		batch = append(batch, e)
		if len(batch) >= refreshChunk {
			if err := flush(&rep.Seeded); err != nil {
				return rep, err
			}
		}
	}
	if err := flush(&rep.Seeded); err != nil {
		return rep, err
	}
	if deferred != nil {
		if err := f.commit(deferred); err != nil {
			return rep, err
		}
	}

	// 3. Known URIs: clean-site pass and adaptive rescheduling, site by site.
	if f.cfg.DBSwitch <= 0 && f.cfg.RefreshMode != RefreshAdaptive {
		return rep, nil
	}
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
			batch = append(batch, Entry{URI: k.URI, Site: k.Site, Hops: k.Hops, Level: k.Level, URIFlags: URIFRescheduled})
			if len(batch) >= refreshChunk {
				if err := flush(&rep.Rescheduled); err != nil {
					return err
				}
			}
		}
		known = known[:0]
		return nil
	}
	var clean []Entry
	err = f.st.IterRaw(store.SpaceKnown, f.coll, func(k, v []byte) error {
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
				if err := del.DeleteRaw(store.SpaceKnown, k); err != nil {
					return err
				}
				if f.seenc != nil {
					f.seenc.forget(uri)
				}
				if err := del.DeleteRaw(store.SpaceSeen, f.seenKey(uri)); err != nil {
					return err
				}
			} else {
				clean = append(clean, Entry{URI: uri, Site: site, Hops: ku.Hops, Level: ku.Level, URIFlags: URIFCleanSite})
			}
			return nil
		}
		known = append(known, ku)
		return nil
	})
	if err == nil {
		err = finishSite()
	}
	if err == nil {
		err = flush(&rep.Rescheduled)
	}
	if err != nil {
		del.Discard()
		return rep, err
	}
	if err := f.commit(del); err != nil {
		return rep, err
	}
	for len(clean) > 0 {
		n := min(len(clean), refreshChunk)
		r, err := f.Add(now, clean[:n]...)
		rep.CleanSite += r.Queued
		if err != nil {
			return rep, err
		}
		clean = clean[n:]
	}
	return rep, nil
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
