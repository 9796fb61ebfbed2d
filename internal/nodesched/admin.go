package nodesched

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"mime"
	"strings"
	"time"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/frontier"
	"github.com/trawl/trawl/internal/nodesched/crawlpipe"
	"github.com/trawl/trawl/internal/store"
	"github.com/trawl/trawl/internal/urls"
)

// This file holds what the administration API (MS-FSCADM) needs from a node
// scheduler beyond the MS-FSCMT messages: per-site counters, the
// refresh-only mode, refetching a whole site, and a way to run an
// operation on the driver's event loop.

// count adds n to counter k of the collection and of the current site.
func (c *collection) count(k string, n int64) {
	if n == 0 {
		return
	}
	c.stats[k] += n
	if c.cur != nil {
		c.cur[k] += n
	}
}

// countMax counts one sample v of a quantity: k sums the samples, k_n
// counts them and k_max keeps the largest, for the collection and the
// current site.
func (c *collection) countMax(k string, v int64) {
	for _, cs := range []Counters{c.stats, c.cur} {
		if cs == nil {
			continue
		}
		cs[k] += v
		cs[k+"_n"]++
		if v > cs[k+"_max"] {
			cs[k+"_max"] = v
		}
	}
}

// site returns the counters of a crawl site, creating them.
func (c *collection) site(s string) Counters {
	cs := c.sites[s]
	if cs == nil {
		cs = Counters{}
		c.sites[s] = cs
	}
	c.ps.touched(s) // stats_persist.go
	return cs
}

// setCur makes s the site the following counts are about ("" for none).
func (c *collection) setCur(s string) {
	if s == "" {
		c.cur, c.curSite = nil, ""
		return
	}
	c.cur, c.curSite = c.site(s), s
}

func (c *collection) clearCur() { c.cur, c.curSite = nil, "" }

// entrySiteOf is the crawl site of a received entry, before screening.
func entrySiteOf(e *cmt.Entry) string {
	u, err := urlParse(e.URI.URI)
	if err != nil || u.Host == "" {
		return ""
	}
	return urls.Site(u)
}

// mediaType returns the lower-case media type of a Content-Type value
// ("" when there is none), capped so a hostile header cannot make a huge
// counter name.
func mediaType(ct string) string {
	if ct == "" {
		return ""
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		mt, _, _ = strings.Cut(ct, ";")
		mt = strings.ToLower(strings.TrimSpace(mt))
	}
	if len(mt) > 64 || strings.ContainsAny(mt, " \t\r\n") {
		return "other"
	}
	return mt
}

// SiteStats returns the counters of every crawl site of coll (nil when the
// collection is unknown).
func (m *Machine) SiteStats(coll string) map[string]Counters {
	c := m.colls[coll]
	if c == nil {
		return nil
	}
	out := make(map[string]Counters, len(c.sites))
	for s, cs := range c.sites {
		out[s] = cs.clone()
	}
	return out
}

// SetRefreshOnly turns the refresh-only mode of a collection on or off
// (MS-FSCADM CollectionEnableRefreshOnly): while it is on, a queued URI
// that is not in the crawl store is dropped instead of fetched. The mode
// is saved in the crawl store. It reports whether the collection exists.
func (m *Machine) SetRefreshOnly(coll string, on bool) bool {
	c := m.colls[coll]
	if c == nil {
		return false
	}
	c.refreshOnly = on
	if err := m.saveAdminModes(c); err != nil {
		m.log.Error("nodesched: saving the refresh-only mode; it will not survive a restart", "collection", coll, "err", err)
	}
	return true
}

// RefreshOnly reports whether a collection is in refresh-only mode.
func (m *Machine) RefreshOnly(coll string) bool {
	c := m.colls[coll]
	return c != nil && c.refreshOnly
}

