package crawlpipe

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"net/http"
	"net/http/httptrace"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/crawllog"
	"github.com/trawl/trawl/internal/extract"
	"github.com/trawl/trawl/internal/fetch"
	"github.com/trawl/trawl/internal/filter"
	"github.com/trawl/trawl/internal/frontier"
	"github.com/trawl/trawl/internal/robots"
	"github.com/trawl/trawl/internal/store"
	"github.com/trawl/trawl/internal/urls"
)

// EntryMeta is what the node scheduler keeps in a frontier entry's opaque
// Extra: the number of consecutive redirects that led to the URI.
type EntryMeta struct {
	Redirects int
	Flags     uint8 // metaFeedItem, metaFeedChannel (extras.go), metaOffLang; written after Redirects when set
	// OffLang is the number of documents in none of the focused languages
	// on the path to the URI since the last one in them (options.go);
	// written after Flags when metaOffLang is set.
	OffLang int
}

// metaOffLang marks (EntryMeta.Flags) an entry with an OffLang count.
const metaOffLang = 2

func EncodeMeta(m EntryMeta) []byte {
	b := []byte{1}
	b = binary.AppendUvarint(b, uint64(m.Redirects))
	if m.OffLang > 0 {
		m.Flags |= metaOffLang
	} else {
		m.Flags &^= metaOffLang
	}
	if m.Flags != 0 {
		b = binary.AppendUvarint(b, uint64(m.Flags))
	}
	if m.OffLang > 0 {
		b = binary.AppendUvarint(b, uint64(m.OffLang))
	}
	return b
}

func DecodeMeta(b []byte) EntryMeta {
	var m EntryMeta
	if len(b) < 2 || b[0] != 1 {
		return m
	}
	v, n := binary.Uvarint(b[1:])
	if n > 0 && v < 1<<20 {
		m.Redirects = int(v)
		if f, k := binary.Uvarint(b[1+n:]); k > 0 && f < 256 {
			m.Flags = uint8(f)
			if m.Flags&metaOffLang != 0 {
				if o, l := binary.Uvarint(b[1+n+k:]); l > 0 && o < 1<<20 {
					m.OffLang = int(o)
				}
			}
		}
	}
	return m
}

// Job is one fetch handed to a worker.
type Job struct {
	S     *Settings
	Gen   uint64 // generation of the collection's settings when served
	Fetch frontier.Fetch
	Meta  EntryMeta
	Prev  *store.URIRecord // the stored record, nil for a new URI
	Store Store            // to reread the stored body on a 304 (set by the driver)
}

// Store is what the pipeline reads of the crawl store (Job.Store): what the
// machine committed, never written here. The stored body of a 304 or of a
// re-extracted entry, and for the adaptive ranking the URI record and the
// sitemap records. *store.Store is one.
type Store interface {
	URI(collection, uri string) (*store.URIRecord, bool, error)
	Document(collection, uri string) ([]byte, bool, error)
	Meta(name string) ([]byte, bool, error)
}

// Link is a URI discovered by a crawl step, normalized and screened
// (schemes, exclude_exts, max_uri_recursion, include/exclude rules without an
// IP), ready for routing.
type Link struct {
	URI       string
	Site      string
	Hops      int
	Redirects int
	Flags     uint32
	Meta      uint8 // entryMeta.Flags of the queue entry
	OffLang   int   // entryMeta.OffLang of the queue entry (focused crawl)
	// Anchor is the link's anchor text in the page it was found in ("" for
	// links not found in a page); feeding records it for the target.
	Anchor string
}

