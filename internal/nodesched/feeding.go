package nodesched

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/cockroachdb/pebble"
	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/config"
	"github.com/trawl/trawl/internal/crawllog"
	"github.com/trawl/trawl/internal/extract"
	"github.com/trawl/trawl/internal/feed"
	"github.com/trawl/trawl/internal/nodesched/crawlpipe"
	"github.com/trawl/trawl/internal/store"
)

// Feeding: every crawl step that changes what a search should find puts a
// content operation (internal/feed) in the outbox of its collection, in the
// same store batch as the step itself, so that after any crash the outbox
// and the crawl store agree: nothing is lost and nothing is fed twice. The
// outboxes live in the crawl store's Pebble database, one key space per
// collection under the metadata space:
//
//	'm' "feed/o/" lp(collection) ...      the collection's feed.Outbox
//	'm' "feed/i/" lp(collection) uri      -> checksum (16 bytes, or empty)
//	'm' "feed/A/" lp(collection) lp(uri) text -> when the link was seen (feeding_anchors.go)
//	'm' "feed/a/" lp(collection) uri      -> anchor texts of links to uri (until 2026-11-26)
//	'm' "feed/r/" lp(collection)          -> refeed cycle (varint)
//
// The second key space remembers which URIs were fed as present (the last
// operation put for them was an add or update, with that content
// checksum); it is what decides between add, update, remove and nothing:
//
//   - a fetched (or 304) document that is neither a duplicate nor noindex
//     is added when not marked, updated when its checksum differs from
//     the mark, and left alone otherwise;
//   - a duplicate, a noindex page, a deleted URI (http_errors DELETE,
//     dbswitch_delete, CMD_UM_DELETE_SITE, CMD_UM_DELETE_URIS, a removed
//     collection), an excluded URI or a redirect is removed when marked;
//   - a failed fetch that is not (yet) a deletion changes nothing: a
//     transient error is never taken for a deletion.
//
// An operation resubmits the document even when the mark says it was fed
// as it is (force) when its queue entry carries URIF_FORCE_REFEED (an
// administrator's CollectionRefetchURI with Refeed) or when it is fetched
// in the refresh cycle an administrator's CollectionRefetch started (a
// CMD_ADM_CONF_REFRESH with REFRESH_COLLECTION or REFRESH_SUBCOLLECTION).
//
// Every crawl step records, in its own batch, the anchor text of the links
// it found under their targets (feeding_anchors.go); a document's operation
// carries the anchors recorded when it is fed (at most maxAnchors distinct
// texts, the oldest dropped first).
//
// With duplicate servers the answer (PPDUP_ADD_OK) comes after the step:
// a new document is fed at once and removed again if it turns out to be a
// duplicate; a document that was a duplicate and comes back unchanged is
// fed only if PPDUP_ADD_OK makes it the checksum's owner.

// FeedConfig turns document feeding on in a Driver.
type FeedConfig struct {
	// Dial creates sessions with the content destinations (for the
	// embedded index: feed.IndexDialer).
	Dial feed.Dialer
	// Feeder configures each collection's feed.Feeder (batching, window,
	// backoff, OnResult).
	Feeder feed.FeederOptions
	// Logs, if set, receives the dsfeed log of the collections that
	// have it on (crawllog.go), stamped with Now (default time.Now).
	Logs *crawllog.Logs
	Now  func() time.Time
}

// Feeding keeps the feeding chain of a node scheduler: per collection an
// outbox in the crawl store's database and a feed.Feeder over the
// collection's content destinations (its feeding section). The Machine
// puts operations in the outboxes; Run runs the feeders. A collection
// removed from the crawl keeps its feeder until the process ends, so that
// its removals reach the destinations.
type Feeding struct {
	st  *store.Store
	cfg FeedConfig
	log *slog.Logger

	mu    sync.Mutex
	ctx   context.Context // set while Run runs
	wg    sync.WaitGroup
	colls map[string]*feedColl
}

type feedColl struct {
	name    string
	ob      *feed.Outbox
	targets []feed.Target
	feeder  *feed.Feeder
	cancel  context.CancelFunc // of the running feeder
	done    chan struct{}
	state   FeedingState
	// dsfeed says whether the collection's dsfeed log is on.
	dsfeed atomic.Bool
	// results counts the primary destinations' answers in this process
	// (feedResults); base is what earlier processes counted (read when
	// the collection's feeding was set up), acked the answers counted
	// with their acknowledgement (onAck), which the "stats/f/" record
	// holds.
	results     feedResults
	base, acked FeedResults
}

