package stats

import (
	"maps"
	"math"
	"sort"
	"strconv"
	"strings"
)

// This file maps the crawl engine's counters (nodesched.Counters: cumulative
// integers by name, per collection and per crawl site) onto the schemas,
// and keeps the series of a running crawler (Tracker).

// AddSummary merges n updates of a continuous attribute at once: their sum,
// smallest and largest value. It does nothing when n <= 0.
func (r *Record) AddSummary(name string, sum, min, max float64, n int64) error {
	i, err := r.lookup(name, Continuous)
	if err != nil || n <= 0 {
		return err
	}
	s := &r.slots[i]
	if s.n == 0 || min < s.min {
		s.min = min
	}
	if s.n == 0 || max > s.max {
		s.max = max
	}
	s.cur += sum
	s.n += n
	return nil
}

// counterCounts are the continuous attributes that count events: each
// event is one update of 1.
var counterCounts = []struct{ attr, counter string }{
	{"Processed", "processed"}, {"Downloaded", "fetched"}, {"Stored", "stored"},
	{"Modified", "modified"}, {"Deleted", "deleted"}, {"Unchanged", "unchanged"},
	{"Retries", "retries"}, {"HasLastMod", "has_lastmod"}, {"HasETag", "has_etag"},
	{"HasSitemap", "robots_sitemaps"}, {"NodeSchedulerFwd", "uris_to_multinode"},
	{"LocalFwd", "links_other"}, {"Local", "links_local"},
	// The collection's feeding (2.2.4.10); a site record has none of them.
	{"PPAdded", "pp_added"}, {"PPModified", "pp_modified"}, {"PPFed", "pp_fed"},
	{"PPSucceeded", "pp_succeeded"}, {"PPFailed", "pp_failed"}, {"PPDeleted", "pp_deleted"},
}

// URISkipCounters and DocSkipCounters map the skip codes of MS-FSCADM
// 2.2.3.1 and 2.2.3.2 to the engine counters that count them. An
// unreachable or refusing proxy (errors_proxy) is a failed connection; a
// failed form login, refused credentials (401/407, errors_auth) and a
// failed JavaScript rendering (a crashed or hung browser) are other errors
// (docs/decisions/stats.md).
var (
	URISkipCounters = map[string][]string{
		SkipRobots:  {"robots_denied"},
		SkipURIRule: {"excluded", "uris_screened_out"},
		SkipCache:   {"uris_seen_before"},
		SkipDepth:   {"uris_too_deep"},
	}
	DocSkipCounters = map[string][]string{
		DocDuplicate:      {"duplicates"},
		DocNoIndex:        {"noindex"},
		DocTimeout:        {"errors_timeout"},
		DocConnectFailure: {"errors_connect-refused", "errors_dns", "errors_proxy"},
		DocNetworkError:   {"errors_network", "errors_tls"},
		DocTooLarge:       {"errors_too-large"},
		DocMIMEType:       {"errors_type-not-allowed"},
		DocHeaderExcluded: {"errors_excluded-header"},
		DocHeaderError:    {"errors_protocol"},
		DocNoRedirect:     {"errors_too-many-redirects", "errors_redirect-loop", "errors_redirect-rejected"},
		DocOther:          {"errors_other", "errors_bad-url", "errors_login", "errors_auth", "errors_javascript"},
		DocRSSNoIndex:     {"rss_noindex"},
	}
)

