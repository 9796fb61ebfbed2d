package crawlpipe

import (
	"net/url"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/trawl/trawl/internal/config"
	"github.com/trawl/trawl/internal/extract"
	"github.com/trawl/trawl/internal/fetch"
	"github.com/trawl/trawl/internal/frontier"
	"github.com/trawl/trawl/internal/store"
	"github.com/trawl/trawl/internal/urls"
)

// Sitemaps, change frequencies and the adaptive score.
//
// A sitemap (or feed) is fetched by FeedFetcher, the collection's fetcher
// without the allowed_types check: a sitemap is application/xml or
// text/plain, which allowed_types is not meant to reject (it says which
// documents are stored). What a sitemap says about each URL it lists
// (changefreq, priority) is kept in the crawl store's metadata space under
//
//	'm' "sitemap/" collection 0x00 uri -> [1, changefreq code, priority*100 or 255]
//
// in the batch of the sitemap's own crawl step, and read by the adaptive
// score (frontier.Config.Score) when a refresh cycle ranks known URIs.

const sitemapMetaPrefix = "sitemap/"

// changefreq codes; 0 is "not given".
var changeFreqs = [...]string{"", "always", "hourly", "daily", "weekly", "monthly", "yearly", "never"}

func changeFreqCode(s string) byte {
	for i, f := range changeFreqs {
		if i > 0 && f == s {
			return byte(i)
		}
	}
	return 0
}

// SitemapEntry is what a sitemap said about one URI it lists.
type SitemapEntry struct {
	URI        string
	ChangeFreq string  // lower case, "" when absent
	Priority   float64 // 0..1, -1 when absent
}

func sitemapMetaKey(collection, uri string) string {
	return sitemapMetaPrefix + collection + "\x00" + uri
}

func encodeSitemapEntry(e SitemapEntry) []byte {
	p := byte(255)
	if e.Priority >= 0 && e.Priority <= 1 {
		p = byte(e.Priority*100 + 0.5)
	}
	return []byte{1, changeFreqCode(e.ChangeFreq), p}
}

func decodeSitemapEntry(uri string, b []byte) (SitemapEntry, bool) {
	if len(b) != 3 || b[0] != 1 || int(b[1]) >= len(changeFreqs) {
		return SitemapEntry{}, false
	}
	e := SitemapEntry{URI: uri, ChangeFreq: changeFreqs[b[1]], Priority: -1}
	if b[2] <= 100 {
		e.Priority = float64(b[2]) / 100
	}
	return e, true
}

// SitemapInfo returns what the sitemaps of collection said about uri.
func SitemapInfo(st Store, collection, uri string) (SitemapEntry, bool, error) {
	b, ok, err := st.Meta(sitemapMetaKey(collection, uri))
	if err != nil || !ok {
		return SitemapEntry{}, false, err
	}
	e, ok := decodeSitemapEntry(uri, b)
	return e, ok, nil
}

// PutSitemapInfo writes the entries a sitemap step found into its batch.
func PutSitemapInfo(b *store.Batch, collection string, es []SitemapEntry) error {
	for _, e := range es {
		if e.ChangeFreq == "" && e.Priority < 0 {
			continue
		}
		if err := b.PutMeta(sitemapMetaKey(collection, e.URI), encodeSitemapEntry(e)); err != nil {
			return err
		}
	}
	return nil
}

// adaptiveScore is the adaptive refresh's ranking of known URIs with the
// rules and weights of MS-FSCCFG 2.2.4.25-26: inverse length (fewer than 10
// slashes), inverse depth (fewer than 10 hops), landing page (ends with "/"
// or index.html, no query), markup MIME type (uri_search_mime), change
// history (changes per fetch) and sitemap (the sitemap_weights value of the
// URI's changefreq, "default" when no sitemap gave one). The store is bound
// by the first crawl step of the collection.
type adaptiveScore struct {
	w      config.WeightsSection
	sw     config.SitemapWeightsSection
	name   string
	markup []string
	st     atomic.Pointer[storeRef]

	mu   sync.Mutex
	memo map[string]float64 // store-derived part per URI (bounded)
}

const scoreMemoMax = 1 << 17

func newAdaptiveScore(name string, eff *config.Effective, markup []string) *adaptiveScore {
	return &adaptiveScore{w: eff.Weights(), sw: eff.SitemapWeights(), name: name, markup: markup, memo: map[string]float64{}}
}

// storeRef holds the Store an adaptiveScore reads.
type storeRef struct{ Store }

func (a *adaptiveScore) bind(st Store) {
	if st != nil && a.st.Load() == nil {
		a.st.Store(&storeRef{st})
	}
}

// changeFreqWeight is the sitemap_weights value of a changefreq.
func (a *adaptiveScore) changeFreqWeight(cf string) float64 {
	switch cf {
	case "always":
		return a.sw.Always
	case "hourly":
		return a.sw.Hourly
	case "daily":
		return a.sw.Daily
	case "weekly":
		return a.sw.Weekly
	case "monthly":
		return a.sw.Monthly
	case "yearly":
		return a.sw.Yearly
	case "never":
		return a.sw.Never
	}
	return a.sw.Default
}

// Score implements frontier.Config.Score.
func (a *adaptiveScore) Score(k frontier.KnownURI) float64 {
	s := 0.0
	if k.Fetches > 0 {
		s += a.w.ChangeHistory * float64(k.Changes) / float64(k.Fetches)
	}
	if k.Hops < 10 {
		s += a.w.InverseDepth * (1 - float64(k.Hops)/10)
	}
	if u, err := url.Parse(k.URI); err == nil {
		if n := strings.Count(u.EscapedPath(), "/"); n < 10 {
			s += a.w.InverseLength * (1 - float64(n)/10)
		}
		if u.RawQuery == "" && (strings.HasSuffix(u.Path, "/") || u.Path == "" || strings.HasSuffix(u.Path, "/index.html")) {
			s += a.w.IsLandingPage
		}
	}
	return s + a.stored(k.URI)
}

// stored is the part of the score read from the crawl store: the sitemap
// rule and the markup rule.
func (a *adaptiveScore) stored(uri string) float64 {
	a.mu.Lock()
	v, ok := a.memo[uri]
	a.mu.Unlock()
	if ok {
		return v
	}
	cf := ""
	st := a.st.Load()
	if st != nil {
		if e, ok, err := SitemapInfo(st, a.name, uri); err == nil && ok {
			cf = e.ChangeFreq
		}
		if rec, ok, err := st.URI(a.name, uri); err == nil && ok && rec.ContentType != "" && fetch.TypeAllowed(a.markup, rec.ContentType) {
			v += a.w.IsMIMEMarkup
		}
	}
	v += a.w.Sitemap * a.changeFreqWeight(cf)
	a.mu.Lock()
	if len(a.memo) >= scoreMemoMax {
		clear(a.memo)
	}
	a.memo[uri] = v
	a.mu.Unlock()
	return v
}

// sitemapOutcome turns a parsed sitemap into the step's links and entries.
func (p *Pipeline) sitemapLinks(out *Outcome, sm *extract.Sitemap) {
	s := out.Job.S
	for _, l := range sm.URLs {
		nu, ok := p.screen(s, l.Loc)
		if !ok {
			continue
		}
		out.Links = append(out.Links, Link{URI: nu.String(), Site: urls.Site(nu)})
		out.SitemapEntries = append(out.SitemapEntries, SitemapEntry{URI: nu.String(), ChangeFreq: l.ChangeFreq, Priority: l.Priority})
	}
}
