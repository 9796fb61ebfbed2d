package frontier

import (
	"fmt"
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

// age is the number of minor cycles since a known URI was last fetched, at
// least 1: its score times its age is its adaptive ranking.
func (f *Frontier) age(k KnownURI) int64 {
	last := k.LastTick
	if last == 0 { // a record from before LastTick
		last = k.LastCycle * int64(f.ticksPerCycle())
	}
	return max(f.tick()-last, 1)
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

// topKnown ranks the known URIs of one site (each scored once) into buf
// and returns the ones to reschedule, best first: at most limit, which is
// coverage_max_pct of them or coverage_min, whichever is more.
func (f *Frontier) topKnown(known []KnownURI, buf []Ranked) (taken []Ranked, limit int) {
	buf = buf[:0]
	for _, k := range known {
		s := f.cfg.Score(k)
		buf = append(buf, Ranked{KnownURI: k, Score: s, Rank: s * float64(f.age(k))})
	}
	sort.SliceStable(buf, func(i, j int) bool { return buf[i].Rank > buf[j].Rank })
	limit = max(len(known)*f.cfg.Adaptive.CoverageMaxPct/100, f.cfg.Adaptive.CoverageMin)
	return buf[:min(limit, len(buf))], limit
}

// AdaptiveCause says which rescheduling made an AdaptiveSite.
type AdaptiveCause uint8

// Causes of adaptive rescheduling.
const (
	CauseRefresh AdaptiveCause = iota // a refresh cycle started (Refresh)
	CauseMinor                        // a minor refresh cycle started (Reschedule)
	CauseSub                          // a subcollection's round started (RefreshSub)
)

func (c AdaptiveCause) String() string {
	switch c {
	case CauseRefresh:
		return "refresh"
	case CauseMinor:
		return "minor"
	case CauseSub:
		return "subrefresh"
	}
	return fmt.Sprintf("cause(%d)", uint8(c))
}

// Ranked is a known URI as adaptive rescheduling ranked it.
type Ranked struct {
	KnownURI
	Score float64 // Config.Score of the URI
	Rank  float64 // Score times the minor cycles since its last fetch
	// StillQueued is set by a minor cycle (CauseMinor) for a URI it took
	// that is still queued from before: it is not queued a second time.
	StillQueued bool
}

// AdaptiveSite is what adaptive rescheduling decided for one site: of the
// Known URIs it ranked (those of the subcollection, for CauseSub; those
// past dbswitch go to the clean-site pass instead), it took Taken, best
// ranked first, at most Limit (coverage_min, coverage_max_pct).
type AdaptiveSite struct {
	Cause AdaptiveCause
	Sub   string // the subcollection (CauseSub)
	Cycle int64  // the refresh cycle
	Minor int    // the minor cycle in it (0 at a refresh cycle's start)
	Site  string
	Known int
	Limit int
	Taken []Ranked // valid only during the Config.OnAdaptive call
}

// decided hands one site's decision to Config.OnAdaptive.
func (f *Frontier) decided(cause AdaptiveCause, sub string, known []KnownURI, limit int, taken []Ranked) {
	if f.cfg.OnAdaptive == nil || len(known) == 0 {
		return
	}
	f.cfg.OnAdaptive(AdaptiveSite{Cause: cause, Sub: sub, Cycle: f.cycle, Minor: f.minor, Site: known[0].Site, Known: len(known), Limit: limit, Taken: taken})
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
		known  []KnownURI
		ranked []Ranked
		batch  []Entry
		cur    string
		total  int
	)
	finish := func() error {
		if len(known) == 0 {
			return nil
		}
		taken, limit := f.topKnown(known, ranked)
		ranked = taken[:0]
		for i := range taken {
			k := &taken[i]
			q, err := f.queuedNow(k.Site, k.URI)
			if err != nil {
				return err
			}
			k.StillQueued = q
		}
		f.decided(CauseMinor, "", known, limit, taken)
		for _, k := range taken {
			if !k.StillQueued {
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
