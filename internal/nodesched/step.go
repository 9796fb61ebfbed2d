package nodesched

import (
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/crawllog"
	"github.com/trawl/trawl/internal/extract"
	"github.com/trawl/trawl/internal/fetch"
	"github.com/trawl/trawl/internal/frontier"
	"github.com/trawl/trawl/internal/nodesched/crawlpipe"
	"github.com/trawl/trawl/internal/store"
)

func urlParse(s string) (*url.URL, error) { return url.Parse(s) }

// Counters are a collection's crawl statistics, by name. The names:
//
//	fetched            requests that got an HTTP response (any status)
//	bytes              body bytes received (on the wire)
//	http_<code>        responses by status code
//	errors_<kind>      failed fetches by fetch.Kind (timeout, dns, network, ...)
//	robots_fetched     robots.txt files downloaded (a response, any status)
//	robots_denied      URIs not fetched because robots.txt disallows them
//	excluded           URIs rejected by the rules once their IP was known
//	stored             documents stored (new or changed)
//	modified           documents whose content changed since the last fetch
//	unchanged          documents fetched again with the same content (or 304)
//	not_modified       304 answers
//	deleted            URIs deleted (http_errors DELETE, dbswitch, admin)
//	duplicates         documents whose checksum another URI owns
//	noindex, nofollow  pages with those robots META directives
//	redirects          redirect responses (HTTP 3xx and meta refresh)
//	retries            fetches queued again by http_errors RETRY
//	uris_queued        URIs put in the local frontier
//	uris_seen_before   URIs the seen-set filtered
//	uris_too_deep      URIs beyond crawlmode DEPTH
//	uris_to_multinode  URIs sent to the multinode scheduler (other or unrouted sites)
//	uris_screened_out  received URIs the rules reject
//	crawl_ip_denied    CMD_UM_START_CRAWL_IP answers that refused
//	refresh_cycles     refresh cycles started
//	subrefresh_rounds  subcollection refresh rounds started (their own refresh)
//	processed          URIs taken from the queue and requested
//	dl_time_us         fetch time in microseconds (with _n samples, _max the longest)
//	doc_bytes          body bytes of downloaded documents (with _n and _max)
//	has_lastmod        documents with a Last-Modified header
//	has_etag           documents with an ETag header
//	mime_<type>        responses by media type
//	robots_sitemaps    robots.txt files with Sitemap: lines
//	links_local        links found to the page's own site
//	links_other        links found to other sites
//	uri_files_written  storage/uri_dir files written (uri_files_removed,
//	                   uri_files_failed; collection only, uridir.go)
//	refresh_only_skipped  new URIs dropped in refresh-only mode
//	queued, in_flight, active_sites  frontier gauges (Stats only)
//
// Every counter is kept for the collection and for the crawl site the
// event is about (SiteStats): the site of the fetched page for what a crawl
// step finds, the URI's own site for start URIs and received entries.
//
// The counters persist in the crawl store and CMD_UM_STAT carries them
// whole, with a sequence number (stats_persist.go).
type Counters map[string]int64