// feedResults counts the answers of a collection's primary destinations
// (feed.FeederOptions.OnResult) for the MS-FSCADM PP statistics; the
// feeders' goroutines update them.
type feedResults struct {
	fed, succeeded, failed, deleted atomic.Int64
}

func (r *feedResults) add(res feed.Result) {
	d := resultCounts(res)
	r.fed.Add(d.Fed)
	r.succeeded.Add(d.Succeeded)
	r.failed.Add(d.Failed)
	r.deleted.Add(d.Deleted)
}

// resultCounts is what one answer adds to the counters: a rejected
// operation is failed (and fed unless a removal), a removal deleted, any
// other fed and succeeded.
func resultCounts(res feed.Result) FeedResults {
	switch {
	case res.Err != nil && res.Kind != feed.Remove:
		return FeedResults{Failed: 1, Fed: 1}
	case res.Err != nil:
		return FeedResults{Failed: 1}
	case res.Kind == feed.Remove:
		return FeedResults{Deleted: 1}
	default:
		return FeedResults{Fed: 1, Succeeded: 1}
	}
}

// onAck adds the answers rs to fc.acked and writes the "stats/f/" record
// into b, the outbox batch that acknowledges them (the outbox serializes
// the calls): after a kill -9 the record counts exactly the answers whose
// operations the outbox forgot, and the others are sent and counted
// again.
func (fc *feedColl) onAck(b *pebble.Batch, rs []feed.Result) error {
	for _, r := range rs {
		d := resultCounts(r)
		fc.acked.Fed += d.Fed
		fc.acked.Succeeded += d.Succeeded
		fc.acked.Failed += d.Failed
		fc.acked.Deleted += d.Deleted
	}
	return b.Set(statsFeedRawKey(fc.name), fc.acked.encode(), nil)
}

// syncFeedCounters copies the answers counted for collection c into its
// counters (pp_fed, pp_succeeded, pp_failed, pp_deleted: cumulative,
// like every counter), so that Stats and CMD_UM_STAT carry them.
func (m *Machine) syncFeedCounters(c *collection) {
	m.syncURIFileCounters(c) // uridir.go
	if !m.cfg.Feeds {
		return
	}
	r, ok := m.feedResults[c.s.Name] // given by the driver (FeedResults)
	if !ok {
		return
	}
	for k, v := range map[string]int64{"pp_fed": r.Fed, "pp_succeeded": r.Succeeded, "pp_failed": r.Failed, "pp_deleted": r.Deleted} {
		if v != 0 {
			c.stats[k] = v // every process's (FeedResults)
		}
	}
}