// Refetch queues URIs again, bypassing the seen-set (URIF_FORCE), urgent
// ones at the front of their site's queue; with site set, every stored URI
// of each URI's crawl site is queued too (MS-FSCADM CollectionRefetchURI).
// It returns how many URIs were queued or sent on to the multinode
// scheduler.
func (m *Machine) Refetch(coll string, uris []string, site, urgent bool, now time.Time) (int, error) {
	return m.RefetchWith(coll, uris, RefetchOptions{Site: site, Urgent: urgent}, now)
}

// RefetchOptions are the choices of a refetch (MS-FSCADM
// CollectionRefetchURI's Site, Immediately and Refeed).
type RefetchOptions struct {
	// Site queues every stored URI of each URI's crawl site too.
	Site bool
	// Urgent queues them at the front of their site's queue.
	Urgent bool
	// Refeed sets URIF_FORCE_REFEED: each document is submitted for
	// indexing again even if it has not changed (or the server says 304).
	Refeed bool
}

// RefetchWith is Refetch with every option.
func (m *Machine) RefetchWith(coll string, uris []string, o RefetchOptions, now time.Time) (int, error) {
	site, urgent := o.Site, o.Urgent
	flags := uint32(cmt.URIFForce)
	if o.Refeed {
		flags |= uint32(cmt.URIFForceRefeed)
	}
	m.now = now
	c := m.colls[coll]
	if c == nil {
		return 0, nil
	}
	var links []crawlpipe.Link
	seen := map[string]bool{}
	add := func(raw string) {
		u, err := c.s.Normalizer.Normalize(raw, nil)
		if err != nil || seen[u.String()] {
			return
		}
		seen[u.String()] = true
		links = append(links, crawlpipe.Link{URI: u.String(), Site: urls.Site(u), Flags: flags})
	}
	for _, raw := range uris {
		add(raw)
		if !site {
			continue
		}
		u, err := c.s.Normalizer.Normalize(raw, nil)
		if err != nil {
			continue
		}
		if err := m.st.SiteURIs(c.s.Name, urls.Site(u), func(uri string) error { add(uri); return nil }); err != nil {
			return 0, err
		}
	}
	if !urgent {
		return len(links), m.addLinks(c, now, links, nil, "")
	}
	for _, l := range links {
		if own, _ := m.route(c.s.Name, l.Site); !own {
			m.send(MNS, &cmt.UMURIUrg{Collection: c.s.Name, Entry: wireEntry(l, "", c.front.Cycle())})
			continue
		}
		c.setCur(l.Site)
		res, err := c.front.Add(now, frontier.Entry{URI: l.URI, Site: l.Site, URIFlags: l.Flags,
			QueueFlags: frontier.QFUrgent | frontier.QFPrepend | frontier.QFForce, Extra: crawlpipe.EncodeMeta(crawlpipe.EntryMeta{})})
		c.count("uris_queued", int64(res.Queued))
		c.clearCur()
		if err != nil {
			return 0, err
		}
	}
	m.pump(c)
	return len(links), nil
}

// skipRefreshOnly drops a URI served in refresh-only mode that the store
// does not hold; it reports whether it did.
func (m *Machine) skipRefreshOnly(c *collection, fe frontier.Fetch, known bool, now time.Time) bool {
	if !c.refreshOnly || known {
		return false
	}
	c.inflight[fe.Site]--
	if c.inflight[fe.Site] <= 0 {
		delete(c.inflight, fe.Site)
	}
	c.setCur(fe.Site)
	c.count("refresh_only_skipped", 1)
	c.clearCur()
	if err := c.front.Done(fe, frontier.Result{Outcome: frontier.Skipped}, now); err != nil {
		m.log.Warn("nodesched: dropping a new URI in refresh-only mode", "collection", c.s.Name, "uri", fe.URI, "err", err)
	}
	return true
}