func (c Counters) add(k string, n int64) {
	if n != 0 {
		c[k] += n
	}
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (c Counters) clone() Counters {
	out := make(Counters, len(c))
	for k, v := range c {
		out[k] = v
	}
	return out
}

// Tick runs the timers of 3.1.6 that are due at now.
func (m *Machine) Tick(now time.Time) error {
	m.now = now
	if !now.Before(m.nextKA) {
		m.nextKA = now.Add(m.cfg.keepAlive())
		if m.mnsUp {
			if m.mnsKAPend {
				m.log.Warn("nodesched: no CMD_UM_KEEPALIVE_ACK from the multinode scheduler since the last keep-alive")
				m.missedKeepAlive(MNS)
			}
			m.mnsKAPend = true
			m.send(MNS, &cmt.UMKeepalive{})
		}
		for i := range m.ds {
			d := &m.ds[i]
			if !d.up {
				continue
			}
			if d.kaPend {
				m.log.Warn("nodesched: no PPDUP_KEEPALIVE_ACK from duplicate server", "dupserver", i)
				m.missedKeepAlive(DS(i))
			}
			d.kaPend = true
			m.send(DS(i), &cmt.PPDUPKeepalive{})
		}
	}
	if !now.Before(m.nextQuarantine) {
		m.nextQuarantine = now.Add(QuarantineInterval)
		for _, c := range m.colls {
			for site, until := range c.quar {
				if !now.Before(until) {
					delete(c.quar, site)
				}
			}
		}
	}
	if !now.Before(m.nextStats) {
		m.nextStats = now.Add(m.cfg.statsInterval())
		for _, name := range m.order {
			m.reportStats(m.colls[name])
		}
	}
	if m.limitsOn() {
		if err := m.checkLimits(now, true); err != nil { // limits.go
			return err
		}
	}
	for _, name := range m.order {
		c := m.colls[name]
		if c.state == cmt.StateActive && c.front.RefreshDue(now) {
			if err := m.refresh(c, cmt.RefreshCollection, now); err != nil {
				return err
			}
		} else if c.state == cmt.StateActive && c.front.MinorDue(now) {
			if err := m.minorRefresh(c, now); err != nil {
				return err
			}
		}
		if c.state == cmt.StateActive {
			for _, k := range c.front.SubRefreshDue(now) {
				if err := m.subRefresh(c, k, now, false); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// NextTimer is when Tick has something to do next.
func (m *Machine) NextTimer() time.Time {
	t := m.nextKA
	if m.nextQuarantine.Before(t) {
		t = m.nextQuarantine
	}
	if m.nextStats.Before(t) {
		t = m.nextStats
	}
	if m.limitsOn() && m.lim.next.Before(t) {
		t = m.lim.next
	}
	return t
}

// Next returns the next fetch to start at now, from the active collections
// in turn. When none is ready, wake is when to ask again (zero: only an event
// can help).
func (m *Machine) Next(now time.Time) (job *crawlpipe.Job, ok bool, wake time.Time) {
	m.now = now
	for len(m.ready) > 0 {
		j := m.ready[0]
		m.ready = m.ready[1:]
		if c := m.colls[j.S.Name]; c != nil && c.gen == j.Gen {
			c.flying[j.Fetch.URI]++
			if rec, ok, err := m.st.URI(c.s.Name, j.Fetch.URI); err == nil && ok {
				j.Prev = rec
			}
			return j, true, time.Time{}
		}
	}
	if !now.Before(m.lim.next) && m.limitsOn() {
		if err := m.checkLimits(now, true); err != nil { // limits.go
			m.log.Error("nodesched: checking the limits", "err", err)
		}
	}
	n := len(m.order)
	for i := 0; i < n; i++ {
		c := m.colls[m.order[(m.rr+i)%n]]
		if c.state != cmt.StateActive {
			continue
		}
	again:
		fe, ok, w := c.front.Next(now)
		m.pump(c)
		if !ok {
			if !w.IsZero() && (wake.IsZero() || w.Before(wake)) {
				wake = w
			}
			continue
		}
		c.inflight[fe.Site]++
		j := &crawlpipe.Job{S: c.s.For(fe.URI), Gen: c.gen, Fetch: fe, Meta: crawlpipe.DecodeMeta(fe.Extra)}
		// A fresh URI (never queued before) has no record: skip the lookup.
		if !fe.Fresh {
			if rec, ok, err := m.st.URI(c.s.Name, fe.URI); err == nil && ok {
				j.Prev = rec
			}
		}
		if m.skipRefreshOnly(c, fe, j.Prev != nil, now) {
			goto again
		}
		if j.Prev == nil {
			if held, err := m.holdForLimit(c, fe, now); held { // limits.go
				if err != nil {
					m.log.Error("nodesched: holding a URI while a limit holds the collection", "collection", c.s.Name, "uri", fe.URI, "err", err)
				}
				goto again
			}
		}
		if fe.QueueFlags&frontier.QFReextract != 0 && c.flying[fe.URI] > 0 && c.deferred[fe.URI] == nil {
			c.deferred[fe.URI] = j // wait for the fetch of the longer path
			goto again
		}
		c.flying[fe.URI]++
		m.rr = (m.rr + i + 1) % n
		return j, true, time.Time{}
	}
	return nil, false, wake
}

// Complete commits a finished crawl step: the URI record, the document, the
// frontier's Done and the links of own sites in one store batch; links of
// other sites go to the multinode scheduler, the checksum to the duplicate
// server.
func (m *Machine) Complete(o *crawlpipe.Outcome, now time.Time) error {
	m.now = now
	j := o.Job
	if o.Kind == fetch.KindCanceled && o.Err != nil {
		return nil // shutting down: the entry is served again after restart
	}
	c := m.colls[j.S.Name]
	if c == nil || c.gen != j.Gen {
		return nil // the collection was removed or reconfigured meanwhile
	}
	if c.inflight[j.Fetch.Site]--; c.inflight[j.Fetch.Site] <= 0 {
		delete(c.inflight, j.Fetch.Site)
	}
	if c.flying[j.Fetch.URI]--; c.flying[j.Fetch.URI] <= 0 {
		delete(c.flying, j.Fetch.URI)
		if d := c.deferred[j.Fetch.URI]; d != nil {
			delete(c.deferred, j.Fetch.URI)
			m.ready = append(m.ready, d) // after this step is committed
		}
	}
	c.setCur(j.Fetch.Site)
	defer c.clearCur()
	if o.ScreenTimeouts > 0 {
		c.count("screen_timeouts", int64(o.ScreenTimeouts))
	}
	if o.Skipped == "" {
		c.lastURI = j.Fetch.URI
		if c.siteLast == nil {
			c.siteLast = map[string]string{}
		}
		c.siteLast[j.Fetch.Site] = j.Fetch.URI
	}
	if o.RobotsFresh {
		if o.RobotsFailed == nil { // no response: counted as its error (accessFailures)
			c.count("robots_fetched", 1)
		}
		if len(o.Sitemaps) > 0 {
			c.count("robots_sitemaps", 1)
		}
		if o.CrawlDelay > 0 && j.S.ObeyRobotsDelay {
			if err := c.front.SetCrawlDelay(j.Fetch.Site, o.CrawlDelay, now); err != nil {
				return err
			}
		}
	}
	tx, err := c.front.Begin(now)
	if err != nil {
		return err
	}
	var ppdup []*cmt.PPDUPAdd
	m.stepRec, m.stepChange, m.stepOwner = nil, "", ""
	res, links, err := m.record(c, tx, o, now, &ppdup)
	if err != nil {
		tx.Discard()
		return err
	}
	if err := tx.Done(j.Fetch, res); err != nil {
		tx.Discard()
		return err
	}
	if err := m.addLinks(c, now, links, tx, j.Fetch.URI); err != nil {
		tx.Discard()
		return err
	}
	if err := m.stepExtras(c, tx.Batch(), o); err != nil {
		tx.Discard()
		return err
	}
	for _, a := range ppdup {
		if err := recordDSOp(tx.Batch(), a.Collection, true, a.Checksum, a.URI); err != nil { // dsops.go
			tx.Discard()
			return err
		}
	}
	if err := m.feedCommit(c.s.Name, tx.Batch(), tx.Commit, m.takeStepFeed(), ""); err != nil {
		return err
	}
	c.anchorsSeen.add(m.stepAnchors)         // feeding_anchors.go
	m.logStep(c, o, m.stepRec, m.stepChange) // crawllog.go
	m.stepRec = nil
	m.pump(c)
	for _, a := range ppdup {
		m.send(m.dsFor(a.Checksum), a)
	}
	if err := m.flushSendLinks(now); err != nil {
		return err
	}
	if c.limits.maxDoc > 0 {
		if err := m.checkCollectionLimits(c, -1, now); err != nil { // limits.go
			return err
		}
	}
	return m.afterStep(c, o)
}

// dsFor picks the duplicate server of a checksum: every node scheduler must
// ask the same one, so checksums are partitioned by their first byte.
func (m *Machine) dsFor(cs cmt.Checksum) Peer {
	if len(m.ds) == 0 {
		return DS(0)
	}
	return DS(int(cs[0]) % len(m.ds))
}

// record writes the URI record and document of a step into the batch and
// returns what the frontier needs and the links to queue.
func (m *Machine) record(c *collection, tx *frontier.Tx, o *crawlpipe.Outcome, now time.Time, ppdup *[]*cmt.PPDUPAdd) (frontier.Result, []crawlpipe.Link, error) {
	j, s, b := o.Job, o.Job.S, tx.Batch()
	name := s.Name
	m.stepFeed = nil
	m.stepAnchors = m.stepAnchors[:0]
	c.keysCheck() // keyfilter.go
	m.sendLinks = nil
	m.resetLists()
	rec := &store.URIRecord{URI: j.Fetch.URI, Site: j.Fetch.Site, Referrer: j.Fetch.Referrer, Hops: j.Fetch.Hops,
		FirstSeenCycle: j.Fetch.Cycle, FirstSeen: now}
	if j.Prev != nil {
		p := *j.Prev
		rec = &p
		rec.Hops = j.Fetch.Hops
	}
	var links []crawlpipe.Link
	if o.RobotsFresh && s.UseSitemaps {
		for _, sm := range o.Sitemaps {
			nu, ok := crawlpipe.ScreenSitemap(s, sm)
			if !ok || hostOf(urlSite(nu)) != hostOf(j.Fetch.Site) {
				continue
			}
			links = append(links, crawlpipe.Link{URI: nu.String(), Site: j.Fetch.Site, Flags: uint32(cmt.URIFSitemap)})
		}
	}
	switch o.Skipped {
	case "robots":
		c.count("robots_denied", 1)
		return frontier.Result{Outcome: frontier.Skipped}, links, nil
	case "excluded", "scheme":
		c.count("excluded", 1)
		if j.Prev != nil {
			rec.Status = store.StatusExcluded
			if err := b.PutURI(name, rec); err != nil {
				return frontier.Result{}, nil, err
			}
			if err := m.feedStep(c, b, rec, o); err != nil {
				return frontier.Result{}, nil, err
			}
			m.uriFileStep(c, b, rec, o) // uridir.go
		}
		return frontier.Result{Outcome: frontier.Skipped}, links, nil
	}
	if o.Err != nil && o.Kind == fetch.KindCanceled {
		// Shutting down: the entry stays queued (no Done would be right, but
		// the step must end; Skipped leaves no trace in the store).
		return frontier.Result{Outcome: frontier.Skipped}, links, crawlpipe.ErrStopped
	}
	if o.Reextracted {
		// A shorter path to a URI fetched earlier in this cycle: its links
		// go again at the new depth; nothing was fetched.
		c.count("reextracted", 1)
		if err := b.PutURI(name, rec); err != nil {
			return frontier.Result{}, nil, err
		}
		return frontier.Result{Outcome: frontier.Skipped}, append(links, o.Links...), nil
	}
	rec.LastFetched = now
	rec.LastFetchedCycle = j.Fetch.Cycle
	rec.FetchDuration = o.Duration
	rec.FetchCount++
	rec.HTTPCode = o.Status
	c.count("processed", 1)
	c.countMax("dl_time_us", o.Duration.Microseconds())
	if o.Status > 0 {
		c.count("fetched", 1)
		c.count("http_"+strconv.Itoa(o.Status), 1)
		if mt := mediaType(o.ContentType); mt != "" {
			c.count("mime_"+mt, 1)
		}
	}
	c.count("bytes", o.BytesOnWire)
	c.count("bytes_sent", o.BytesSent)
	result := frontier.Result{Outcome: frontier.Fetched}
	key := ""
	switch {
	case o.Err != nil:
		c.count("errors_"+o.Kind.String(), 1)
		key = fetch.ErrorKey(o.Status, o.Err)
		if o.Kind.ConnectionFailure() {
			result.Outcome = frontier.NetError
		}
		if key == "" { // a content decision (too large, type): recorded, not an error
			rec.Status = store.StatusExcluded
			rec.ErrorCount = 0
		} else {
			rec.Status = store.StatusError
			rec.ErrorCount++
		}
	case o.Status >= 400:
		key = strconv.Itoa(o.Status)
		rec.Status = store.StatusError
		rec.ErrorCount++
	case o.Location != "" || (o.Status >= 300 && o.Status < 400 && !o.NotModified):
		c.count("redirects", 1)
		rec.Status, rec.Location, rec.ErrorCount = store.StatusRedirect, o.Location, 0
		rec.ContentType = o.ContentType
		if o.Status == 200 && o.Body != nil { // meta refresh redirect: keep the page
			if err := b.PutDocument(name, rec.URI, o.Body); err != nil {
				return result, nil, err
			}
			rec.Size = int64(len(o.Body))
		}
	case o.Unwanted != "":
		// focused: fetched, not kept (options.go).
		rec.Status, rec.ErrorCount, rec.ContentType = store.StatusExcluded, 0, o.ContentType
		if err := b.DeleteDocument(name, rec.URI); err != nil {
			return result, nil, err
		}
	default:
		if err := m.storeDocument(c, b, rec, o, now, &result, ppdup); err != nil {
			return result, nil, err
		}
	}
	if key != "" {
		policy := s.HTTPErrors
		if strings.HasPrefix(rec.URI, "ftp:") && s.Access != nil {
			policy = s.Access.FTPErrors // ftp_errors decides for FTP URIs
		}
		act, ok := policy.Lookup(key)
		if ok && act.Delete && rec.ErrorCount > act.After {
			rec.Status = store.StatusDeleted
			c.count("deleted", 1)
			if err := b.DeleteDocument(name, rec.URI); err != nil {
				return result, nil, err
			}
		}
		if ok && act.Retry > 0 && rec.RetryCount < act.Retry {
			rec.RetryCount++
			c.count("retries", 1)
			links = append(links, crawlpipe.Link{URI: rec.URI, Site: rec.Site, Hops: j.Fetch.Hops, Redirects: j.Meta.Redirects, Flags: uint32(cmt.URIFForce)})
		}
	} else {
		rec.RetryCount = 0
	}
	if err := m.feedStep(c, b, rec, o); err != nil {
		return result, nil, err
	}
	// storage/uri_dir: the document's URI file once b commits (uridir.go).
	m.uriFileStep(c, b, rec, o)
	if err := m.removeFedDocument(c, b, rec); err != nil { // storage.go
		return result, nil, err
	}
	if err := b.PutURI(name, rec); err != nil {
		return result, nil, err
	}
	m.stepRec = rec
	all, err := m.stepOptions(c, b, rec, o, append(links, o.Links...))
	return result, all, err
}

func urlSite(u *url.URL) string { return u.Host }

func (m *Machine) storeDocument(c *collection, b *store.Batch, rec *store.URIRecord, o *crawlpipe.Outcome, now time.Time, result *frontier.Result, ppdup *[]*cmt.PPDUPAdd) error {
	s, name := o.Job.S, o.Job.S.Name
	old, hadOld := rec.Checksum, rec.HasChecksum && o.Job.Prev != nil && o.Job.Prev.LastFetched.After(time.Time{})
	rec.ErrorCount = 0
	rec.ContentType = o.ContentType
	if o.ETag != "" {
		rec.ETag = o.ETag
	}
	if o.LastModified != "" {
		rec.LastModified = o.LastModified
	}
	if o.NoIndex && o.Channel {
		c.count("rss_noindex", 1) // an RSS channel without index_feed (skip code rs)
	} else if o.NoIndex {
		c.count("noindex", 1)
	}
	if o.NoFollow {
		c.count("nofollow", 1)
	}
	if o.NotModified {
		c.count("not_modified", 1)
		c.count("unchanged", 1)
		result.Outcome = frontier.NotModified
		if rec.Status != store.StatusDuplicate {
			rec.Status = store.StatusNotModified
		}
		return nil
	}
	rec.Size = int64(len(o.Body))
	c.countMax("doc_bytes", rec.Size)
	if o.LastModified != "" {
		c.count("has_lastmod", 1)
	}
	if o.ETag != "" {
		c.count("has_etag", 1)
	}
	changed := !hadOld || old != o.Checksum
	result.Changed = changed && hadOld
	switch {
	case hadOld && changed:
		m.stepChange = "modified"
	case hadOld:
		m.stepChange = "unchanged"
	default:
		m.stepChange = "stored"
	}
	if hadOld && changed {
		c.count("modified", 1)
		rec.ChangeCount++
		rec.LastChanged = now
	} else if hadOld {
		c.count("unchanged", 1)
	} else {
		rec.LastChanged = now
	}
	if hadOld && changed {
		oldKeys := m.dupKeys(c, rec.URI, old, o.Job.Prev.ContentType)
		if err := m.forgetKeys(c, b, rec.URI, oldKeys); err != nil {
			return err
		}
	}
	rec.Checksum, rec.HasChecksum = o.Checksum, o.HasChecksum
	rec.Status = store.StatusFetched
	rec.Owner = ""
	if o.HasChecksum && s.StorageOrDefault().DiffCheck { // diffcheck off: no duplicate detection (storage.go)
		// The keys that decide duplicates: the checksum, or the band keys
		// under near_duplicate_detection (a duplicate shares any one).
		keys := [][16]byte{o.Checksum}
		if len(o.NearKeys) > 0 {
			keys = o.NearKeys
		}
		for _, k := range keys {
			if err := b.AddChecksumURI(name, k, rec.URI); err != nil {
				return err
			}
		}
		if s.UseDupServers && len(m.ds) > 0 {
			for _, k := range keys {
				*ppdup = append(*ppdup, &cmt.PPDUPAdd{Collection: name, NodeID: m.cfg.NodeID, URI: rec.URI, Checksum: cmt.Checksum(k)})
			}
		} else {
			for _, k := range keys {
				owner, ok, err := m.st.ChecksumOwner(name, k)
				if err != nil {
					return err
				}
				if ok && owner != rec.URI {
					if _, alive, _ := m.st.URI(name, owner); !alive {
						ok = false
					} else if rec.Status != store.StatusDuplicate {
						rec.Status, rec.Owner = store.StatusDuplicate, owner
						c.count("duplicates", 1)
					}
				}
				if !ok {
					if err := b.PutChecksumOwner(name, k, rec.URI); err != nil {
						return err
					}
				}
			}
			if len(o.NearKeys) == 0 && rec.Status != store.StatusDuplicate {
				m.stepOwner = rec.URI // the owner of o.Checksum, the only key
			}
		}
	}
	if changed || rec.Status != store.StatusDuplicate {
		return m.putDocument(c, b, rec, o) // storage.go
	}
	return nil
}

// addOK is PPDUP_ADD_OK (3.1.5.23): the URI goes into the checksum database;
// when another URI owns the checksum the document is a duplicate of it.
func (m *Machine) addOK(c *collection, x *cmt.PPDUPAddOK, now time.Time) error {
	rec, ok, err := m.st.URI(c.s.Name, x.URI)
	if err != nil {
		return err
	}
	if !ok || !rec.HasChecksum {
		b := m.st.NewBatch()
		if err := answeredDSOp(b, c.s.Name, true, x.Checksum, x.URI); err != nil { // dsops.go
			b.Discard()
			return err
		}
		return b.Commit()
	}
	owner := x.OwnerURI
	if owner == "" {
		owner = x.URI
	}
	// Under near_duplicate_detection the answer is about one band key
	// (echoed in PKT_CSUM): owning one band does not undo a duplicate
	// found through another; a refetch starts the document afresh.
	key, band := rec.Checksum, c.s.NearDuplicates && x.Checksum != (cmt.Checksum{}) && [16]byte(x.Checksum) != rec.Checksum
	if band {
		key = [16]byte(x.Checksum)
	}
	b := m.st.NewBatch()
	if err := answeredDSOp(b, c.s.Name, true, x.Checksum, x.URI); err != nil { // dsops.go
		b.Discard()
		return err
	}
	if owner == x.URI {
		if err := b.PutChecksumOwner(c.s.Name, key, x.URI); err != nil {
			b.Discard()
			return err
		}
		if rec.Status == store.StatusDuplicate && !band {
			rec.Status, rec.Owner = store.StatusFetched, ""
		}
	} else if band && rec.Status == store.StatusDuplicate {
		// already a duplicate through an earlier band: its owner stays
	} else if rec.Status != store.StatusDuplicate || rec.Owner != owner {
		rec.Status, rec.Owner = store.StatusDuplicate, owner
		c.setCur(rec.Site)
		c.count("duplicates", 1)
		c.clearCur()
		if m.logOn(c, crawllog.PostProcess) {
			m.now = now
			m.logPost(c, rec.URI, "duplicate", owner)
		}
	}
	if err := b.PutURI(c.s.Name, rec); err != nil {
		b.Discard()
		return err
	}
	if err := m.dropDuplicateBody(c, b, rec); err != nil { // storage.go
		b.Discard()
		return err
	}
	m.resetLists()
	if m.cfg.Feeds {
		m.setListed(c, rec.URI, listingOf(rec)) // reported.go
	}
	ops, err := m.feedDuplicate(c, b, rec)
	if err != nil {
		b.Discard()
		return err
	}
	return m.feedCommit(c.s.Name, b, b.Commit, ops, "")
}

// removeOK is PPDUP_REMOVE_OK (3.1.5.24).
func (m *Machine) removeOK(c *collection, x *cmt.PPDUPRemoveOK) error {
	rec, ok, err := m.st.URI(c.s.Name, x.URI)
	if err != nil {
		return err
	}
	b := m.st.NewBatch()
	if err := answeredDSOp(b, c.s.Name, false, x.Checksum, x.URI); err != nil { // dsops.go
		b.Discard()
		return err
	}
	key := rec.Checksum
	if x.Checksum != (cmt.Checksum{}) {
		key = [16]byte(x.Checksum) // a band key under near_duplicate_detection
	}
	if ok && rec.HasChecksum {
		if owner, has, _ := m.st.ChecksumOwner(c.s.Name, key); has && owner == x.URI {
			if err := b.DeleteChecksumOwner(c.s.Name, key); err != nil {
				b.Discard()
				return err
			}
		}
	}
	return b.Commit()
}

// promote is PPDUP_PROMOTE_REQ (3.1.5.25): recrawl every URI with the
// checksum, flagged URIF_PROMOTE.
func (m *Machine) promote(c *collection, x *cmt.PPDUPPromoteReq, now time.Time) error {
	var links []crawlpipe.Link
	err := m.st.ChecksumURIs(c.s.Name, [16]byte(x.Checksum), func(uri string) error {
		rec, ok, err := m.st.URI(c.s.Name, uri)
		if err != nil || !ok {
			return err
		}
		links = append(links, crawlpipe.Link{URI: uri, Site: rec.Site, Hops: rec.Hops, Flags: uint32(cmt.URIFPromote | cmt.URIFForce)})
		return nil
	})
	if err != nil {
		return err
	}
	if len(links) == 0 {
		return nil
	}
	return m.addLinks(c, now, links, nil, "")
}

// dupKeys are the keys under which a stored document was registered: its
// checksum, or under near_duplicate_detection the band keys of its stored
// HTML (recomputed: the record keeps only the checksum). A document whose
// body is gone falls back to the checksum.
func (m *Machine) dupKeys(c *collection, uri string, sum [16]byte, contentType string) [][16]byte {
	if c.s.NearDuplicates && crawlpipe.IsHTML(contentType) {
		if body, ok, err := m.st.Document(c.s.Name, uri); err == nil && ok {
			res := extract.Extract(body, extract.Options{Kinds: c.s.Kinds, AgentName: c.s.AgentToken, ContentType: contentType})
			if keys := extract.NearKeys(res, c.s.UseMetaCsum, c.s.CsumCutOff); len(keys) > 0 {
				return keys
			}
		}
	}
	return [][16]byte{sum}
}

// forgetKeys unregisters uri under keys in b: it leaves their URI lists,
// and where it owns a key the ownership goes (PPDUP_REMOVE to the key's
// duplicate server, which promotes another URI).
func (m *Machine) forgetKeys(c *collection, b *store.Batch, uri string, keys [][16]byte) error {
	name := c.s.Name
	for _, k := range keys {
		if err := b.RemoveChecksumURI(name, k, uri); err != nil {
			return err
		}
		if owner, ok, err := m.st.ChecksumOwner(name, k); err == nil && ok && owner == uri {
			if err := b.DeleteChecksumOwner(name, k); err != nil {
				return err
			}
			if c.s.UseDupServers && len(m.ds) > 0 {
				if err := recordDSOp(b, name, false, cmt.Checksum(k), uri); err != nil { // dsops.go
					return err
				}
				m.send(m.dsFor(cmt.Checksum(k)), &cmt.PPDUPRemove{Collection: name, NodeID: m.cfg.NodeID, URI: uri, Checksum: cmt.Checksum(k)})
			}
		}
	}
	return nil
}

var _ = fmt.Sprintf