// NewFeeding returns the feeding chain of the node scheduler over st.
func NewFeeding(st *store.Store, cfg FeedConfig, log *slog.Logger) (*Feeding, error) {
	if cfg.Dial == nil {
		return nil, errors.New("nodesched: feeding without a dialer")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.Feeder.Logger == nil {
		cfg.Feeder.Logger = log
	}
	return &Feeding{st: st, cfg: cfg, log: log, colls: map[string]*feedColl{}}, nil
}

const (
	feedOutboxPrefix = "feed/o/"
	feedMarkPrefix   = "feed/i/"
	feedAnchorPrefix = "feed/a/" // a target's anchor list (before 2026-11-26, read and migrated)
	feedPairPrefix   = "feed/A/" // one (target, anchor text) pair a key
	feedRefeedPrefix = "feed/r/"
)

// maxAnchors bounds the anchor texts kept for one URI, maxAnchorBytes one
// anchor text.
const (
	maxAnchors     = 32
	maxAnchorBytes = 256
)

func outboxPrefix(coll string) string {
	return string(store.SpaceMeta) + feedOutboxPrefix + string(store.AppendLP(nil, coll))
}

func markPrefix(coll string) []byte {
	return store.AppendLP([]byte(feedMarkPrefix), coll)
}

func markKey(coll, uri string) []byte { return append(markPrefix(coll), uri...) }

// setup makes sure coll has an outbox and a feeder for its current
// feeding section; a changed section replaces the feeder (operations for
// destinations no longer configured stay in the outbox).
//
// st is the collection's suspension, in force before its feeder starts
// (a suspended collection restored from the store feeds nothing).
func (f *Feeding) setup(coll string, dests []config.Destination, dsPaused bool, st FeedingState) (*feedColl, error) {
	targets, err := collTargets(coll, dests, dsPaused)
	if err != nil {
		return nil, fmt.Errorf("nodesched: collection %s: %w", coll, err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	fc := f.colls[coll]
	if fc != nil && sameTargets(fc.targets, targets) {
		fc.state = st
		f.applyState(fc)
		return fc, nil
	}
	if fc == nil {
		ob, err := feed.NewOutbox(f.st.DB(), feed.OutboxOptions{Prefix: outboxPrefix(coll), NoSync: true, SyncOnClaim: true})
		if err != nil {
			return nil, fmt.Errorf("nodesched: collection %s: %w", coll, err)
		}
		base, err := readFeedCounts(f.st, coll)
		if err != nil {
			return nil, fmt.Errorf("nodesched: collection %s: %w", coll, err)
		}
		fc = &feedColl{name: coll, ob: ob, base: base, acked: base}
		f.colls[coll] = fc
	} else {
		f.stopLocked(fc)
	}
	opts := f.cfg.Feeder
	next := opts.OnResult
	opts.OnResult = func(r feed.Result) {
		fc.results.add(r)
		if fc.dsfeed.Load() {
			f.logResult(coll, r)
		}
		if next != nil {
			next(r)
		}
	}
	opts.OnAck = fc.onAck
	fr, err := feed.NewFeeder(fc.ob, targets, f.cfg.Dial, opts)
	if err != nil {
		return nil, fmt.Errorf("nodesched: collection %s: %w", coll, err)
	}
	fc.targets, fc.feeder, fc.state = targets, fr, st
	f.applyState(fc)
	if f.ctx != nil {
		f.startLocked(fc)
	}
	return fc, nil
}

// collTargets returns the content destinations of a collection (see
// feed.Targets); pp/ds_paused (MS-FSCCFG 2.2.4.7) pauses every one of
// them, as paused="yes" in each content destination would.
func collTargets(coll string, dests []config.Destination, dsPaused bool) ([]feed.Target, error) {
	ts, err := feed.Targets(coll, dests)
	if err != nil {
		return nil, err
	}
	if dsPaused {
		for i := range ts {
			ts[i].Paused = true
		}
	}
	return ts, nil
}

func sameTargets(a, b []feed.Target) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func (f *Feeding) startLocked(fc *feedColl) {
	ctx, cancel := context.WithCancel(f.ctx)
	fc.cancel, fc.done = cancel, make(chan struct{})
	fr, done := fc.feeder, fc.done
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		defer close(done)
		if err := fr.Run(ctx); err != nil {
			f.log.Error("nodesched: feeder stopped", "collection", fc.name, "err", err)
		}
	}()
}

func (f *Feeding) stopLocked(fc *feedColl) {
	if fc.cancel != nil {
		fc.cancel()
		<-fc.done
		fc.cancel, fc.done = nil, nil
	}
}

// Run runs the feeders until ctx ends; operations not yet acknowledged
// stay in the outboxes for the next run.
func (f *Feeding) Run(ctx context.Context) error {
	f.mu.Lock()
	if f.ctx != nil {
		f.mu.Unlock()
		return errors.New("nodesched: feeding already running")
	}
	f.ctx = ctx
	for _, fc := range f.colls {
		f.startLocked(fc)
	}
	f.mu.Unlock()
	<-ctx.Done()
	f.wg.Wait()
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, fc := range f.colls {
		fc.cancel, fc.done = nil, nil
	}
	f.ctx = nil
	return nil
}

// setSuspended applies a collection's CMD_ADM_CONF_FEEDING_SUSPEND state.
func (f *Feeding) setSuspended(coll string, st FeedingState) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if fc := f.colls[coll]; fc != nil {
		fc.state = st
		f.applyState(fc)
	}
}

func (f *Feeding) applyState(fc *feedColl) {
	if fc.feeder == nil {
		return
	}
	// A destination is suspended when the whole collection is, when a
	// command named it, or when the configuration pauses it and no
	// administrator resumed it (FeedingState).
	var suspend, resume []string
	for _, t := range fc.targets {
		off := fc.state.All || (t.Paused && !fc.state.Resumed[t.Name])
		for d := range fc.state.Destinations {
			off = off || targetNamed(t, d)
		}
		if off {
			suspend = append(suspend, t.Name)
		} else {
			resume = append(resume, t.Name)
		}
	}
	if len(resume) > 0 {
		_ = fc.feeder.SetSuspended(false, resume...)
	}
	if len(suspend) > 0 {
		_ = fc.feeder.SetSuspended(true, suspend...)
	}
	var unknown []string
	for d := range fc.state.Destinations {
		known := false
		for _, t := range fc.targets {
			known = known || targetNamed(t, d)
		}
		if !known {
			unknown = append(unknown, d)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		f.log.Warn("nodesched: CMD_ADM_CONF_FEEDING_SUSPEND names unknown content destinations", "collection", fc.name, "destinations", unknown)
	}
}

// coll returns the feeding state of a collection, nil if none.
func (f *Feeding) coll(name string) *feedColl {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.colls[name]
}

// Pending returns the number of operations not yet acknowledged, over
// every collection and destination.
func (f *Feeding) Pending() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, fc := range f.colls {
		for _, t := range fc.targets {
			n += fc.ob.Pending(t.Name)
		}
	}
	return n
}

// Stats returns the feeders' counters by crawl collection.
func (f *Feeding) Stats() map[string][]feed.TargetStats {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string][]feed.TargetStats{}
	for name, fc := range f.colls {
		if fc.feeder != nil {
			out[name] = fc.feeder.Stats()
		}
	}
	return out
}