// Outcome is what a worker reports for a Job.
type Outcome struct {
	Job      *Job
	Start    time.Time
	Duration time.Duration

	// Skipped is set when no request was made for the document: "robots"
	// (disallowed), "excluded" (the rules reject it once its IP is known),
	// "scheme".
	Skipped string
	// SkipReason is the rule behind Skipped "excluded" or "scheme" (the
	// screened log).
	SkipReason string
	// Screened are the links of the document the rules rejected, with
	// the reason, when the screened log is on (crawllog.go).
	Screened []ScreenedURI
	// ScreenTimeouts counts the links rejected because a regexp rule ran
	// out of time on them (counted as screen_timeouts).
	ScreenTimeouts int
	// RobotsFresh is set when this step downloaded the site's robots.txt;
	// Sitemaps and CrawlDelay come from it.
	RobotsFresh bool
	Sitemaps    []string
	CrawlDelay  time.Duration
	// RobotsFailed is set when this step's robots.txt download got no
	// response (accessFailures counts and logs it).
	RobotsFailed *robotsFailure

	Status       int
	Err          error
	Kind         fetch.Kind
	NotModified  bool
	Body         []byte
	ContentType  string
	ETag         string
	LastModified string
	BytesOnWire  int64
	Truncated    bool
	Checksum     [16]byte
	HasChecksum  bool
	// NearKeys are the near-duplicate band keys of an HTML document under
	// near_duplicate_detection (nil otherwise): they, not Checksum, go to
	// the duplicate servers; Checksum still tells a changed document.
	NearKeys [][16]byte
	NoIndex  bool
	NoFollow bool
	Location string // normalized redirect target (HTTP 3xx or meta refresh redirect)
	Links    []Link

	// Parsed is the step's parse of Body as HTML and ParsedType the
	// Content-Type it was parsed with (nil when the step did not parse
	// Body itself: not HTML, or a script-rendered DOM that is not what is
	// stored). Feeding takes the document's text from it when ParsedType
	// is the type the document is fed with, instead of parsing Body again.
	Parsed     *extract.Result
	ParsedType string

	// Extracted are every link of an HTML document, normalized, before
	// any rule decides what is followed: the lines of its storage/uri_dir
	// file (nil when the collection has no uri_dir, uridir.go).
	Extracted []string
	// SitemapEntries are the changefreq and priority a sitemap step read
	// (sitemaps.go).
	SitemapEntries []SitemapEntry
	// Channel is set for an RSS channel step; Expired are the items it
	// let expire (del_expired_links), deleted once the step is committed.
	Channel bool
	Expired []Link

	// BytesSent counts the bytes written on the connections for the
	// request (WriteNet; wire.go).
	BytesSent int64
	// RenderErr is why use_javascript could not render the page (its
	// links then come from the HTML as fetched).
	RenderErr error
	// Language is the language the focused crawl detected ("" when not
	// focused or not told); Unwanted says why a fetched document is not
	// kept ("language": in none of the focused languages). Mirrors are the
	// mirror sites whose links were taken as links to their preferred site
	// (mirror site -> preferred site). See options.go.
	Language string
	Unwanted string
	Mirrors  map[string]string
	// Reextracted is set when no request was made because a shorter path
	// reached a URI fetched earlier in this cycle (frontier.QFReextract):
	// the links come again, at the new depth, from the stored document or
	// redirect target.
	Reextracted bool

	// Proto and Header are the response's protocol and header
	// (store_http_header, storage.go).
	Proto  string
	Header http.Header
}

// ScreenedURI is a link the rules rejected and why.
type ScreenedURI struct{ URI, Reason string }

// maxScreenedPerStep bounds Outcome.Screened.
const maxScreenedPerStep = 4096

// screened records a rejected link for the screened log.
func (o *Outcome) screened(uri, reason string) {
	if filter.IsTimeoutReason(reason) {
		o.ScreenTimeouts++
	}
	if o.Job.S.Logs.On(crawllog.Screened) && len(o.Screened) < maxScreenedPerStep {
		o.Screened = append(o.Screened, ScreenedURI{URI: uri, Reason: reason})
	}
}