// Exec runs fn on the driver's event loop, with the machine and the
// current time, and returns its error: the way the administration API
// changes a running node scheduler.
func (d *Driver) Exec(ctx context.Context, fn func(m *Machine, now time.Time) error) error {
	return d.exec(ctx, func(r *runner, now time.Time) error {
		err := fn(r.m, now)
		d.idleMu.Lock()
		d.siteStatsAt = time.Time{} // show the change at once
		d.idleMu.Unlock()
		return err
	})
}

// SiteStats returns the per-site counters of every collection as of the
// last loop iteration.
func (d *Driver) SiteStats() map[string]map[string]Counters {
	d.idleMu.Lock()
	defer d.idleMu.Unlock()
	out := map[string]map[string]Counters{}
	for coll, sites := range d.siteStats {
		m := make(map[string]Counters, len(sites))
		for s, c := range sites {
			m[s] = c.clone()
		}
		out[coll] = m
	}
	return out
}

// The administrator's modes of a collection survive a restart (and a
// kill -9): its feeding suspension (CMD_ADM_CONF_FEEDING_SUSPEND) and its
// refresh-only mode are kept in the crawl store's meta space, written
// (synced) when they change and read back when the collection is set up
// again, before it queues or feeds anything:
//
//	'm' "adm/f/" lp(collection) -> flags, then lp(destination)... (the
//	                               suspended ones); flags 0x01: every
//	                               destination is suspended; flags 0x02:
//	                               the suspended destinations are preceded
//	                               by their uvarint count and followed by
//	                               lp(destination)... (the ones the
//	                               configuration pauses and an
//	                               administrator resumed)
//	'm' "adm/r/" lp(collection) -> present while refresh-only is on
//	'm' "adm/s/" lp(collection) -> the suspended state (one byte, MS-FSCMT
//	                               2.2.5.4) while crawling is suspended
const (
	admFeedingPrefix     = "adm/f/"
	admRefreshOnlyPrefix = "adm/r/"
	admSuspendPrefix     = "adm/s/"
)

func admKey(prefix, coll string) []byte { return store.AppendLP([]byte(prefix), coll) }

// saveAdminModes writes the collection's feeding suspension and
// refresh-only mode.
func (m *Machine) saveAdminModes(c *collection) error {
	b := m.st.NewBatch()
	fk, rk := admKey(admFeedingPrefix, c.s.Name), admKey(admRefreshOnlyPrefix, c.s.Name)
	var err error
	if c.feeding.All || len(c.feeding.Destinations) > 0 || len(c.feeding.Resumed) > 0 {
		err = b.SetRaw(store.SpaceMeta, fk, encodeFeedingState(c.feeding))
	} else {
		err = b.DeleteRaw(store.SpaceMeta, fk)
	}
	if err == nil && c.refreshOnly {
		err = b.SetRaw(store.SpaceMeta, rk, []byte{1})
	} else if err == nil {
		err = b.DeleteRaw(store.SpaceMeta, rk)
	}
	if err != nil {
		b.Discard()
		return err
	}
	return b.CommitSync()
}

// Flags of a saved feeding state.
const (
	feedingAll     = 0x01
	feedingResumed = 0x02
)

// encodeFeedingState encodes a feeding state as saved under "adm/f/".
func encodeFeedingState(st FeedingState) []byte {
	v := []byte{0}
	if st.All {
		v[0] |= feedingAll
	}
	if len(st.Resumed) > 0 {
		v[0] |= feedingResumed
		v = binary.AppendUvarint(v, uint64(len(st.Destinations)))
	}
	for _, d := range sortedKeys(st.Destinations) {
		v = store.AppendLP(v, d)
	}
	for _, d := range sortedKeys(st.Resumed) {
		v = store.AppendLP(v, d)
	}
	return v
}