// --- the Machine's side ---

// feedOps are the content operations of one store batch, before they are
// copied for each destination.
type feedOps []feed.Operation

// feedDeleted adds to the current batch's operations the removal of uri,
// deleted from the crawl store in b.
func (m *Machine) feedDeleted(c *collection, b *store.Batch, uri string) error {
	m.uriFileGone(c, b, uri) // uridir.go: its URI file goes too
	if m.cfg.Feeds {
		m.setListed(c, uri, listing{}) // reported.go
	}
	ops, err := m.feedForget(c, b, uri)
	m.stepFeed = append(m.stepFeed, ops...)
	return err
}

// feedSetup is called when a collection is added or reconfigured (with
// its compiled settings s and its feeding suspension state).
func (m *Machine) feedSetup(name string, s *crawlpipe.Settings, st FeedingState) error {
	if !m.cfg.Feeds {
		return nil
	}
	if _, err := collTargets(name, s.Eff.Feeding(), s.DSPaused); err != nil {
		return fmt.Errorf("nodesched: collection %s: %w", name, err)
	}
	m.feedConfs = append(m.feedConfs, feedConf{coll: name, dests: s.Eff.Feeding(), dsPaused: s.DSPaused,
		state: st.clone(), dsfeed: s.Logs.On(crawllog.DSFeed)}) // records.go
	return nil
}

// takeStepFeed returns and clears the operations of the current step.
func (m *Machine) takeStepFeed() []feed.Operation {
	ops := m.stepFeed
	m.stepFeed = nil
	return ops
}

// feedSuspended passes a changed CMD_ADM_CONF_FEEDING_SUSPEND state on.
func (m *Machine) feedSuspended(c *collection) {
	if m.cfg.Feeds {
		m.feedConfs = append(m.feedConfs, feedState{coll: c.s.Name, state: c.feeding.clone()}) // records.go
	}
}

// mark returns the feeding mark of uri: whether it was fed as present,
// and with which checksum (nil when unknown).
func (m *Machine) mark(coll, uri string) (fed bool, sum []byte, err error) {
	if c := m.colls[coll]; c != nil && !m.mayExist(c, famMark, uri) { // keyfilter.go
		return false, nil, nil
	}
	v, ok, err := m.st.GetRaw(store.SpaceMeta, markKey(coll, uri))
	return ok, v, err
}