// ApplyCounters adds engine counter changes d (deltas, per counter name)
// to r, a site or collection record:
//
//	Processed, Downloaded, Stored, Modified, Deleted, Unchanged, Retries,
//	HasLastMod, HasETag, HasSitemap, NodeSchedulerFwd, LocalFwd, Local,
//	PPAdded, PPModified, PPFed, PPSucceeded, PPFailed, PPDeleted
//	                    one update of 1 per event (processed, fetched,
//	                    pp_added, ...)
//	DBUpdates           processed + deleted
//	ReadNet             bytes, one update per processed URI
//	WriteNet            bytes_sent, one update per processed URI
//	DLTime              dl_time_us in seconds (dl_time_us_n updates)
//	DocSize             doc_bytes (doc_bytes_n updates)
//	HTTPResponse        http_<code>
//	MimeType            mime_<type>
//	URISkip, DocSkip    URISkipCounters, DocSkipCounters
//
// max is the engine's largest sample so far of DLTime and DocSize
// (dl_time_us_max, doc_bytes_max): deltas cannot carry a maximum, so the
// caller passes the cumulative values (nil: unknown, the average is used).
// PPURLsChange and PPPartialUpdate stay 0 (docs/decisions/stats.md);
// Update sets PPChecksums from the gauge pp_checksums.
func ApplyCounters(r *Record, d map[string]int64, max map[string]int64) {
	for _, c := range counterCounts {
		if v := d[c.counter]; v > 0 {
			_ = r.AddSummary(c.attr, float64(v), 1, 1, v)
		}
	}
	if v := d["processed"] + d["deleted"]; v > 0 {
		_ = r.AddSummary("DBUpdates", float64(v), 1, 1, v)
	}
	if v, n := d["bytes"], d["processed"]; v > 0 || n > 0 {
		n = int64(math.Max(float64(n), 1))
		_ = r.AddSummary("ReadNet", float64(v), 0, float64(v), n)
	}
	if v, n := d["bytes_sent"], d["processed"]; v > 0 {
		n = int64(math.Max(float64(n), 1))
		_ = r.AddSummary("WriteNet", float64(v), 0, float64(v), n)
	}
	sample := func(attr, key string, scale float64) {
		sum, n := d[key], d[key+"_n"]
		if n <= 0 {
			return
		}
		hi := float64(sum) / float64(n)
		if m, ok := max[key+"_max"]; ok && float64(m) > hi {
			hi = float64(m)
		}
		_ = r.AddSummary(attr, float64(sum)*scale, 0, hi*scale, n)
	}
	sample("DLTime", "dl_time_us", 1e-6)
	sample("DocSize", "doc_bytes", 1)
	for k, v := range d {
		if v <= 0 {
			continue
		}
		switch {
		case strings.HasPrefix(k, "http_"):
			_ = r.Observe("HTTPResponse", k[len("http_"):], float64(v))
		case strings.HasPrefix(k, "mime_"):
			_ = r.Observe("MimeType", k[len("mime_"):], float64(v))
		}
	}
	for _, m := range []struct {
		attr  string
		codes map[string][]string
	}{{"URISkip", URISkipCounters}, {"DocSkip", DocSkipCounters}} {
		for code, keys := range m.codes {
			var n int64
			for _, k := range keys {
				n += d[k]
			}
			if n > 0 {
				_ = r.Observe(m.attr, code, float64(n))
			}
		}
	}
}

// CounterDelta returns cur - prev for every counter of cur (a counter that
// went down means the engine restarted: its whole value is the change).
// Maxima (names ending in _max) are left out.
func CounterDelta(cur, prev map[string]int64) map[string]int64 {
	d := make(map[string]int64, len(cur))
	for k, v := range cur {
		if strings.HasSuffix(k, "_max") {
			continue
		}
		p := prev[k]
		if v < p {
			p = 0
		}
		if v != p {
			d[k] = v - p
		}
	}
	return d
}

// Tracker keeps the statistics of a running crawler: a series per
// collection and per crawl site, fed with snapshots of the engine's
// cumulative counters (Update), folded on demand and every minute or two
// (Fold), with a new refresh cycle whenever the engine's refresh_cycles
// counter grows. It is not safe for concurrent use.
type Tracker struct {
	keep    int
	global  *Series
	colls   map[string]*tracked
	lastDNS DNSCounters
}

type tracked struct {
	series    *Series
	sites     map[string]*Series
	last      map[string]int64
	lastSites map[string]map[string]int64
	cycles    int64
	uptime    float64
	// epoch is the current refresh cycle's number; active is when each
	// site's counters last changed, ended the sites whose CrawlEnded is
	// set since (EndSites).
	epoch  float64
	active map[string]float64
	ended  map[string]bool
}

