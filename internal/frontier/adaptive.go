package frontier

import "github.com/trawl/trawl/internal/store"

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

// adaptiveKnown reports whether e, seen in an earlier cycle, is a plain
// link to a URI adaptive refresh already knows (and so is not queued).
func (f *Frontier) adaptiveKnown(e *Entry) (bool, error) {
	if f.cfg.RefreshMode != RefreshAdaptive || e.URIFlags&adaptiveRevisit != 0 || e.QueueFlags&QFForce != 0 {
		return false, nil
	}
	_, ok, err := f.st.GetRaw(store.SpaceKnown, f.knownKey(e.Site, e.URI))
	return ok, err
}

// rank is the adaptive ranking of a known URI at the current cycle.
func (f *Frontier) rank(k KnownURI) float64 {
	age := f.cycle - k.LastCycle
	if age < 1 {
		age = 1
	}
	return f.cfg.Score(k) * float64(age)
}