// docOp builds the add (or update) of a document.
func docOp(rec *store.URIRecord, body []byte, flags uint32, update bool) feed.Operation {
	op := feed.Operation{Kind: feed.Add, Priority: feed.PriorityOf(flags), URI: rec.URI, MIME: rec.ContentType, Content: body}
	if update {
		op.Kind = feed.Update
	}
	if rec.ContentType != "" {
		op.Meta.Headers = append(op.Meta.Headers, feed.Header{Name: "Content-Type", Value: rec.ContentType})
	}
	if rec.ETag != "" {
		op.Meta.Headers = append(op.Meta.Headers, feed.Header{Name: "ETag", Value: rec.ETag})
	}
	if rec.LastModified != "" {
		op.Meta.Headers = append(op.Meta.Headers, feed.Header{Name: "Last-Modified", Value: rec.LastModified})
		if t, err := http.ParseTime(rec.LastModified); err == nil {
			op.Meta.LastModified = t.UTC()
		}
	}
	if rec.HasChecksum {
		op.Meta.Checksum = append([]byte(nil), rec.Checksum[:]...)
	}
	return op
}

func checksumOf(rec *store.URIRecord) []byte {
	if rec.HasChecksum {
		return append([]byte(nil), rec.Checksum[:]...)
	}
	return nil
}

// feedPresent puts in b the mark of a document to be present and returns
// its operation, or nothing when the mark says it was fed as it is.
// A crawl step that parsed body as HTML passes its text (nil: none): the
// operation then carries the text instead of the document, which the
// destination would parse again.
func (m *Machine) feedPresent(c *collection, b *store.Batch, rec *store.URIRecord, body []byte, text *feed.Extracted, flags uint32, force bool) ([]feed.Operation, error) {
	fed, sum, err := m.mark(c.s.Name, rec.URI)
	if err != nil {
		return nil, err
	}
	cs := checksumOf(rec)
	if fed && !force && cs != nil && string(sum) == string(cs) {
		return nil, nil
	}
	c.keyAdded(famMark, rec.URI)
	if err := b.SetRaw(store.SpaceMeta, markKey(c.s.Name, rec.URI), cs); err != nil {
		return nil, err
	}
	op := docOp(rec, body, flags, fed)
	if text != nil {
		op.SetText(*text)
	}
	if op.Anchors, err = m.feedAnchors(c, b, rec.URI); err != nil {
		return nil, err
	}
	if c.s.DSSendLinks {
		op.Links = docLinks(c.s, rec, body)
	}
	// Duplicates, redirects, mirrors and metadata (reported.go).
	m.reportLists(c, &op)
	switch { // PPAdded, PPModified (collection counters only)
	case !fed:
		c.stats["pp_added"]++
	case cs != nil && string(sum) != string(cs):
		c.stats["pp_modified"]++
	}
	return []feed.Operation{op}, nil
}

// feedAbsent puts in b the removal of uri's mark and returns its remove
// operation, or nothing when uri was not fed.
func (m *Machine) feedAbsent(c *collection, b *store.Batch, uri string) ([]feed.Operation, error) {
	fed, _, err := m.mark(c.s.Name, uri)
	if err != nil || !fed {
		return nil, err
	}
	if err := b.DeleteRaw(store.SpaceMeta, markKey(c.s.Name, uri)); err != nil {
		return nil, err
	}
	return []feed.Operation{{Kind: feed.Remove, URI: uri}}, nil
}

// feedStep decides what a crawl step means for the index (see the
// comment at the top of this file); the operations are kept in m.stepFeed
// until Complete commits the step.
func (m *Machine) feedStep(c *collection, b *store.Batch, rec *store.URIRecord, o *crawlpipe.Outcome) error {
	m.stepFeed = nil
	if !m.cfg.Feeds {
		return nil
	}
	if err := m.recordAnchors(c, b, o.Links); err != nil {
		return err
	}
	j := o.Job
	force := j.Fetch.URIFlags&uint32(cmt.URIFForceRefeed) != 0
	if rc := m.refeedCycle(c); rc > 0 && j.Fetch.Cycle == rc {
		force = true
	}
	dupPending := c.s.UseDupServers && len(m.ds) > 0 && j.Prev != nil && j.Prev.Status == store.StatusDuplicate &&
		j.Prev.HasChecksum && rec.HasChecksum && j.Prev.Checksum == rec.Checksum
	m.listStep(c, rec, dupPending) // reported.go
	var ops []feed.Operation
	var err error
	switch {
	case rec.Status == store.StatusError:
		return nil // possibly transient: the index keeps what it has
	case (rec.Status == store.StatusFetched || (rec.Status == store.StatusNotModified && o.Body != nil)) && !o.NoIndex && !dupPending:
		var text *feed.Extracted
		if x, ok := feed.ParsedText(rec.ContentType, o.ParsedType, o.Parsed); ok {
			text = &x
		}
		ops, err = m.feedPresent(c, b, rec, o.Body, text, j.Fetch.URIFlags, force)
	default:
		ops, err = m.feedAbsent(c, b, rec.URI)
	}
	m.stepFeed = ops
	return err
}