// NewTracker returns a tracker keeping keep refresh cycles per series
// (DefaultKeep when <= 0), whose global series starts at now.
func NewTracker(keep int, now float64) *Tracker {
	t := &Tracker{keep: keep, global: NewSeries(GlobalSchema(), "global", keep, now), colls: map[string]*tracked{}}
	_ = t.global.Delta().Set("Uptime", now)
	t.global.Fold(now)
	return t
}

// Global returns the global series (the caller may feed its delta).
func (t *Tracker) Global() *Series { return t.global }

// Add starts the statistics of a collection added at now (2.2.4.10:
// Uptime is when the collection was added), if it has none yet.
func (t *Tracker) Add(name string, now float64) {
	if t.colls[name] != nil {
		return
	}
	s := NewSeries(CollectionSchema(), name, t.keep, now)
	d := s.Delta()
	_ = d.Set("Uptime", now)
	_ = d.Set("CrawlStarted", now)
	_ = d.Set("LastRefresh", now)
	_ = d.Set("Epoch", 0)
	_ = d.Set("Status", float64(StatusCrawling))
	_ = d.Set("Feeding", 1)
	_ = d.SetString("CrawlMode", CrawlModeNormal)
	s.Fold(now)
	t.colls[name] = &tracked{series: s, sites: map[string]*Series{}, lastSites: map[string]map[string]int64{}, uptime: now,
		active: map[string]float64{}, ended: map[string]bool{}}
}

// Remove forgets a collection.
func (t *Tracker) Remove(name string) { delete(t.colls, name) }

// Has reports whether the collection is tracked.
func (t *Tracker) Has(name string) bool { return t.colls[name] != nil }

// Collection returns a collection's series (nil if unknown); the caller
// may set its delta's discrete values (Status, Feeding, CrawlMode...).
func (t *Tracker) Collection(name string) *Series {
	if c := t.colls[name]; c != nil {
		return c.series
	}
	return nil
}

// Site returns a crawl site's series (nil if unknown).
func (t *Tracker) Site(name, site string) *Series {
	if c := t.colls[name]; c != nil {
		return c.sites[site]
	}
	return nil
}

