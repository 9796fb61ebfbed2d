package frontier

import (
	"sort"
	"time"

	"github.com/trawl/trawl/internal/store"
)

// Adaptive refresh (refresh_mode adaptive, MS-FSCCFG 2.2.4.24-26).
//
// A URI known from an earlier cycle is revisited when its score says so
// (Refresh reschedules the best of each site's known URIs), not because a
// page links to it again: in adaptive mode a plain link to a known URI is
// not queued. Entries that are revisits by nature still are: start URIs,
// forced and rescheduled entries, the clean-site pass, sitemaps and
// redirect targets. The ranking is Config.Score times the number of cycles
// since the URI was last fetched, so that a URI with half the score of
// another is revisited about half as often, rather than never.

// Flags (wire values, MS-FSCMT 2.2.2.2.1 and trawl's sitemap flag) of
// entries adaptive refresh queues although their URI is known.
const (
	uriFRedirects   uint32 = 0x00000020 | 0x00000040 | 0x00080000 | 0x00000200
	uriFSitemap     uint32 = 0x10000000
	adaptiveRevisit        = URIFStartURI | URIFForce | URIFStartURIFeed | URIFRescheduled | URIFCleanSite | uriFSitemap | uriFRedirects
)

// adaptiveKnown reports whether e, seen in an earlier cycle whose refresh
// had mode, is a plain link to a URI adaptive refresh already knows (and so
// is not queued).
func (f *Frontier) adaptiveKnown(e *Entry, mode RefreshMode) (bool, error) {
	if mode != RefreshAdaptive || e.URIFlags&adaptiveRevisit != 0 || e.QueueFlags&QFForce != 0 {
		return false, nil
	}
	_, ok, err := f.st.GetRaw(store.SpaceKnown, f.knownKey(e.Site, e.URI))
	return ok, err
}

// rank is the adaptive ranking of a known URI at the current (minor)
// cycle: its score times the minor cycles since its last fetch.
func (f *Frontier) rank(k KnownURI) float64 {
	last := k.LastTick
	if last == 0 { // a record from before LastTick
		last = k.LastCycle * int64(f.ticksPerCycle())
	}
	age := f.tick() - last
	if age < 1 {
		age = 1
	}
	return f.cfg.Score(k) * float64(age)
}

// Minor refresh cycles (adaptive refresh_count): the refresh period is
// divided into RefreshCount equal minor cycles; at the start of each but
// the first (which is the refresh itself) Reschedule queues each site's best
// known URIs again, as Refresh does, whether or not they were fetched in
// this cycle already, except those still queued. Ages count minor cycles.

// minorLen is the length of a minor refresh cycle (0: none).
func (f *Frontier) minorLen() time.Duration {
	n := f.cfg.Adaptive.RefreshCount
	if f.cfg.RefreshMode != RefreshAdaptive || n <= 1 {
		return 0
	}
	return f.cfg.Refresh / time.Duration(n)
}

// minorIndex is the minor cycle of the current cycle that now falls in.
func (f *Frontier) minorIndex(now time.Time) int {
	l := f.minorLen()
	if l <= 0 || now.Before(f.cycleStart) {
		return 0
	}
	return int(min(int64(now.Sub(f.cycleStart)/l), int64(f.cfg.Adaptive.RefreshCount-1)))
}

// tick is the current minor cycle counted over the whole crawl.
func (f *Frontier) tick() int64 {
	return f.cycle*int64(max(1, f.ticksPerCycle())) + int64(f.minor)
}

func (f *Frontier) ticksPerCycle() int {
	if f.minorLen() <= 0 {
		return 1
	}
	return f.cfg.Adaptive.RefreshCount
}

// MinorDue reports whether a minor refresh cycle started since the last
// rescheduling (adaptive refresh_count).
func (f *Frontier) MinorDue(now time.Time) bool {
	return f.minorLen() > 0 && f.minorIndex(now) > f.minor
}

// topKnown returns the known URIs of one site to reschedule: the best
// ranked, between coverage_min and coverage_max_pct of them.
func (f *Frontier) topKnown(known []KnownURI) []KnownURI {
	sort.SliceStable(known, func(i, j int) bool { return f.rank(known[i]) > f.rank(known[j]) })
	n := len(known) * f.cfg.Adaptive.CoverageMaxPct / 100
	n = max(n, f.cfg.Adaptive.CoverageMin)
	return known[:min(n, len(known))]
}

// queuedNow reports whether uri is queued (or in flight) in its site's
// current cycle.
func (f *Frontier) queuedNow(site, uri string) (bool, error) {
	if !f.cfg.WQFilter {
		return false, nil
	}
	v, ok, err := f.st.GetRaw(store.SpaceSeen, f.seenKey(uri))
	if err != nil || !ok {
		return false, err
	}
	sv, ok := decodeSeen(v)
	if !ok {
		return false, nil
	}
	st, err := f.getSite(site)
	if err != nil {
		return false, err
	}
	if stale, _ := f.staleSeen(sv.cycle, sv.gen, st, uri); stale {
		return false, nil
	}
	_, ok, err = f.st.GetRaw(store.SpaceQueue, f.queueKey(st.name, sv.class, sv.seq))
	return ok, err
}

// Reschedule starts the minor refresh cycle now falls in: each site's best
// known URIs that are not queued are queued again (URIF_RESCHEDULED, served
// in refresh_quota proportion to new URIs). It returns how many.
func (f *Frontier) Reschedule(now time.Time) (int, error) {
	if f.err != nil {
		return 0, f.err
	}
	if f.txOpen {
		return 0, ErrTxOpen
	}
	f.minor = f.minorIndex(now)
	var (
		known []KnownURI
		batch []Entry
		cur   string
		total int
	)
	finish := func() error {
		if len(known) == 0 {
			return nil
		}
		for _, k := range f.topKnown(known) {
			q, err := f.queuedNow(k.Site, k.URI)
			if err != nil {
				return err
			}
			if !q {
				batch = append(batch, Entry{URI: k.URI, Site: k.Site, Hops: k.Hops, Level: k.Level, URIFlags: URIFRescheduled, QueueFlags: QFForce})
			}
		}
		known = known[:0]
		return nil
	}
	err := f.st.IterRaw(store.SpaceKnown, f.coll, func(k, v []byte) error {
		site, rest, err := store.ReadLP(k[len(f.coll):])
		if err != nil {
			return err
		}
		ku, err := decodeKnown(site, string(rest), v)
		if err != nil {
			return err
		}
		if site != cur {
			if err := finish(); err != nil {
				return err
			}
			cur = site
		}
		known = append(known, ku)
		return nil
	})
	if err == nil {
		err = finish()
	}
	if err != nil {
		return total, err
	}
	// Queued after the iteration: Add reads the store the iterator walks.
	for len(batch) > 0 {
		n := min(len(batch), refreshChunk)
		r, err := f.Add(now, batch[:n]...)
		batch = batch[n:]
		total += r.Queued
		if err != nil {
			return total, err
		}
	}
	return total, nil
}