// feedDuplicate is PPDUP_ADD_OK's part: a duplicate goes, the checksum's
// owner comes (again) if it was not fed.
func (m *Machine) feedDuplicate(c *collection, b *store.Batch, rec *store.URIRecord) ([]feed.Operation, error) {
	if !m.cfg.Feeds {
		return nil, nil
	}
	if rec.Status == store.StatusDuplicate {
		return m.feedAbsent(c, b, rec.URI)
	}
	if rec.Status != store.StatusFetched && rec.Status != store.StatusNotModified {
		return nil, nil
	}
	if fed, _, err := m.mark(c.s.Name, rec.URI); err != nil || fed {
		return nil, err
	}
	body, ok, err := m.st.Document(c.s.Name, rec.URI)
	if err != nil || !ok || m.noIndex(c, rec, body) {
		return nil, err
	}
	return m.feedPresent(c, b, rec, body, nil, 0, false)
}

// maxDocLinks caps the links sent with one document (pp/ds_send_links).
const maxDocLinks = 1000

// docLinks returns the hyperlinks extracted from a stored document, as
// the crawl step extracts them (link_extraction), resolved to absolute
// URIs and normalized as the crawl normalizes URIs, each once, in document order, at most maxDocLinks: what
// pp/ds_send_links sends to the indexing engine with the document. Links
// are sent whether or not the crawl follows them (screening, nofollow).
func docLinks(s *crawlpipe.Settings, rec *store.URIRecord, body []byte) []string {
	u, err := url.Parse(rec.URI)
	if err != nil || len(body) == 0 {
		return nil
	}
	res := extract.Extract(body, extract.Options{Kinds: s.Kinds, AgentName: s.AgentToken, ContentType: rec.ContentType, MaxLinks: maxDocLinks})
	var out []string
	seen := map[string]bool{}
	base := crawlpipe.LinkBase(u, res)
	for _, l := range res.Links {
		v, err := s.Normalizer.NormalizeRef(l.URL, base)
		if err != nil {
			continue
		}
		if seen[v] || !utf8.ValidString(v) {
			continue
		}
		seen[v] = true
		out = append(out, v)
	}
	return out
}

// noIndex reports whether a stored document carries a robots META noindex
// that the collection obeys.
func (m *Machine) noIndex(c *collection, rec *store.URIRecord, body []byte) bool {
	if !c.s.CheckMetaRobots || !crawlpipe.IsHTML(rec.ContentType) {
		return false
	}
	res := extract.Extract(body, extract.Options{ContentType: rec.ContentType, AgentName: c.s.AgentToken, MaxLinks: 1})
	return res.Robots.NoIndex
}

// feedForget returns the removals of uris (deleted from the crawl store in
// b) and removes their marks in b.
func (m *Machine) feedForget(c *collection, b *store.Batch, uris ...string) ([]feed.Operation, error) {
	if !m.cfg.Feeds {
		return nil, nil
	}
	var ops []feed.Operation
	for _, u := range uris {
		o, err := m.feedAbsent(c, b, u)
		if err != nil {
			return nil, err
		}
		ops = append(ops, o...)
	}
	return ops, nil
}

// feedCommit commits b through commit (onto the machine's staged view)
// with ops (one per target) for the collection's outbox: the driver puts
// them there in the Pebble batch that commits b (records.go).
func (m *Machine) feedCommit(coll string, b *store.Batch, commit func() error, ops []feed.Operation, only string) error {
	if c := m.colls[coll]; c != nil {
		var err error
		if ops, err = m.flushLists(c, b, ops); err != nil { // reported.go
			return err
		}
	} else {
		m.resetLists()
	}
	if err := commit(); err != nil {
		return err
	}
	if m.cfg.Feeds && len(ops) > 0 {
		m.feedPuts = append(m.feedPuts, feedPut{coll: coll, ops: ops, only: only})
	}
	return nil
}