// Sites lists a collection's crawl sites, sorted.
func (t *Tracker) Sites(name string) []string {
	c := t.colls[name]
	if c == nil {
		return nil
	}
	out := make([]string, 0, len(c.sites))
	for s := range c.sites {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// Update feeds a snapshot of a collection's cumulative counters and of its
// sites' at now. The gauges queued and active_sites become QueueLength and
// ActiveSites.
func (t *Tracker) Update(name string, coll map[string]int64, sites map[string]map[string]int64, now float64) {
	c := t.colls[name]
	if c == nil {
		t.Add(name, now)
		c = t.colls[name]
	}
	if n := coll["refresh_cycles"]; n > c.cycles {
		for ; c.cycles < n; c.cycles++ {
			t.newCycle(c, now)
		}
	} else if n < c.cycles {
		c.cycles = n // the engine restarted
	}
	d := CounterDelta(coll, c.last)
	ApplyCounters(c.series.Delta(), d, coll)
	c.last = coll
	cd := c.series.Delta()
	_ = cd.Set("QueueLength", float64(coll["queued"]))
	_ = cd.Set("ActiveSites", float64(coll["active_sites"]))
	_ = cd.Set("PPChecksums", float64(coll["pp_checksums"]))
	for site, cur := range sites {
		s := c.sites[site]
		if s == nil {
			s = NewSeries(SiteSchema(), site, t.keep, now)
			cc := c.series.Current()
			_ = s.Delta().Set("CrawlStarted", now)
			_ = s.Delta().Set("LastRefresh", now)
			_ = s.Delta().Set("Epoch", max(cc.Value("Epoch"), c.epoch))
			c.sites[site] = s
		}
		sd := CounterDelta(cur, c.lastSites[site])
		if len(sd) > 0 {
			c.active[site] = now
			delete(c.ended, site)
		}
		ApplyCounters(s.Delta(), sd, cur)
		c.lastSites[site] = cur
	}
}

func (t *Tracker) newCycle(c *tracked, now float64) {
	epoch := max(c.series.Current().Value("Epoch"), c.epoch) + 1
	c.epoch = epoch
	c.series.NewCycle(now)
	d := c.series.Delta()
	_ = d.Set("Epoch", epoch)
	_ = d.Set("CrawlStarted", now)
	_ = d.Set("LastRefresh", now)
	_ = d.Set("Uptime", c.uptime)
	for _, s := range c.sites {
		s.NewCycle(now)
		_ = s.Delta().Set("Epoch", epoch)
		_ = s.Delta().Set("CrawlStarted", now)
		_ = s.Delta().Set("LastRefresh", now)
	}
}

// EndSites records that a collection ran out of work: each site counted
// since its last CrawlEnded gets CrawlEnded = the last time its counters
// changed (its last crawl step, to the sampling period of Update).
func (t *Tracker) EndSites(name string) {
	c := t.colls[name]
	if c == nil {
		return
	}
	for site, at := range c.active {
		if s := c.sites[site]; s != nil && !c.ended[site] {
			_ = s.Delta().Set("CrawlEnded", at)
			c.ended[site] = true
		}
	}
}

// Fold merges every delta into its cycles at now.
func (t *Tracker) Fold(now float64) {
	t.global.Fold(now)
	for _, c := range t.colls {
		c.series.Fold(now)
		for _, s := range c.sites {
			s.Fold(now)
		}
	}
}

// DNSCounters are a resolver's cumulative DNS counters (the multinode
// scheduler's), the source of the global statistics (2.2.4.8).
type DNSCounters struct {
	Requests, Responses, Retries, Timeouts int64
	// Written and Read are bytes of DNS traffic.
	Written, Read int64
	// RCodes counts responses by RCODE.
	RCodes map[int]int64
	// MaxRate is the most requests sent within one second.
	MaxRate int64
}

// ApplyDNS adds the change from prev to cur to a global record:
// DNSRequests, DNSResponses, DNSRetries, DNSTimeout (one update of 1 per
// event), DNSWrite and DNSRead (one update per request), the DNSResponse
// histogram and DNSRateLimit (cur.MaxRate). A counter that went down
// means the resolver restarted: its whole value is the change.
func ApplyDNS(r *Record, cur, prev DNSCounters) {
	delta := func(c, p int64) int64 {
		if c < p {
			return c
		}
		return c - p
	}
	for _, x := range []struct {
		attr string
		c, p int64
	}{{"DNSRequests", cur.Requests, prev.Requests}, {"DNSResponses", cur.Responses, prev.Responses},
		{"DNSRetries", cur.Retries, prev.Retries}, {"DNSTimeout", cur.Timeouts, prev.Timeouts}} {
		if v := delta(x.c, x.p); v > 0 {
			_ = r.AddSummary(x.attr, float64(v), 1, 1, v)
		}
	}
	n := max(delta(cur.Requests, prev.Requests), 1)
	for _, x := range []struct {
		attr string
		c, p int64
	}{{"DNSWrite", cur.Written, prev.Written}, {"DNSRead", cur.Read, prev.Read}} {
		if v := delta(x.c, x.p); v > 0 {
			_ = r.AddSummary(x.attr, float64(v), 0, float64(v), n)
		}
	}
	for code, c := range cur.RCodes {
		if v := delta(c, prev.RCodes[code]); v > 0 {
			_ = r.Observe("DNSResponse", strconv.Itoa(code), float64(v))
		}
	}
	if cur.MaxRate != prev.MaxRate || r.Updates("DNSRateLimit") == 0 && cur.MaxRate > 0 {
		_ = r.Set("DNSRateLimit", float64(cur.MaxRate))
	}
}

// UpdateGlobal feeds a snapshot of the resolver's cumulative DNS counters
// into the global series.
func (t *Tracker) UpdateGlobal(cur DNSCounters) {
	ApplyDNS(t.global.Delta(), cur, t.lastDNS)
	t.lastDNS = cur
	t.lastDNS.RCodes = maps.Clone(cur.RCodes)
}