// decodeFeedingState decodes encodeFeedingState's output (and the older
// form without flag 0x02). Every count is checked against the bytes left.
func decodeFeedingState(v []byte) (FeedingState, error) {
	var st FeedingState
	if len(v) == 0 {
		return st, nil
	}
	flags, rest := v[0], v[1:]
	if flags&^(feedingAll|feedingResumed) != 0 {
		return st, fmt.Errorf("nodesched: bad feeding state flags %#x", flags)
	}
	st.All = flags&feedingAll != 0
	n := uint64(len(rest)) // every destination takes at least one byte
	if flags&feedingResumed != 0 {
		c, k := binary.Uvarint(rest)
		if k <= 0 || c > uint64(len(rest)-k) {
			return FeedingState{}, errors.New("nodesched: bad feeding state count")
		}
		n, rest = c, rest[k:]
	}
	for i := uint64(0); len(rest) > 0; i++ {
		d, r, err := store.ReadLP(rest)
		if err != nil {
			return FeedingState{}, err
		}
		rest = r
		into := &st.Destinations
		if i >= n {
			into = &st.Resumed
		}
		if *into == nil {
			*into = map[string]bool{}
		}
		(*into)[d] = true
	}
	return st, nil
}

// loadAdminModes reads a collection's saved feeding suspension and
// refresh-only mode (both off when none was saved).
func (m *Machine) loadAdminModes(coll string) (FeedingState, bool, error) {
	var st FeedingState
	v, ok, err := m.st.GetRaw(store.SpaceMeta, admKey(admFeedingPrefix, coll))
	if err != nil {
		return st, false, err
	}
	if ok {
		if st, err = decodeFeedingState(v); err != nil {
			return FeedingState{}, false, fmt.Errorf("nodesched: collection %s: saved feeding state: %w", coll, err)
		}
	}
	_, ro, err := m.st.GetRaw(store.SpaceMeta, admKey(admRefreshOnlyPrefix, coll))
	return st, ro, err
}

// saveCrawlState writes whether (and how) crawling of the collection is
// suspended (CMD_ADM_CONF_SUSPEND / CMD_ADM_CONF_RESUME).
func (m *Machine) saveCrawlState(c *collection) error {
	b := m.st.NewBatch()
	k := admKey(admSuspendPrefix, c.s.Name)
	var err error
	switch c.state {
	case cmt.StateSuspendedUser, cmt.StateSuspendedDisk, cmt.StateSuspendedDelay:
		err = b.SetRaw(store.SpaceMeta, k, []byte{byte(c.state)})
	default:
		err = b.DeleteRaw(store.SpaceMeta, k)
	}
	if err != nil {
		b.Discard()
		return err
	}
	return b.CommitSync()
}

// loadCrawlState reads a collection's saved crawl suspension
// (cmt.StateActive when none was saved).
func (m *Machine) loadCrawlState(coll string) (cmt.CollectionState, error) {
	v, ok, err := m.st.GetRaw(store.SpaceMeta, admKey(admSuspendPrefix, coll))
	if err != nil || !ok {
		return cmt.StateActive, err
	}
	if len(v) != 1 {
		return cmt.StateActive, fmt.Errorf("nodesched: collection %s: saved crawl state of %d bytes", coll, len(v))
	}
	switch st := cmt.CollectionState(v[0]); st {
	case cmt.StateSuspendedUser, cmt.StateSuspendedDisk, cmt.StateSuspendedDelay:
		return st, nil
	default:
		return cmt.StateActive, fmt.Errorf("nodesched: collection %s: saved crawl state %d", coll, v[0])
	}
}

// forgetAdminModes removes a deleted collection's saved modes in b.
func forgetAdminModes(b *store.Batch, coll string) error {
	if err := b.DeleteRaw(store.SpaceMeta, admKey(admFeedingPrefix, coll)); err != nil {
		return err
	}
	if err := b.DeleteRaw(store.SpaceMeta, admKey(admSuspendPrefix, coll)); err != nil {
		return err
	}
	if err := forgetStats(b, coll); err != nil { // stats_persist.go
		return err
	}
	return b.DeleteRaw(store.SpaceMeta, admKey(admRefreshOnlyPrefix, coll))
}