// targetNamed reports whether a destination named in an admin command (a
// destination name, or "default:<content collection>") names t.
func targetNamed(t feed.Target, name string) bool {
	if name == t.Name {
		return true
	}
	c, ok := strings.CutPrefix(name, "default:")
	return ok && c == t.Collection
}

// feedRemoveCollection removes every document a removed collection fed;
// the removals commit with b (which deletes the collection's key spaces).
func (m *Machine) feedRemoveCollection(name string, b *store.Batch) ([]feed.Operation, error) {
	if err := b.DeletePrefix(store.SpaceMeta, anchorPrefix(name)); err != nil {
		return nil, err
	}
	if err := b.DeletePrefix(store.SpaceMeta, pairCollPrefix(name)); err != nil {
		return nil, err
	}
	if err := b.DeleteRaw(store.SpaceMeta, refeedKey(name)); err != nil {
		return nil, err
	}
	if err := forgetLists(b, name); err != nil { // reported.go
		return nil, err
	}
	if !m.cfg.Feeds {
		return nil, nil
	}
	p := markPrefix(name)
	var ops []feed.Operation
	err := m.st.IterRaw(store.SpaceMeta, p, func(k, _ []byte) error {
		ops = append(ops, feed.Operation{Kind: feed.Remove, URI: string(k[len(p):])})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return ops, b.DeletePrefix(store.SpaceMeta, p)
}

// reprocessBatch bounds the operations of one CMD_UM_REPROCESS_SITE commit.
const reprocessBatch = 256

// feedReprocess is CMD_UM_REPROCESS_SITE's resubmission: every stored,
// indexable document of the site whose URI matches is sent again (as an
// update) to the named destination, or to all.
func (m *Machine) feedReprocess(c *collection, site, prefix string, exact bool, dest string) (int, error) {
	if !m.cfg.Feeds {
		return 0, nil
	}
	if ts := c.targets(); len(ts) > 0 && dest != "" {
		known := false
		for _, t := range ts {
			known = known || targetNamed(t, dest)
		}
		if !known {
			m.log.Warn("nodesched: CMD_UM_REPROCESS_SITE names an unknown destination; resubmitting to all", "collection", c.s.Name, "destination", dest)
			dest = ""
		}
	}
	var uris []string
	err := m.st.SiteURIs(c.s.Name, site, func(uri string) error {
		if (exact && uri == prefix) || (!exact && strings.HasPrefix(uri, prefix)) {
			uris = append(uris, uri)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	sent := 0
	for len(uris) > 0 {
		n := min(len(uris), reprocessBatch)
		chunk := uris[:n]
		uris = uris[n:]
		b := m.st.NewBatch()
		var ops []feed.Operation
		for _, uri := range chunk {
			rec, ok, err := m.st.URI(c.s.Name, uri)
			if err != nil {
				b.Discard()
				return sent, err
			}
			if !ok || (rec.Status != store.StatusFetched && rec.Status != store.StatusNotModified) {
				continue
			}
			body, ok, err := m.st.Document(c.s.Name, uri)
			if err != nil {
				b.Discard()
				return sent, err
			}
			if !ok || m.noIndex(c, rec, body) {
				continue
			}
			o, err := m.feedPresent(c, b, rec, body, nil, 0, true)
			if err != nil {
				b.Discard()
				return sent, err
			}
			ops = append(ops, o...)
		}
		if err := m.feedCommit(c.s.Name, b, b.Commit, ops, dest); err != nil {
			return sent, err
		}
		sent += len(ops)
	}
	c.stats.add("reprocessed", int64(sent))
	return sent, nil
}

// FeedPending returns the number of content operations not yet
// acknowledged by their destinations (0 without feeding).
func (d *Driver) FeedPending() int {
	if f := d.feeding.Load(); f != nil {
		return f.Pending()
	}
	return 0
}

// FeedStats returns the feeders' counters by crawl collection (nil without
// feeding).
func (d *Driver) FeedStats() map[string][]feed.TargetStats {
	if f := d.feeding.Load(); f != nil {
		return f.Stats()
	}
	return nil
}
