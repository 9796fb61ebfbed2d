package crawladmin

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/trawl/trawl/internal/admin"
	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/config"
	"github.com/trawl/trawl/internal/stats"
)

// Options configure a Backend.
type Options struct {
	// Role is the role the process reports (IsDistributed,
	// IsMultiNodeScheduler, the status page).
	Role admin.Role
	// Level is the process's log level (a warn level when nil).
	Level *admin.Level
	// Files is the directory AddURIFile and CollectionDeleteURIFile read.
	Files admin.URIFiles
	// Configs are the configuration files the process started with,
	// reread by ConfigurationChanged.
	Configs []string
	// ConfigFrom, when set, names where the process gets its collections
	// instead of files (a node scheduler's multinode scheduler):
	// ConfigurationChanged without Configs is then a fault that says so.
	ConfigFrom string
	// Store, when set, keeps the collections added over the API
	// (internal/collstore) so that they survive a restart.
	Store CollectionStore
	// SumActiveSites sets SumActiveSites from the engine's active_sites
	// counter: a multinode scheduler's is the sum over its node
	// schedulers, a node scheduler's stays 0 (MS-FSCADM 2.2.4.10).
	SumActiveSites bool
	Logger         *slog.Logger
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// CollectionStore keeps collections across restarts.
type CollectionStore interface {
	Save(c *config.Collection) error
	Forget(name string) error
}

// Backend is the MS-FSCADM backend of a crawler process over an Engine
// (see the package comment).
// SetAnalyses makes the status page show the link analyses fn reports
// (trawl run's web analyzer).
func (b *Backend) SetAnalyses(fn func() []admin.AnalysisStatus) { b.analyses.Store(&fn) }

type Backend struct {
	eng     Engine
	role    admin.Role
	level   *admin.Level
	files   admin.URIFiles
	configs []string
	cfgFrom string
	store   CollectionStore
	sumAct  bool
	log     *slog.Logger
	now     func() time.Time
	started time.Time

	rates *admin.RateHistory
	errs  *admin.ErrorLog
	// analyses, if set, reports the link analyses on the status page.
	analyses atomic.Pointer[func() []admin.AnalysisStatus]

	// refreshMu makes refreshes one at a time: counters read by one and
	// applied after a later one's would look like an engine restart (a
	// counter going down) and be counted twice.
	refreshMu sync.Mutex

	mu       sync.Mutex
	tracker  *stats.Tracker
	colls    map[string]*collState
	lastFold time.Time
	counters map[string]map[string]int64 // last counters by collection (metrics, status)
	sites    map[string]map[string]map[string]int64
	// lastURI holds, by collection, the URI last requested and, by site,
	// each site's (LastUri), until refresh puts them in the statistics.
	lastURI map[string]*lastURIs
	// ended holds the collections out of work at the last refresh.
	ended map[string]bool
}

// lastURIs are a collection's most recent URIs not yet in its statistics.
type lastURIs struct {
	coll  string
	sites map[string]string
}

// collState is what the backend keeps about a collection.
type collState struct {
	cfg         *config.Collection
	xml         string
	feedingOff  map[string]bool // suspended destinations; "" is every destination
	refreshOnly bool
	// modesRead is set once feedingOff and refreshOnly were read from the
	// engine (syncModes).
	modesRead bool
}

// foldEvery is how often the statistics deltas are folded into the cycles
// (MS-FSCADM 2.2.4.4: a delta holds the last one or two minutes).
const foldEvery = time.Minute

// New returns the backend of eng; known are the collections the process
// started with.
func New(eng Engine, known []*config.Collection, o Options) *Backend {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Level == nil {
		o.Level = admin.NewLevel(slog.LevelWarn)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	now := o.Now()
	b := &Backend{eng: eng, role: o.Role, level: o.Level, files: o.Files, configs: o.Configs, cfgFrom: o.ConfigFrom, store: o.Store,
		sumAct: o.SumActiveSites, log: o.Logger, now: o.Now, started: now,
		rates: admin.NewRateHistory(300), errs: admin.NewErrorLog(50),
		tracker: stats.NewTracker(0, unix(now)), colls: map[string]*collState{}, lastFold: now,
		counters: map[string]map[string]int64{}, sites: map[string]map[string]map[string]int64{},
		lastURI: map[string]*lastURIs{}, ended: map[string]bool{}}
	for _, c := range known {
		b.remember(c)
	}
	return b
}

func unix(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

// state returns the collState of name, made if missing; b.mu is held.
func (b *Backend) state(name string) *collState {
	cs := b.colls[name]
	if cs == nil {
		cs = &collState{feedingOff: map[string]bool{}}
		b.colls[name] = cs
	}
	return cs
}

// remember records a collection's configuration; b.mu is held.
func (b *Backend) remember(c *config.Collection) {
	var buf bytes.Buffer
	_ = config.WriteCollections(&buf, []*config.Collection{c})
	cs := b.state(c.Name)
	cs.cfg, cs.xml = c, buf.String()
	b.tracker.Add(c.Name, unix(b.now()))
}

// Run samples the engine's counters every second until ctx ends.
func (b *Backend) Run(ctx context.Context) error {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			b.Refresh(ctx)
		}
	}
}

// syncModes reads the feeding suspension and the refresh-only mode of
// the collections not read yet from the engine, which keeps them across
// restarts; afterwards the backend keeps what it was told (a message on
// its way to the node scheduler must not be overwritten by the state
// before it). An engine that keeps no modes leaves what it was told.
func (b *Backend) syncModes(ctx context.Context) {
	got, ok := b.eng.Modes(ctx)
	if !ok {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for name, md := range got {
		cs := b.state(name)
		if cs.modesRead {
			continue
		}
		cs.modesRead = true
		clear(cs.feedingOff)
		if md.FeedingAll {
			cs.feedingOff[""] = true
		}
		for _, d := range md.FeedingOff {
			cs.feedingOff[d] = true
		}
		cs.refreshOnly = md.RefreshOnly
	}
}

// Refresh reads the engine's counters into the statistics.
func (b *Backend) Refresh(ctx context.Context) {
	b.refreshMu.Lock()
	defer b.refreshMu.Unlock()
	b.syncModes(ctx)
	reports := b.eng.Counters(ctx)
	for name, r := range reports {
		if r.LastURI != "" {
			b.NoteLastURI(name, "", r.LastURI)
		}
		// In the dictionary's order (sites sorted): a site's URI is also
		// the collection's, the last one wins.
		for _, site := range slices.Sorted(maps.Keys(r.SiteLastURI)) {
			b.NoteLastURI(name, site, r.SiteLastURI[site])
		}
	}
	dns, haveDNS := b.eng.DNS(ctx)
	now := b.now()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.counters = make(map[string]map[string]int64, len(reports))
	b.sites = make(map[string]map[string]map[string]int64, len(reports))
	var pages, bytesIn, errs int64
	for name, r := range reports {
		c := r.Counters
		b.counters[name], b.sites[name] = c, r.Sites
		b.tracker.Update(name, c, r.Sites, unix(now))
		if s := b.tracker.Collection(name); s != nil {
			// CrawlEnded: when the collection ran out of work.
			idle := c["queued"] == 0 && c["in_flight"] == 0 && c["processed"] > 0
			if idle && !b.ended[name] {
				_ = s.Delta().Set("CrawlEnded", unix(now))
				b.tracker.EndSites(name) // each site: its last step
			}
			b.ended[name] = idle
			if b.sumAct {
				_ = s.Delta().Set("SumActiveSites", float64(c["active_sites"]))
				_ = s.Delta().Set("SumPPChecksums", float64(c["pp_checksums"]))
			}
		}
		pages += c["fetched"]
		bytesIn += c["bytes"]
		errs += stats.ErrorTotal(c)
	}
	b.flushLastURIs()
	if haveDNS {
		b.tracker.UpdateGlobal(dns)
	}
	b.rates.Sample(unix(now), pages, bytesIn, errs)
	if now.Sub(b.lastFold) >= foldEvery {
		b.foldLocked(now)
	}
}

// flushLastURIs puts the recent URIs into the statistics deltas; b.mu is
// held.
func (b *Backend) flushLastURIs() {
	for name, l := range b.lastURI {
		if !b.tracker.Has(name) {
			delete(b.lastURI, name) // deleted
			continue
		}
		if s := b.tracker.Collection(name); s != nil && l.coll != "" {
			_ = s.Delta().SetString("LastUri", l.coll)
			l.coll = ""
		}
		for site, u := range l.sites {
			if s := b.tracker.Site(name, site); s != nil {
				_ = s.Delta().SetString("LastUri", u)
				delete(l.sites, site)
			}
		}
		if l.coll == "" && len(l.sites) == 0 {
			delete(b.lastURI, name)
		}
	}
}

// NoteLastURI records uri, of crawl site site, as the collection's most
// recent request (LastUri, MS-FSCADM 2.2.4.9).
func (b *Backend) NoteLastURI(coll, site, uri string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	l := b.lastURI[coll]
	if l == nil {
		l = &lastURIs{sites: map[string]string{}}
		b.lastURI[coll] = l
	}
	l.coll = uri
	if site != "" {
		l.sites[site] = uri
	}
}

// NoteError records a failed fetch for the status page.
func (b *Backend) NoteError(e admin.ErrorEvent) { b.errs.Add(e) }

// foldLocked folds every delta into the cycles; b.mu is held.
func (b *Backend) foldLocked(now time.Time) {
	b.lastFold = now
	b.tracker.Fold(unix(now))
}

// Counters returns the last counters by collection (for the metrics).
func (b *Backend) Counters() map[string]map[string]int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make(map[string]map[string]int64, len(b.counters))
	for k, v := range b.counters {
		out[k] = v
	}
	return out
}

// Logger is the backend's logger.
func (b *Backend) Logger() *slog.Logger { return b.log }

// ---- collections ----

func (b *Backend) collection(ctx context.Context, name string) (CollectionInfo, error) {
	all, err := b.eng.Collections(ctx)
	if err != nil {
		return CollectionInfo{}, err
	}
	for _, c := range all {
		if c.Name == name {
			return c, nil
		}
	}
	return CollectionInfo{}, fmt.Errorf("collection %q: %w", name, admin.ErrNoCollection)
}

// live returns a collection that exists and is not being deleted.
func (b *Backend) live(ctx context.Context, name string) (CollectionInfo, error) {
	c, err := b.collection(ctx, name)
	if err != nil {
		return c, err
	}
	if c.State == cmt.StateRemoving {
		return c, admin.StateError("collection %s is being deleted", name)
	}
	return c, nil
}

func suspended(s cmt.CollectionState) bool {
	return s == cmt.StateSuspendedUser || s == cmt.StateSuspendedDisk || s == cmt.StateSuspendedDelay
}

// StatusOf is the MS-FSCADM status of a collection state.
func StatusOf(s cmt.CollectionState) stats.Status {
	switch s {
	case cmt.StateRemoving:
		return stats.StatusDeleting
	case cmt.StateSuspendedUser:
		return stats.StatusSuspended
	case cmt.StateSuspendedDisk:
		return stats.StatusDiskFull
	case cmt.StateSuspendedDelay:
		return stats.StatusVariableDelay
	case cmt.StateCompactionStart, cmt.StateCompacting:
		return stats.StatusCompacting
	}
	return stats.StatusCrawling
}