// Pipeline runs crawl steps: robots.txt, politeness pacing, the fetch, link
// extraction and screening. It is safe for concurrent use by the workers.
type Pipeline struct {
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error
	// Record, if set, receives every request the pipeline made once it
	// has ended, with the moment the pacer let it start: tests check
	// politeness on the crawler's own clock with it. It is called by the
	// workers concurrently. Nil costs nothing.
	Record func(RequestLog)

	pacer  pacer
	mu     sync.Mutex
	flight map[string]*robotsCall
}

// RequestLog is one request a Pipeline made (Pipeline.Record).
type RequestLog struct {
	Collection string
	Site       string // the crawl site (host:port)
	IP         string // the site's IP as the frontier had it
	PerIP      bool   // the delay also held per IP (enforce_delay_per_ip)
	URI        string // the document, or the robots.txt, requested
	Robots     bool   // a robots.txt request
	Delay      time.Duration
	// Start is when the pacer let the request go, its connection ready
	// (one per attempt: a request the transport retries on a new
	// connection starts again); End is when the fetch returned.
	Start, End time.Time
}

// reqTrace collects the starts of one request for Pipeline.Record.
type reqTrace struct {
	mu     sync.Mutex
	starts []time.Time
}

// record reports the starts of a finished request to p.Record.
func (p *Pipeline) record(tr *reqTrace, j *Job, uri string, robots bool, d time.Duration) {
	if tr == nil {
		return
	}
	end := p.Now()
	tr.mu.Lock()
	starts := tr.starts
	tr.mu.Unlock()
	for _, st := range starts {
		p.Record(RequestLog{Collection: j.S.Name, Site: j.Fetch.Site, IP: j.Fetch.IP, PerIP: j.S.EnforceDelayIP && j.Fetch.IP != "",
			URI: uri, Robots: robots, Delay: d, Start: st, End: end})
	}
}

type robotsCall struct {
	done  chan struct{}
	rules *robots.Rules
	err   error
}

// NewPipeline returns a pipeline on the given clock (nil: real time).
func NewPipeline(now func() time.Time, sleep func(ctx context.Context, d time.Duration) error) *Pipeline {
	if now == nil {
		now = time.Now
	}
	if sleep == nil {
		sleep = func(ctx context.Context, d time.Duration) error {
			if d <= 0 {
				return ctx.Err()
			}
			t := time.NewTimer(d)
			defer t.Stop()
			select {
			case <-t.C:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	return &Pipeline{Now: now, Sleep: sleep, pacer: pacer{next: map[string]time.Time{}, last: map[string]time.Time{}}, flight: map[string]*robotsCall{}}
}

// pacer spaces the starts of requests to one site (and one IP with
// enforce_delay_per_ip) by the delay, robots.txt fetches included. The
// frontier schedules documents by the same rule; the pacer also covers the
// robots.txt requests the frontier does not see.
type pacer struct {
	mu   sync.Mutex
	next map[string]time.Time // reservations
	last map[string]time.Time // actual starts
	n    int
}

func (p *pacer) reserve(now time.Time, d time.Duration, keys ...string) time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	start := now
	for _, k := range keys {
		if t, ok := p.next[k]; ok && t.After(start) {
			start = t
		}
	}
	for _, k := range keys {
		p.next[k] = start.Add(d)
	}
	p.n++
	if p.n%4096 == 0 {
		for k, t := range p.next {
			if t.Before(now.Add(-time.Hour)) {
				delete(p.next, k)
			}
		}
		for k, t := range p.last {
			if t.Before(now.Add(-time.Hour)) {
				delete(p.last, k)
			}
		}
	}
	return start
}

// begin records that a request starts at now unless one started less than d
// ago on one of the keys; then it returns how long to wait before trying
// again. Reservations order the requests; begin makes the spacing hold
// between the moments requests really start, whatever timers did.
func (p *pacer) begin(now time.Time, d time.Duration, keys ...string) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	var wait time.Duration
	for _, k := range keys {
		if t, ok := p.last[k]; ok {
			if w := t.Add(d).Sub(now); w > wait {
				wait = w
			}
		}
	}
	if wait > 0 {
		return wait
	}
	for _, k := range keys {
		p.last[k] = now
		if t := now.Add(d); t.After(p.next[k]) {
			p.next[k] = t
		}
	}
	return 0
}

func (p *Pipeline) paceKeys(j *Job) []string {
	keys := []string{"s\x00" + j.S.Name + "\x00" + j.Fetch.Site}
	if j.S.EnforceDelayIP && j.Fetch.IP != "" {
		keys = append(keys, "i\x00"+j.S.Name+"\x00"+j.Fetch.IP)
	}
	return keys
}

// wait sleeps until the job's reservation on its site (and IP) comes, and
// returns a context whose HTTP trace holds the request, once its connection
// is ready, until the previous request on the same keys started at least d
// ago: the spacing then holds at the moment the request is written, however
// long the dial or the timers took.
//
// sent, if not nil, counts the bytes written for the requests
// (wire.go).
func (p *Pipeline) wait(ctx context.Context, j *Job, d time.Duration, sent *SentCounter) (context.Context, *reqTrace, error) {
	keys := p.paceKeys(j)
	start := p.pacer.reserve(p.Now(), d, keys...)
	if err := p.Sleep(ctx, start.Sub(p.Now())); err != nil {
		return ctx, nil, err
	}
	var tr *reqTrace
	if p.Record != nil {
		tr = &reqTrace{}
	}
	gate := func(info httptrace.GotConnInfo) {
		if sent != nil {
			sent.GotConn(info)
		}
		for {
			now := p.Now()
			w := p.pacer.begin(now, d, keys...)
			if w <= 0 {
				if tr != nil {
					tr.mu.Lock()
					tr.starts = append(tr.starts, now)
					tr.mu.Unlock()
				}
				return
			}
			if p.Sleep(ctx, w) != nil {
				return
			}
		}
	}
	trace := &httptrace.ClientTrace{GotConn: gate}
	if sent != nil {
		trace.GotFirstResponseByte = sent.GotFirstByte
	}
	return httptrace.WithClientTrace(ctx, trace), tr, nil
}

// robotsFailure is a robots.txt download that got no response: URL the
// file, Err why (a *fetch.Error), Rules the rules the cache then applies to
// the site (disallow all, allow all under robots_tout_ignore, or an older
// copy of the file).
type robotsFailure struct {
	URL   string
	Err   error
	Rules *robots.Rules
}

// robotsFor returns the robots rules of the job's site, downloading them
// (paced like any request) when the cache has none. fresh is true for the
// one step that downloaded them; failed is set when that download got no
// response.
func (p *Pipeline) robotsFor(ctx context.Context, j *Job) (rules *robots.Rules, fresh bool, failed *robotsFailure, err error) {
	if r, ok := j.S.RobotsCache.Lookup(j.Fetch.URI); ok {
		return r, false, nil, nil
	}
	key, err := robots.SiteKey(j.Fetch.URI)
	if err != nil {
		return nil, false, nil, err
	}
	key = j.S.Name + "\x00" + key
	p.mu.Lock()
	if c, ok := p.flight[key]; ok {
		p.mu.Unlock()
		select {
		case <-c.done:
			return c.rules, false, nil, c.err
		case <-ctx.Done():
			return nil, false, nil, ctx.Err()
		}
	}
	c := &robotsCall{done: make(chan struct{})}
	p.flight[key] = c
	p.mu.Unlock()
	defer func() {
		c.rules, c.err = rules, err
		close(c.done)
		p.mu.Lock()
		delete(p.flight, key)
		p.mu.Unlock()
	}()
	if r, ok := j.S.RobotsCache.Lookup(j.Fetch.URI); ok {
		return r, false, nil, nil
	}
	rd := j.S.delayAt(p.Now())
	rctx, tr, err := p.wait(ctx, j, rd, nil)
	if err != nil {
		return nil, false, nil, err
	}
	// The download runs here, on the traced context, rather than through
	// RobotsCache.Get (which detaches it): the pacer then holds the
	// robots.txt request at the moment it is written, like any other.
	// p.flight already makes concurrent steps of the site share it.
	ru, err := robots.RobotsURL(j.Fetch.URI)
	if err != nil {
		return nil, false, nil, err
	}
	res := j.S.robotsOpts.Load(rctx, ru)
	if tr != nil {
		p.record(tr, j, ru, true, rd)
	}
	if err := ctx.Err(); err != nil {
		return nil, false, nil, err
	}
	if res.URL == "" {
		res.URL = ru
	}
	r, err := j.S.RobotsCache.Put(j.Fetch.URI, robots.FromFetch(res, j.S.robotsOpts.Token, j.S.robotsOpts.Policy))
	if err != nil {
		return nil, false, nil, err
	}
	if res.Err != nil {
		failed = &robotsFailure{URL: ru, Err: res.Err, Rules: r}
	}
	return r, true, failed, nil
}

// Process runs one crawl step (everything but the store commit, which the
// node scheduler's event loop does).
func (p *Pipeline) Process(ctx context.Context, j *Job) *Outcome {
	s := j.S
	out := &Outcome{Job: j}
	u, err := url.Parse(j.Fetch.URI)
	if err != nil || !schemeAllowed(s, u.Scheme) {
		out.Skipped, out.SkipReason = "scheme", "allowed_schemes"
		return out
	}
	if ip, err := netip.ParseAddr(j.Fetch.IP); err == nil && s.Filter.UsesIP() {
		if ok, reason := s.Filter.Allowed(j.Fetch.URI, ip); !ok {
			out.Skipped, out.SkipReason = "excluded", reason
			return out
		}
	}
	if s.Score != nil {
		s.Score.bind(j.Store)
	}
	if j.Fetch.QueueFlags&frontier.QFReextract != 0 && p.reextract(ctx, out, u) {
		return out
	}
	delay := s.delayAt(p.Now())
	if s.FetchRobots && u.Scheme != "ftp" {
		rules, fresh, failed, err := p.robotsFor(ctx, j)
		if err != nil {
			out.Err, out.Kind = err, fetch.KindCanceled
			return out
		}
		if fresh {
			out.RobotsFresh, out.RobotsFailed = true, failed
			out.Sitemaps = rules.Sitemaps
			if d, ok := rules.CrawlDelay(); ok {
				out.CrawlDelay = d
			}
		}
		delay = rules.Delay(delay, s.ObeyRobotsDelay)
		if s.Robots && !rules.Allowed(j.Fetch.URI) {
			out.Skipped = "robots"
			return out
		}
	}
	var sent SentCounter
	fctx, tr, err := p.wait(ctx, j, delay, &sent)
	if err != nil {
		out.Err, out.Kind = err, fetch.KindCanceled
		return out
	}
	req := fetch.Request{URL: j.Fetch.URI}
	if s.IfModifiedSince && j.Prev != nil && (j.Prev.Status == store.StatusFetched || j.Prev.Status == store.StatusNotModified || j.Prev.Status == store.StatusDuplicate) {
		if t, err := time.Parse(time.RFC1123, j.Prev.LastModified); err == nil {
			req.IfModifiedSince = t
		}
		req.ETag = j.Prev.ETag
	}
	applyPayload(s, &req)
	req.Capture = s.WARC != nil
	out.Start = p.Now()
	resp, err := fetchDoc(fctx, s, fetcherFor(s, j), u, req)
	out.Duration = p.Now().Sub(out.Start)
	out.BytesSent = sent.Total()
	if tr != nil {
		p.record(tr, j, j.Fetch.URI, false, delay)
	}
	out = p.process(ctx, out, u, resp, err)
	archive(ctx, s.WARC, out, resp)
	return out
}

// reextract serves an entry queued again by a shorter path without a
// request when the URI was fetched earlier in the same cycle: a redirect
// is followed again from its stored target, a document's links are taken
// again from its stored body (as after a 304), and a URI whose fetch gave
// no links (an error, an excluded type) gives none again. It reports false
// when nothing usable is stored (the fetch of the longer path is still in
// flight): then the URI is fetched.
func (p *Pipeline) reextract(ctx context.Context, out *Outcome, u *url.URL) bool {
	j := out.Job
	prev := j.Prev
	if prev == nil || prev.LastFetched.IsZero() || prev.LastFetchedCycle != j.Fetch.Cycle {
		return false
	}
	switch prev.Status {
	case store.StatusRedirect:
		if prev.Location == "" {
			return false
		}
		out.Reextracted = true
		flag := uint32(cmt.URIFRedirect302)
		switch {
		case prev.HTTPCode == 200:
			flag = uint32(cmt.URIFMetaRefresh)
		case prev.HTTPCode == 300:
			flag = uint32(cmt.URIFRedirect300)
		case prev.HTTPCode == 301 || prev.HTTPCode == 308:
			flag = uint32(cmt.URIFRedirect301)
		}
		p.redirect(out, u, prev.Location, j.Fetch.Hops, j.Meta.Redirects, flag)
		return true
	case store.StatusFetched, store.StatusNotModified, store.StatusDuplicate:
		body, ok, err := j.Store.Document(j.S.Name, j.Fetch.URI)
		if err == nil && !ok && prev.Status == store.StatusDuplicate && !j.S.ExtractLinksFromDupes {
			// A duplicate's links are not followed and its body is not
			// kept (store_dupes): a shorter path changes nothing.
			out.Reextracted = true
			return true
		}
		if err != nil || !ok {
			return false
		}
		out.Reextracted = true
		p.process(ctx, out, u, &fetch.Response{URL: j.Fetch.URI, Status: http.StatusNotModified, NotModified: true, Body: body,
			ContentType: prev.ContentType, Header: http.Header{"Content-Type": {prev.ContentType}}}, nil)
		return true
	case store.StatusError, store.StatusExcluded, store.StatusDeleted:
		// Fetched in this cycle without links to follow (an error, a
		// type or size decision): a shorter path changes nothing, and a
		// second request in the same cycle is http_errors' business.
		out.Reextracted = true
		return true
	}
	return false
}

// process turns a response (or a fetch error) into the outcome's
// document, checksum and links.
func (p *Pipeline) process(ctx context.Context, out *Outcome, u *url.URL, resp *fetch.Response, err error) *Outcome {
	j, s := out.Job, out.Job.S
	if resp != nil {
		out.Status = resp.Status
		out.ContentType = resp.ContentType
		out.BytesOnWire = resp.BytesOnWire
		out.Truncated = resp.Truncated
		out.Proto, out.Header = resp.Proto, resp.Header
		if resp.Header != nil {
			out.ETag = resp.Header.Get("ETag")
			out.LastModified = resp.Header.Get("Last-Modified")
		}
	}
	if err != nil {
		out.Err, out.Kind = err, fetch.KindOf(err)
		return out
	}
	out.NotModified = resp.NotModified
	body := resp.Body
	if resp.NotModified && j.Prev != nil {
		if b, ok, err := j.Store.Document(s.Name, j.Fetch.URI); err == nil && ok {
			body = b
		}
		out.ContentType = j.Prev.ContentType
		if out.ETag == "" {
			out.ETag = j.Prev.ETag
		}
		if out.LastModified == "" {
			out.LastModified = j.Prev.LastModified
		}
		out.Checksum, out.HasChecksum = j.Prev.Checksum, j.Prev.HasChecksum
	}
	out.Body = body
	hops, redirects := j.Fetch.Hops, j.Meta.Redirects
	switch {
	case resp.Status >= 300 && resp.Status < 400 && !resp.NotModified:
		loc := resp.Header.Get("Location")
		if loc == "" {
			return out
		}
		flag := uint32(cmt.URIFRedirect302)
		switch resp.Status {
		case 300:
			flag = uint32(cmt.URIFRedirect300)
		case 301, 308:
			flag = uint32(cmt.URIFRedirect301)
		}
		p.redirect(out, u, loc, hops, redirects, flag)
		return out
	case resp.Status != 200 && !resp.NotModified:
		return out
	}
	if j.Fetch.URIFlags&uint32(cmt.URIFSitemap) != 0 {
		p.sitemap(out, body)
		return out
	}
	if isChannel(s, j) || (s.Feeds != nil && s.Feeds.RSS.AutoDiscover && isFeedType(out.ContentType)) {
		p.channel(out, body, p.Now())
		return out
	}
	html := IsHTML(out.ContentType) && linksWanted(s, u, resp)
	if !html {
		if !out.HasChecksum {
			out.Checksum, out.HasChecksum = extract.ChecksumBytes(body, s.CsumCutOff), true
		}
		return out
	}
	if js := s.jsFor(j.Fetch.Site); js != nil && !resp.NotModified {
		body = p.render(ctx, out, js, body)
	}
	ct := resp.Header.Get("Content-Type")
	res := extract.Extract(body, extract.Options{Kinds: s.Kinds, AgentName: s.AgentToken, ContentType: ct})
	if len(body) > 0 && len(body) == len(out.Body) && &body[0] == &out.Body[0] {
		out.Parsed, out.ParsedType = res, ct
	}
	if s.uriFilesOn() {
		out.Extracted = extractedURIs(s, u, res) // uridir.go
	}
	if !out.HasChecksum || !resp.NotModified {
		out.Checksum, out.HasChecksum = extract.Checksum(res, s.UseMetaCsum, s.CsumCutOff), true
	}
	if s.NearDuplicates {
		out.NearKeys = extract.NearKeys(res, s.UseMetaCsum, s.CsumCutOff)
	}
	if s.CheckMetaRobots {
		out.NoIndex, out.NoFollow = res.Robots.NoIndex, res.Robots.NoFollow
	}
	if !fetch.TypeAllowed(s.URISearchMIME, out.ContentType) || !fetch.TypeAllowed(s.AllowedTypes, out.ContentType) {
		return out
	}
	if s.HTMLRedirIsRedir && res.Refresh.Present && res.Refresh.IsRedirect(s.HTMLRedirThresh) {
		target, err := res.Resolve(u, res.Refresh.URL)
		if err == nil {
			p.redirect(out, u, target.String(), hops, redirects, uint32(cmt.URIFMetaRefresh))
		}
		return out
	}
	offLang := 0
	if s.Opt != nil && s.Opt.focused != nil {
		var keep bool
		out.Language, keep, offLang = s.focusedDoc(j, res.Text)
		if !keep {
			out.Unwanted = "language"
		}
		if offLang < 0 {
			return out
		}
	}
	if out.NoFollow || (j.Meta.Flags&metaFeedItem != 0 && s.Feeds != nil && !s.Feeds.RSS.FollowLinks) {
		return out
	}
	pageLinks(out, s, u, res, hops, offLang) // pagelinks.go
	return out
}

func (p *Pipeline) redirect(out *Outcome, from *url.URL, loc string, hops, redirects int, flag uint32) {
	s := out.Job.S
	t, err := from.Parse(strings.TrimSpace(loc))
	if err != nil {
		return
	}
	nu, reason := ScreenReason(s, t.String())
	if reason != "" {
		out.screened(t.String(), reason)
		// Record the target even when it is not followed.
		if n, err := s.Normalizer.Normalize(t.String(), nil); err == nil {
			out.Location = n.String()
		}
		return
	}
	out.Location = nu.String()
	if redirects+1 > s.MaxRedirects {
		return
	}
	if !sameHost(from, nu) && !s.FwdRedirects {
		return
	}
	out.Links = append(out.Links, Link{URI: nu.String(), Site: urls.Site(nu), Hops: hops, Redirects: redirects + 1, Flags: flag, OffLang: out.Job.Meta.OffLang})
}

func (p *Pipeline) sitemap(out *Outcome, body []byte) {
	s := out.Job.S
	sm, err := extract.ParseSitemap(body, extract.SitemapOptions{})
	if err != nil && len(sm.URLs)+len(sm.Sitemaps) == 0 {
		return
	}
	p.sitemapLinks(out, sm)
	for _, l := range sm.Sitemaps {
		if nu, ok := ScreenSitemap(s, l.Loc); ok {
			out.Links = append(out.Links, Link{URI: nu.String(), Site: urls.Site(nu), Flags: uint32(cmt.URIFSitemap)})
		}
	}
}

// screen normalizes a discovered absolute URI and applies the rules that do
// not need the host's address: allowed_schemes, exclude_exts,
// max_uri_recursion and the include/exclude rules (IP rules are checked again
// when the URI is served).
func (p *Pipeline) screen(s *Settings, raw string) (*url.URL, bool) {
	return Screen(s, raw)
}

// Screen is the pipeline's URI screening, exported for start URIs and entries
// received from the multinode scheduler.
func Screen(s *Settings, raw string) (*url.URL, bool) {
	nu, reason := ScreenReason(s, raw)
	return nu, reason == ""
}

// ScreenReason is Screen with the reason of a rejection ("" when the URI
// passes): "invalid URI", "allowed_schemes", "exclude_exts",
// "max_uri_recursion" or the rule the filter names ("exclude_uris
// suffix:.exe", "include_domains", ...).
func ScreenReason(s *Settings, raw string) (*url.URL, string) {
	nu, err := s.Normalizer.Normalize(raw, nil)
	if err != nil {
		return nil, "invalid URI"
	}
	s.unmirror(nu)
	return screenURL(s, nu, nu.String())
}

// screenURL is ScreenReason's rules after normalization, for nu (normalized
// and unmirrored), whose string is ns.
func screenURL(s *Settings, nu *url.URL, ns string) (*url.URL, string) {
	// allowed_schemes is the URI's own (its subcollection's), whichever
	// page the link was found on.
	if !schemeAllowed(s.For(ns), nu.Scheme) {
		return nil, "allowed_schemes"
	}
	if s.ExcludeExts.Excluded(nu.EscapedPath()) {
		return nil, "exclude_exts"
	}
	if s.MaxRecursion > 0 && urls.PathRecursion(nu.EscapedPath()) > s.MaxRecursion {
		return nil, "max_uri_recursion"
	}
	if ok, reason := s.Filter.Allowed(ns, netip.Addr{}); !ok && !s.Filter.UsesIP() {
		return nil, reason
	} else if !ok {
		// An include rule on IP addresses cannot match before DNS; an
		// exclude rule that matched without the IP stays a rejection.
		if excludedWithoutIP(s, ns) {
			return nu, reason
		}
	}
	return nu, ""
}

func excludedWithoutIP(s *Settings, uri string) bool {
	ok, reason := s.Filter.Allowed(uri, netip.Addr{})
	return !ok && strings.HasPrefix(reason, "exclude")
}

func sameHost(a, b *url.URL) bool { return strings.EqualFold(a.Hostname(), b.Hostname()) }

func IsHTML(ct string) bool {
	switch ct {
	case "text/html", "application/xhtml+xml", "text/vnd.wap.wml", "text/wml", "text/x-wap.wml", "x-application/wml", "text/x-hdml", "text/vnd.wap.xml":
		return true
	}
	return false
}

var ErrStopped = errors.New("nodesched: stopped")

var _ = bytes.Equal
