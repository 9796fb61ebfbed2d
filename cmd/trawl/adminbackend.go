package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/trawl/trawl/internal/admin"
	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/config"
	"github.com/trawl/trawl/internal/fetch"
	"github.com/trawl/trawl/internal/marshal"
	"github.com/trawl/trawl/internal/multinode"
	"github.com/trawl/trawl/internal/nodesched"
	"github.com/trawl/trawl/internal/stats"
	"github.com/trawl/trawl/internal/urls"
)

// crawlAdmin is the MS-FSCADM backend of a running crawler. It plays one
// of the three roles:
//
//   - Standalone (trawl run): mns and ns are set; collection operations go
//     through the in-process multinode scheduler, which relays them to the
//     node scheduler in MS-FSCMT messages (CMD_ADM_CONF_ADD, _SUSPEND...),
//     as in a distributed setup; what MS-FSCMT has no message for
//     (refresh-only, refetching a whole site) goes to the node scheduler
//     directly.
//   - MultinodeScheduler (trawl multinode): mns only; statistics are the
//     sums of the node schedulers' CMD_UM_STAT deltas, and what MS-FSCMT
//     cannot carry (log level, refresh-only, refetching a site) is
//     forwarded to the node schedulers' own XML-RPC interfaces.
//   - NodeScheduler (trawl node): ns only; the operations act on this node
//     as the multinode scheduler's messages would.
type crawlAdmin struct {
	role    admin.Role
	mns     *multinode.Server
	ns      *nodesched.Driver
	level   *adminLevel
	files   admin.URIFiles
	configs []string
	// collDir, if not empty, keeps the collections added over the API
	// (DATA/collections, run_admin.go) so that they survive a restart.
	collDir string
	log     *slog.Logger
	now     func() time.Time
	started time.Time
	// nodeClient returns a client of a node scheduler's admin interface
	// (multinode role).
	nodeClient func(hp admin.HostPort) *admin.Client

	rates *admin.RateHistory
	errs  *admin.ErrorLog

	// refreshMu makes refreshes one at a time: counters read by one and
	// applied after a later one's would look like an engine restart (a
	// counter going down) and be counted twice.
	refreshMu sync.Mutex

	mu       sync.Mutex
	tracker  *stats.Tracker
	colls    map[string]*adminColl
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

// adminColl is what the backend keeps about a collection.
type adminColl struct {
	cfg         *config.Collection
	xml         string
	feedingOff  map[string]bool // suspended destinations; "" is every destination
	refreshOnly bool
	// modesRead is set once feedingOff and refreshOnly were read from the
	// node scheduler (syncModes).
	modesRead bool
}

// foldEvery is how often the statistics deltas are folded into the cycles
// (MS-FSCADM 2.2.4.4: a delta holds the last one or two minutes).
const foldEvery = time.Minute

func newCrawlAdmin(role admin.Role, mns *multinode.Server, ns *nodesched.Driver, level *adminLevel, log *slog.Logger) *crawlAdmin {
	now := time.Now()
	a := &crawlAdmin{role: role, mns: mns, ns: ns, level: level, log: log, now: time.Now, started: now,
		rates: admin.NewRateHistory(300), errs: admin.NewErrorLog(50),
		tracker: stats.NewTracker(0, unix(now)), colls: map[string]*adminColl{}, lastFold: now,
		counters: map[string]map[string]int64{}, sites: map[string]map[string]map[string]int64{},
		lastURI: map[string]*lastURIs{}, ended: map[string]bool{}}
	a.nodeClient = func(hp admin.HostPort) *admin.Client { return admin.NewClient(hp.String(), nil) }
	return a
}

func unix(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

// known records the configuration of collections the process started with.
func (a *crawlAdmin) known(cols []*config.Collection) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, c := range cols {
		a.remember(c)
	}
}

func (a *crawlAdmin) remember(c *config.Collection) {
	var buf bytes.Buffer
	_ = config.WriteCollections(&buf, []*config.Collection{c})
	ac := a.colls[c.Name]
	if ac == nil {
		ac = &adminColl{feedingOff: map[string]bool{}}
		a.colls[c.Name] = ac
	}
	ac.cfg, ac.xml = c, buf.String()
	a.tracker.Add(c.Name, unix(a.now()))
}

// run samples the engine's counters every second until ctx ends.
func (a *crawlAdmin) run(ctx context.Context) error {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			a.refresh(ctx)
		}
	}
}

// syncModes reads the feeding suspension and the refresh-only mode of
// the collections not read yet from the node scheduler (standalone and
// node roles), which keeps them across restarts; afterwards the backend
// keeps what it was told (a message on its way to the node scheduler must
// not be overwritten by the state before it). The multinode role keeps
// what it was told.
func (a *crawlAdmin) syncModes(ctx context.Context) {
	if a.ns == nil {
		return
	}
	type modes struct {
		feeding     nodesched.FeedingState
		refreshOnly bool
	}
	got := map[string]modes{}
	err := a.ns.Exec(ctx, func(m *nodesched.Machine, now time.Time) error {
		for _, n := range m.Collections() {
			got[n] = modes{m.Feeding(n), m.RefreshOnly(n)}
		}
		return nil
	})
	if err != nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for name, md := range got {
		ac := a.colls[name]
		if ac == nil {
			ac = &adminColl{feedingOff: map[string]bool{}}
			a.colls[name] = ac
		}
		if ac.modesRead {
			continue
		}
		ac.modesRead = true
		clear(ac.feedingOff)
		if md.feeding.All {
			ac.feedingOff[""] = true
		}
		for d := range md.feeding.Destinations {
			ac.feedingOff[d] = true
		}
		ac.refreshOnly = md.refreshOnly
	}
}

// refresh reads the engine's counters into the tracker.
func (a *crawlAdmin) refresh(ctx context.Context) {
	a.refreshMu.Lock()
	defer a.refreshMu.Unlock()
	a.syncModes(ctx)
	colls, sites := a.engineCounters(ctx)
	var dns *multinode.DNSStats
	if a.mns != nil {
		if d, err := a.mns.DNSStats(ctx); err == nil {
			dns = &d
		}
	}
	now := a.now()
	a.mu.Lock()
	defer a.mu.Unlock()
	a.counters, a.sites = colls, sites
	var pages, bytesIn, errs int64
	for name, c := range colls {
		a.tracker.Update(name, c, sites[name], unix(now))
		if s := a.tracker.Collection(name); s != nil {
			// CrawlEnded: when the collection ran out of work; a node
			// scheduler's SumActiveSites is 0, the multinode scheduler's
			// the sum over its nodes (2.2.4.10).
			idle := c["queued"] == 0 && c["in_flight"] == 0 && c["processed"] > 0
			if idle && !a.ended[name] {
				_ = s.Delta().Set("CrawlEnded", unix(now))
			}
			a.ended[name] = idle
			if a.role == admin.MultinodeScheduler {
				_ = s.Delta().Set("SumActiveSites", float64(c["active_sites"]))
			}
		}
		pages += c["fetched"]
		bytesIn += c["bytes"]
		errs += errorTotal(c)
	}
	for name, l := range a.lastURI {
		if !a.tracker.Has(name) {
			delete(a.lastURI, name) // deleted
			continue
		}
		if s := a.tracker.Collection(name); s != nil && l.coll != "" {
			_ = s.Delta().SetString("LastUri", l.coll)
			l.coll = ""
		}
		for site, u := range l.sites {
			if s := a.tracker.Site(name, site); s != nil {
				_ = s.Delta().SetString("LastUri", u)
				delete(l.sites, site)
			}
		}
		if l.coll == "" && len(l.sites) == 0 {
			delete(a.lastURI, name)
		}
	}
	if dns != nil {
		a.tracker.UpdateGlobal(stats.DNSCounters{Requests: dns.Requests, Responses: dns.Responses,
			Retries: dns.Retries, Timeouts: dns.Timeouts, Written: dns.Written, Read: dns.Read,
			RCodes: dns.RCodes, MaxRate: dns.MaxRate})
	}
	a.rates.Sample(unix(now), pages, bytesIn, errs)
	if now.Sub(a.lastFold) >= foldEvery {
		a.foldLocked(now)
	}
}

// errorTotal counts failed fetches and responses with status >= 400.
func errorTotal(c map[string]int64) int64 {
	var n int64
	for k, v := range c {
		if strings.HasPrefix(k, "errors_") {
			n += v
		} else if code, ok := strings.CutPrefix(k, "http_"); ok && code >= "400" && len(code) == 3 {
			n += v
		}
	}
	return n
}

// engineCounters returns the cumulative counters by collection and by
// collection and site.
func (a *crawlAdmin) engineCounters(ctx context.Context) (map[string]map[string]int64, map[string]map[string]map[string]int64) {
	colls := map[string]map[string]int64{}
	sites := map[string]map[string]map[string]int64{}
	if a.ns != nil {
		for name, c := range a.ns.Stats() {
			colls[name] = c
		}
		for name, ss := range a.ns.SiteStats() {
			m := map[string]map[string]int64{}
			for s, c := range ss {
				m[s] = c
			}
			sites[name] = m
		}
		return colls, sites
	}
	infos, err := a.mns.CollectionInfos(ctx)
	if err != nil {
		return colls, sites
	}
	for _, ci := range infos {
		d, err := a.mns.Stats(ctx, ci.Name)
		if err != nil {
			continue
		}
		c := map[string]int64{}
		ss := map[string]map[string]int64{}
		for _, p := range d {
			k, ok := keyString(p.Key)
			if !ok {
				continue
			}
			if k == "sites" {
				if sd, ok := p.Value.(marshal.Dict); ok {
					for _, sp := range sd {
						sk, ok1 := keyString(sp.Key)
						sv, ok2 := sp.Value.(marshal.Dict)
						if ok1 && ok2 {
							ss[sk] = dictInts(sv)
							if u, ok := lastURIOf(sv); ok {
								a.noteLastURI(ci.Name, sk, u)
							}
						}
					}
				}
				continue
			}
			if k == "last_uri" {
				// The node schedulers' most recent request (CMD_UM_STAT
				// carries it; the multinode scheduler keeps the latest).
				if u, ok := keyString(p.Value); ok && u != "" {
					a.noteLastURI(ci.Name, "", u)
				}
				continue
			}
			if n, ok := intOf(p.Value); ok {
				c[string(k)] = n
			}
		}
		colls[ci.Name], sites[ci.Name] = c, ss
	}
	return colls, sites
}

func keyString(v marshal.Value) (string, bool) {
	switch x := v.(type) {
	case marshal.Bytes:
		return string(x), true
	case marshal.Unicode:
		return string(x), true
	}
	return "", false
}

func intOf(v marshal.Value) (int64, bool) {
	switch x := v.(type) {
	case marshal.Int:
		return int64(x), true
	case marshal.Float:
		return int64(x), true
	}
	return 0, false
}

// lastURIOf returns a site's last_uri in a statistics dictionary.
func lastURIOf(d marshal.Dict) (string, bool) {
	for _, p := range d {
		if k, ok := keyString(p.Key); ok && k == "last_uri" {
			u, ok := keyString(p.Value)
			return u, ok && u != ""
		}
	}
	return "", false
}

func dictInts(d marshal.Dict) map[string]int64 {
	out := map[string]int64{}
	for _, p := range d {
		if k, ok := keyString(p.Key); ok {
			if n, ok := intOf(p.Value); ok {
				out[k] = n
			}
		}
	}
	return out
}

// foldLocked sets the collections' discrete state and folds every delta.
func (a *crawlAdmin) foldLocked(now time.Time) {
	a.lastFold = now
	a.tracker.Fold(unix(now))
}

// Counters returns the last counters by collection (for the metrics).
func (a *crawlAdmin) Counters() map[string]map[string]int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make(map[string]map[string]int64, len(a.counters))
	for k, v := range a.counters {
		out[k] = v
	}
	return out
}

// observe sees every finished crawl step (nodesched.Config.Observe).
func (a *crawlAdmin) observe(m *admin.Metrics) func(coll string, o *nodesched.Outcome) {
	return func(coll string, o *nodesched.Outcome) {
		if m != nil && o.Skipped == "" {
			m.ObserveFetch(coll, o.Duration)
		}
		if o.Skipped == "" && o.Job != nil {
			a.noteLastURI(coll, o.Job.Fetch.Site, o.Job.Fetch.URI)
		}
		if o.Err != nil && fetch.ErrorKey(o.Status, o.Err) == "" {
			return // a content decision (type, size), not an error
		}
		if o.Err != nil || o.Status >= 400 {
			msg := ""
			if o.Err != nil {
				msg = o.Err.Error()
			} else {
				msg = fmt.Sprintf("HTTP %d", o.Status)
			}
			a.errs.Add(admin.ErrorEvent{T: unix(o.Start.Add(o.Duration)), Collection: coll, URI: o.Job.Fetch.URI, Status: o.Status, Error: msg})
		}
	}
}

// noteLastURI records uri, of crawl site site, as the collection's most
// recent request (LastUri, MS-FSCADM 2.2.4.9).
func (a *crawlAdmin) noteLastURI(coll, site, uri string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	l := a.lastURI[coll]
	if l == nil {
		l = &lastURIs{sites: map[string]string{}}
		a.lastURI[coll] = l
	}
	l.coll = uri
	if site != "" {
		l.sites[site] = uri
	}
}

// ---- collections ----

type collInfo struct {
	name  string
	state cmt.CollectionState
	idle  bool
}

func (a *crawlAdmin) collections(ctx context.Context) ([]collInfo, error) {
	if a.mns != nil {
		infos, err := a.mns.CollectionInfos(ctx)
		if err != nil {
			return nil, err
		}
		out := make([]collInfo, len(infos))
		for i, ci := range infos {
			out[i] = collInfo{name: ci.Name, state: ci.State, idle: ci.Queued == 0 && ci.Waiting == 0}
		}
		return out, nil
	}
	var out []collInfo
	err := a.ns.Exec(ctx, func(m *nodesched.Machine, now time.Time) error {
		for _, n := range m.Collections() {
			out = append(out, collInfo{name: n, state: m.State(n)})
		}
		return nil
	})
	return out, err
}

func (a *crawlAdmin) collection(ctx context.Context, name string) (collInfo, error) {
	all, err := a.collections(ctx)
	if err != nil {
		return collInfo{}, err
	}
	for _, c := range all {
		if c.name == name {
			return c, nil
		}
	}
	return collInfo{}, fmt.Errorf("collection %q: %w", name, admin.ErrNoCollection)
}

// live returns a collection that exists and is not being deleted.
func (a *crawlAdmin) live(ctx context.Context, name string) (collInfo, error) {
	c, err := a.collection(ctx, name)
	if err != nil {
		return c, err
	}
	if c.state == cmt.StateRemoving {
		return c, fmt.Errorf("collection %s is being deleted", name)
	}
	return c, nil
}

// mnsErr turns the multinode scheduler's errors into the API's.
func mnsErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, multinode.ErrUnknownCollection):
		return fmt.Errorf("%v: %w", err, admin.ErrNoCollection)
	case errors.Is(err, multinode.ErrNoNodes), errors.Is(err, multinode.ErrNodeOffline):
		return admin.Refuse("%v", err)
	}
	return err
}

// onNode runs fn on the node scheduler's event loop for a collection it has.
func (a *crawlAdmin) onNode(ctx context.Context, coll string, fn func(m *nodesched.Machine, now time.Time) error) error {
	return a.ns.Exec(ctx, func(m *nodesched.Machine, now time.Time) error {
		if m.State(coll) == 0 {
			return fmt.Errorf("collection %q: %w", coll, admin.ErrNoCollection)
		}
		return fn(m, now)
	})
}

// toNode hands a node scheduler message to this node's machine, as if the
// multinode scheduler had sent it (node role).
func (a *crawlAdmin) toNode(ctx context.Context, coll string, msgs ...cmt.Message) error {
	return a.onNode(ctx, coll, func(m *nodesched.Machine, now time.Time) error {
		for _, msg := range msgs {
			if err := m.Handle(nodesched.MNS, msg, now); err != nil {
				return err
			}
		}
		return nil
	})
}

// forward calls fn on every registered node scheduler's admin interface
// (multinode role) and joins their errors.
func (a *crawlAdmin) forward(ctx context.Context, fn func(c *admin.Client) error) error {
	nodes, err := a.mns.Nodes(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, n := range nodes {
		hp := admin.HostPort{Host: n.AdminHost, Port: int(n.AdminPort)}
		if err := fn(a.nodeClient(hp)); err != nil {
			errs = append(errs, fmt.Errorf("node scheduler %s (%s): %w", n.NodeID, hp, err))
		}
	}
	return errors.Join(errs...)
}

// Role implements admin.Backend.
func (a *crawlAdmin) Role() admin.Role { return a.role }

func (a *crawlAdmin) GetLogLevel(ctx context.Context) (int, error) { return a.level.Mask(), nil }

func (a *crawlAdmin) SetLogLevel(ctx context.Context, level int) error {
	a.level.SetMask(level)
	if a.role == admin.MultinodeScheduler {
		return a.forward(ctx, func(c *admin.Client) error { return c.SetLogLevel(ctx, level) })
	}
	return nil
}

func (a *crawlAdmin) NodeSchedulers(ctx context.Context) ([]admin.HostPort, error) {
	nodes, err := a.mns.Nodes(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]admin.HostPort, len(nodes))
	for i, n := range nodes {
		out[i] = admin.HostPort{Host: n.AdminHost, Port: int(n.AdminPort)}
	}
	return out, nil
}

func (a *crawlAdmin) SiteManagerNum(ctx context.Context) (int, error) { return 1, nil }

// absoluteURIs refuses a list holding a URI that is not absolute.
func absoluteURIs(uris []string) error {
	if len(uris) == 0 {
		return admin.Refuse("no URI given")
	}
	for _, u := range uris {
		p, err := url.Parse(u)
		if err != nil || !p.IsAbs() || p.Host == "" {
			return admin.Refuse("not an absolute URI: %q", u)
		}
	}
	return nil
}

func (a *crawlAdmin) queue(ctx context.Context, coll string, uris []string, urgent, force bool) (int, error) {
	if _, err := a.live(ctx, coll); err != nil {
		return 0, err
	}
	if err := absoluteURIs(uris); err != nil {
		return 0, err
	}
	if a.mns != nil {
		n, err := a.mns.AddURIs(ctx, coll, uris, urgent, force)
		if err != nil && strings.Contains(err.Error(), "URI") {
			return 0, admin.Refuse("%v", err)
		}
		return n, mnsErr(err)
	}
	var n int
	err := a.onNode(ctx, coll, func(m *nodesched.Machine, now time.Time) error {
		var err error
		n, err = m.Refetch(coll, uris, false, urgent, now)
		return err
	})
	return n, err
}

func (a *crawlAdmin) AddURIs(ctx context.Context, coll string, urgent bool, uris []string) (string, error) {
	if _, err := a.queue(ctx, coll, uris, urgent, false); err != nil {
		return "", err
	}
	return fmt.Sprintf("Queued collection %s with %d URIs", coll, len(uris)), nil
}

func (a *crawlAdmin) AddURIFile(ctx context.Context, coll string, urgent bool, path string) (string, error) {
	if _, err := a.collection(ctx, coll); err != nil {
		return "", err // 2.2.9.2: an unknown collection is a fault
	}
	uris, err := a.files.Read(path)
	if err != nil {
		return "", err
	}
	return a.AddURIs(ctx, coll, urgent, uris)
}

func (a *crawlAdmin) CollectionAdd(ctx context.Context, cfg *config.Config, data []byte, force bool) (string, error) {
	var done []string
	for _, cc := range cfg.Collections {
		existing, err := a.collection(ctx, cc.Name)
		exists := err == nil
		if exists && existing.state == cmt.StateRemoving {
			return "", admin.Refuse("collection %s is being deleted; add it again when the deletion is complete", cc.Name)
		}
		if a.mns != nil {
			spec, err := multinode.NewCollectionSpec(cc, nil)
			if err != nil {
				return "", admin.Refuse("collection %s: %v", cc.Name, err)
			}
			if exists {
				err = a.mns.UpdateCollection(ctx, spec)
			} else {
				err = a.mns.AddCollection(ctx, spec)
			}
			if err != nil {
				return "", mnsErr(err)
			}
		} else if err := a.ns.AddCollection(ctx, cc); err != nil {
			return "", admin.Refuse("collection %s: %v", cc.Name, err)
		}
		a.mu.Lock()
		a.remember(cc)
		a.mu.Unlock()
		if a.collDir != "" {
			if err := saveCollection(a.collDir, cc); err != nil {
				a.log.Error("admin: collection not saved; it will not survive a restart", "collection", cc.Name, "err", err)
				return "", fmt.Errorf("collection %s is running but could not be saved: %w", cc.Name, err)
			}
		}
		if exists {
			done = append(done, "updated "+cc.Name)
		} else {
			done = append(done, "added "+cc.Name)
		}
	}
	return "Collection " + strings.Join(done, ", "), nil
}

func (a *crawlAdmin) CollectionDelete(ctx context.Context, coll string, force bool) (string, error) {
	if _, err := a.live(ctx, coll); err != nil {
		return "", err
	}
	if a.mns != nil {
		if err := a.mns.RemoveCollection(ctx, coll); err != nil {
			return "", mnsErr(err)
		}
	} else if err := a.toNode(ctx, coll, &cmt.AdmConfRemove{Collection: coll}); err != nil {
		return "", err
	}
	a.mu.Lock()
	delete(a.colls, coll)
	delete(a.ended, coll)
	a.tracker.Remove(coll)
	a.mu.Unlock()
	if a.collDir != "" {
		if err := forgetCollection(a.collDir, coll); err != nil {
			a.log.Error("admin: saved collection not removed; it comes back at the next start", "collection", coll, "err", err)
			return "", fmt.Errorf("collection %s is being deleted but its saved copy could not be removed: %w", coll, err)
		}
	}
	return "Deleting collection " + coll, nil
}

// siteOf returns the crawl site of a hostport ("host" or "host:port").
func siteOf(hp string) string {
	u, err := urls.Normalize("http://"+hp+"/", nil)
	if err != nil {
		return strings.ToLower(hp)
	}
	return urls.Site(u)
}

func (a *crawlAdmin) siteMsg(ctx context.Context, coll string, msg cmt.Message, viaMNS func() error) error {
	if _, err := a.live(ctx, coll); err != nil {
		return err
	}
	if a.mns != nil {
		return mnsErr(viaMNS())
	}
	return a.toNode(ctx, coll, msg)
}

func (a *crawlAdmin) CollectionDeleteSite(ctx context.Context, coll, site string) (string, error) {
	s := siteOf(site)
	err := a.siteMsg(ctx, coll, &cmt.UMDeleteSite{Collection: coll, Site: s}, func() error { return a.mns.DeleteSite(ctx, coll, s) })
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("Deleting site %s from collection %s", s, coll), nil
}

func groupBySite(uris []string) ([]cmt.SiteURIs, error) {
	idx := map[string]int{}
	var out []cmt.SiteURIs
	for _, raw := range uris {
		u, err := urls.Normalize(raw, nil)
		if err != nil {
			return nil, admin.Refuse("URI %q: %v", raw, err)
		}
		s := urls.Site(u)
		i, ok := idx[s]
		if !ok {
			i = len(out)
			idx[s] = i
			out = append(out, cmt.SiteURIs{Site: s})
		}
		out[i].URIs = append(out[i].URIs, u.String())
	}
	return out, nil
}

func (a *crawlAdmin) CollectionDeleteURIs(ctx context.Context, coll string, uris []string) (string, error) {
	if _, err := a.live(ctx, coll); err != nil {
		return "", err
	}
	if err := absoluteURIs(uris); err != nil {
		return "", err
	}
	sites, err := groupBySite(uris)
	if err != nil {
		return "", err
	}
	if a.mns != nil {
		err = mnsErr(a.mns.DeleteURIs(ctx, coll, sites))
	} else {
		err = a.toNode(ctx, coll, &cmt.UMDeleteURIs{Collection: coll, Sites: sites, ErrCode: cmt.ErrCodeUser})
	}
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("Deleting %d URIs from collection %s", len(uris), coll), nil
}

func (a *crawlAdmin) CollectionDeleteURIFile(ctx context.Context, coll, path string) (string, error) {
	if _, err := a.collection(ctx, coll); err != nil {
		return "", err
	}
	uris, err := a.files.Read(path)
	if err != nil {
		return "", err
	}
	return a.CollectionDeleteURIs(ctx, coll, uris)
}

func (a *crawlAdmin) CollectionGetConfigurationXML(ctx context.Context, coll string) (string, error) {
	if _, err := a.collection(ctx, coll); err != nil {
		return "", err
	}
	a.mu.Lock()
	ac := a.colls[coll]
	a.mu.Unlock()
	if ac != nil && ac.xml != "" {
		return ac.xml, nil
	}
	if a.ns == nil {
		return "", fmt.Errorf("collection %q: no configuration known", coll)
	}
	// A node scheduler of a multinode setup got the collection from the
	// multinode scheduler: write the configuration it crawls with.
	var buf bytes.Buffer
	err := a.onNode(ctx, coll, func(m *nodesched.Machine, now time.Time) error {
		return config.WriteCollections(&buf, []*config.Collection{m.Settings(coll).Config})
	})
	return buf.String(), err
}

func (a *crawlAdmin) CollectionGetList(ctx context.Context) ([]string, error) {
	all, err := a.collections(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(all))
	for _, c := range all {
		out = append(out, c.name)
	}
	sort.Strings(out)
	return out, nil
}

func (a *crawlAdmin) CollectionGetSiteRoutingAddress(ctx context.Context, coll, site string) (admin.HostPort, error) {
	if _, err := a.collection(ctx, coll); err != nil {
		return admin.HostPort{}, err
	}
	if a.mns == nil {
		return admin.HostPort{}, admin.Refuse("a node scheduler does not route sites; ask the multinode scheduler")
	}
	host := strings.ToLower(site)
	if h, _, ok := strings.Cut(host, ":"); ok && !strings.HasPrefix(host, "[") {
		host = h
	}
	node, _, ok, err := a.mns.Route(ctx, coll, host)
	if err != nil {
		return admin.HostPort{}, err
	}
	if !ok {
		return admin.HostPort{}, admin.Refuse("site %s is not routed to any node scheduler yet", site)
	}
	nodes, err := a.mns.Nodes(ctx)
	if err != nil {
		return admin.HostPort{}, err
	}
	for _, n := range nodes {
		if n.NodeID == node {
			return admin.HostPort{Host: n.AdminHost, Port: int(n.AdminPort)}, nil
		}
	}
	return admin.HostPort{}, admin.Refuse("site %s is routed to node scheduler %s, which is not connected", site, node)
}

func (a *crawlAdmin) CollectionPreemptSite(ctx context.Context, coll, site string) (string, error) {
	s := siteOf(site)
	err := a.siteMsg(ctx, coll, &cmt.AdmPreemptSite{Collection: coll, Site: s, Requeue: true},
		func() error { return a.mns.PreemptSite(ctx, coll, s, true) })
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("Preempted site %s of collection %s", s, coll), nil
}

func (a *crawlAdmin) CollectionQuarantineSite(ctx context.Context, coll, site string, seconds int) (string, error) {
	s := siteOf(site)
	err := a.siteMsg(ctx, coll, &cmt.UMQuarantineSite{Collection: coll, Site: s, Seconds: int64(seconds)},
		func() error { return a.mns.QuarantineSite(ctx, coll, s, time.Duration(seconds)*time.Second, false) })
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("Quarantined site %s of collection %s for %d seconds", s, coll, seconds), nil
}

func (a *crawlAdmin) CollectionRefetch(ctx context.Context, coll, sub string) (string, error) {
	if _, err := a.live(ctx, coll); err != nil {
		return "", err
	}
	flags := cmt.RefreshCollection
	if sub != "" {
		a.mu.Lock()
		ac := a.colls[coll]
		a.mu.Unlock()
		if ac != nil && ac.cfg.SubCollection(sub) == nil {
			return "", admin.Refuse("collection %s has no subcollection %q", coll, sub)
		}
		flags = cmt.RefreshSubCollection
	}
	var err error
	if a.mns != nil {
		err = mnsErr(a.mns.RefreshCollection(ctx, coll, sub, flags))
	} else {
		err = a.toNode(ctx, coll, &cmt.AdmConfRefresh{Collection: coll, SubCollection: sub, Flags: flags})
	}
	if err != nil {
		return "", err
	}
	if sub == "" {
		return "Scheduled refetch of collection " + coll, nil
	}
	return "Scheduled refetch of subcollection " + sub + " of collection " + coll, nil
}

func (a *crawlAdmin) CollectionRefetchURI(ctx context.Context, coll, uri string, refeed, site, immediately bool) (string, error) {
	if _, err := a.live(ctx, coll); err != nil {
		return "", err
	}
	if err := absoluteURIs([]string{uri}); err != nil {
		return "", err
	}
	what := uri
	if site {
		what = "the site of " + uri
	}
	// Refeed (URIF_FORCE_REFEED) is set by the node scheduler that owns
	// the URI's site, like Site: the multinode scheduler's queue has no
	// way to carry it.
	switch {
	case (site || refeed) && a.ns != nil:
		err := a.onNode(ctx, coll, func(m *nodesched.Machine, now time.Time) error {
			_, err := m.RefetchWith(coll, []string{uri}, nodesched.RefetchOptions{Site: site, Urgent: immediately, Refeed: refeed}, now)
			return err
		})
		if err != nil {
			return "", err
		}
	case site || refeed:
		u, err := urls.Normalize(uri, nil)
		if err != nil {
			return "", admin.Refuse("URI %q: %v", uri, err)
		}
		hp, err := a.CollectionGetSiteRoutingAddress(ctx, coll, u.Hostname())
		if err != nil && !site {
			// No node scheduler to ask: a plain refetch (what it fetches
			// of a site never crawled is fed anyway).
			if _, err := a.queue(ctx, coll, []string{uri}, immediately, true); err != nil {
				return "", err
			}
			break
		}
		if err != nil {
			return "", err
		}
		if _, err := a.nodeClient(hp).CollectionRefetchURI(ctx, coll, uri, refeed, site, immediately); err != nil {
			return "", fmt.Errorf("node scheduler %s: %w", hp, err)
		}
	default:
		if _, err := a.queue(ctx, coll, []string{uri}, immediately, true); err != nil {
			return "", err
		}
	}
	return "Scheduled refetch of " + what, nil
}

func (a *crawlAdmin) reprocess(ctx context.Context, coll, site, prefix, dest string, exact bool) error {
	s := siteOf(site)
	return a.siteMsg(ctx, coll, &cmt.UMReprocessSite{Collection: coll, Site: s, Prefix: prefix, Destination: dest, Exact: exact},
		func() error { return a.mns.ReprocessSite(ctx, coll, s, prefix, dest, exact) })
}

func destName(d string) string {
	if d == "" {
		return "the default destination"
	}
	return d
}

func (a *crawlAdmin) CollectionReprocessSite(ctx context.Context, coll, dest, site string) (string, error) {
	if err := a.reprocess(ctx, coll, site, "", dest, false); err != nil {
		return "", err
	}
	return fmt.Sprintf("Reprocessing site %s of collection %s to %s", siteOf(site), coll, destName(dest)), nil
}

func (a *crawlAdmin) CollectionReprocessSitePrefix(ctx context.Context, coll, site, prefix, dest string) (string, error) {
	if err := a.reprocess(ctx, coll, site, prefix, dest, false); err != nil {
		return "", err
	}
	return fmt.Sprintf("Reprocessing site %s of collection %s under %s to %s", siteOf(site), coll, prefix, destName(dest)), nil
}

func (a *crawlAdmin) CollectionReprocessURI(ctx context.Context, coll, dest string, uris []string) (string, error) {
	n := 0
	for _, raw := range uris { // 2.2.9.17: continue past invalid URIs
		u, err := urls.Normalize(raw, nil)
		if err != nil || u.Host == "" {
			continue
		}
		if err := a.reprocess(ctx, coll, u.Host, u.String(), dest, true); err != nil {
			return "", err
		}
		n++
	}
	if n == 0 {
		if _, err := a.collection(ctx, coll); err != nil {
			return "", err
		}
		return "", admin.Refuse("none of the %d URIs is a valid absolute URI", len(uris))
	}
	return fmt.Sprintf("Reprocessing %d URIs of collection %s to %s", n, coll, destName(dest)), nil
}

func suspended(s cmt.CollectionState) bool {
	return s == cmt.StateSuspendedUser || s == cmt.StateSuspendedDisk || s == cmt.StateSuspendedDelay
}

func (a *crawlAdmin) CollectionSuspend(ctx context.Context, coll string) (string, error) {
	c, err := a.live(ctx, coll)
	if err != nil {
		return "", err
	}
	if suspended(c.state) {
		return "", fmt.Errorf("collection %s is already suspended", coll)
	}
	if a.mns != nil {
		err = mnsErr(a.mns.SuspendCollection(ctx, coll, cmt.StateSuspendedUser))
	} else {
		err = a.toNode(ctx, coll, &cmt.AdmConfSuspend{Collection: coll, State: cmt.StateSuspendedUser})
	}
	if err != nil {
		return "", err
	}
	return "Suspended collection " + coll, nil
}

func (a *crawlAdmin) CollectionResume(ctx context.Context, coll string) (string, error) {
	c, err := a.live(ctx, coll)
	if err != nil {
		return "", err
	}
	if !suspended(c.state) {
		return "", fmt.Errorf("collection %s is not suspended", coll)
	}
	if a.mns != nil {
		err = mnsErr(a.mns.ResumeCollection(ctx, coll))
	} else {
		err = a.toNode(ctx, coll, &cmt.AdmConfResume{Collection: coll})
	}
	if err != nil {
		return "", err
	}
	return "Resumed collection " + coll, nil
}

func (a *crawlAdmin) feeding(ctx context.Context, coll, dest string, suspend bool) (string, error) {
	if _, err := a.live(ctx, coll); err != nil {
		return "", err
	}
	a.syncModes(ctx)
	a.mu.Lock()
	ac := a.colls[coll]
	if ac == nil {
		ac = &adminColl{feedingOff: map[string]bool{}}
		a.colls[coll] = ac
	}
	off := ac.feedingOff[dest] || (dest != "" && ac.feedingOff[""])
	if dest == "" && !suspend {
		// Resuming every destination resumes any suspended one (or one
		// the configuration pauses).
		off = len(ac.feedingOff) > 0
	}
	a.mu.Unlock()
	if off == suspend {
		if suspend {
			return "", admin.Refuse("feeding of %s to %s is already suspended", coll, destName(dest))
		}
		return "", admin.Refuse("feeding of %s to %s is not suspended", coll, destName(dest))
	}
	var dests []string
	if dest != "" {
		dests = []string{dest}
	}
	var err error
	if a.mns != nil {
		err = mnsErr(a.mns.SuspendFeeding(ctx, coll, suspend, dests))
	} else {
		err = a.toNode(ctx, coll, &cmt.AdmConfFeedingSuspend{Collection: coll, Suspend: suspend, Destinations: dests})
	}
	if err != nil {
		return "", err
	}
	a.mu.Lock()
	if suspend {
		ac.feedingOff[dest] = true
	} else {
		delete(ac.feedingOff, dest)
		if dest == "" {
			clear(ac.feedingOff)
		}
	}
	a.mu.Unlock()
	if suspend {
		return fmt.Sprintf("Suspended feeding of %s to %s", coll, destName(dest)), nil
	}
	return fmt.Sprintf("Resumed feeding of %s to %s", coll, destName(dest)), nil
}

func (a *crawlAdmin) CollectionSuspendFeeding(ctx context.Context, coll, dest string) (string, error) {
	return a.feeding(ctx, coll, dest, true)
}

func (a *crawlAdmin) CollectionResumeFeeding(ctx context.Context, coll, dest string) (string, error) {
	return a.feeding(ctx, coll, dest, false)
}

func (a *crawlAdmin) refreshOnly(ctx context.Context, coll string, on bool) (string, error) {
	if _, err := a.live(ctx, coll); err != nil {
		return "", err
	}
	a.syncModes(ctx)
	var err error
	if a.ns != nil {
		err = a.onNode(ctx, coll, func(m *nodesched.Machine, now time.Time) error {
			m.SetRefreshOnly(coll, on)
			return nil
		})
	} else {
		err = a.forward(ctx, func(c *admin.Client) error {
			var err error
			if on {
				_, err = c.CollectionEnableRefreshOnly(ctx, coll)
			} else {
				_, err = c.CollectionDisableRefreshOnly(ctx, coll)
			}
			return err
		})
	}
	if err != nil {
		return "", err
	}
	a.mu.Lock()
	ac := a.colls[coll]
	if ac == nil {
		ac = &adminColl{feedingOff: map[string]bool{}}
		a.colls[coll] = ac
	}
	ac.refreshOnly = on
	a.mu.Unlock()
	if on {
		return "Collection " + coll + " only refreshes known content", nil
	}
	return "Collection " + coll + " crawls new content", nil
}

func (a *crawlAdmin) CollectionEnableRefreshOnly(ctx context.Context, coll string) (string, error) {
	return a.refreshOnly(ctx, coll, true)
}

func (a *crawlAdmin) CollectionDisableRefreshOnly(ctx context.Context, coll string) (string, error) {
	return a.refreshOnly(ctx, coll, false)
}

func (a *crawlAdmin) CollectionGetStatus(ctx context.Context, coll string) (stats.Status, error) {
	c, err := a.collection(ctx, coll)
	if err != nil {
		return 0, err
	}
	return statusOf(c.state), nil
}

func statusOf(s cmt.CollectionState) stats.Status {
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

// snapshot refreshes the statistics, records each collection's state in
// its delta and folds, so that a statistics answer is up to date.
func (a *crawlAdmin) snapshot(ctx context.Context) {
	a.refresh(ctx)
	all, _ := a.collections(ctx)
	now := a.now()
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, c := range all {
		s := a.tracker.Collection(c.name)
		if s == nil {
			continue
		}
		d := s.Delta()
		_ = d.Set("Status", float64(statusOf(c.state)))
		feeding, mode := 1.0, stats.CrawlModeNormal
		if ac := a.colls[c.name]; ac != nil {
			if ac.feedingOff[""] {
				feeding = 0
			}
			for dest, off := range ac.feedingOff {
				if dest != "" {
					v := "1"
					if off {
						v = "0"
					}
					_ = d.SetDim("FeedingDestinations", dest, marshal.Str(v))
				}
			}
			if ac.refreshOnly {
				mode = stats.CrawlModeUserRefresh
			}
		}
		_ = d.Set("Feeding", feeding)
		_ = d.SetString("CrawlMode", mode)
	}
	a.foldLocked(now)
}

func (a *crawlAdmin) dspec(name string) stats.DSpec {
	ds := stats.DSpec{Collection: name, Refresh: 1500, RefreshMode: stats.RefreshScratch}
	if ac := a.colls[name]; ac != nil && ac.cfg != nil {
		top := ac.cfg.Top()
		ds.Refresh = int(top.Refresh())
		if m, ok := stats.RefreshModeCode(top.RefreshMode()); ok {
			ds.RefreshMode = m
		}
	}
	return ds
}

func (a *crawlAdmin) CollectionGetSiteStatistics(ctx context.Context, coll, site string) (*stats.Statistics, error) {
	if _, err := a.collection(ctx, coll); err != nil {
		return nil, err
	}
	a.snapshot(ctx)
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.tracker.Site(coll, site)
	if s == nil {
		s = a.tracker.Site(coll, siteOf(site))
	}
	if s == nil {
		return nil, admin.Refuse("collection %s has not crawled site %q", coll, site)
	}
	return &stats.Statistics{DSpec: []stats.DSpec{a.dspec(coll)}, Series: []*stats.Series{s.Clone()}}, nil
}

func (a *crawlAdmin) CollectionGetStatistics(ctx context.Context, coll string) (*stats.Statistics, error) {
	var names []string
	if coll == "" {
		l, err := a.CollectionGetList(ctx)
		if err != nil {
			return nil, err
		}
		names = l
	} else {
		if _, err := a.collection(ctx, coll); err != nil {
			return nil, err
		}
		names = []string{coll}
	}
	a.snapshot(ctx)
	a.mu.Lock()
	defer a.mu.Unlock()
	st := &stats.Statistics{Global: a.tracker.Global().Clone()}
	for _, n := range names {
		a.tracker.Add(n, unix(a.now()))
		st.DSpec = append(st.DSpec, a.dspec(n))
		st.Series = append(st.Series, a.tracker.Collection(n).Clone())
	}
	return st, nil
}

func (a *crawlAdmin) CollectionGetStatistics2(ctx context.Context, coll string) (*admin.CollectionReport, error) {
	if _, err := a.collection(ctx, coll); err != nil {
		return nil, err
	}
	a.snapshot(ctx)
	a.mu.Lock()
	defer a.mu.Unlock()
	a.tracker.Add(coll, unix(a.now()))
	s := a.tracker.Collection(coll)
	ds := a.dspec(coll)
	p := stats.FlattenParams{Now: unix(a.now()), Refresh: float64(ds.Refresh), RefreshMode: stats.RefreshModeName(ds.RefreshMode)}
	flat := func(r *stats.Record) *stats.CollectionFlat {
		if r == nil {
			return nil
		}
		f := stats.FlattenCollection(r, p)
		return &f
	}
	return &admin.CollectionReport{Cur: flat(s.Current()), Prev: flat(s.Previous()), Complete: flat(s.Complete())}, nil
}

func (a *crawlAdmin) GetGlobalStatistics(ctx context.Context) (*admin.GlobalReport, error) {
	a.refresh(ctx)
	a.mu.Lock()
	defer a.mu.Unlock()
	g := a.tracker.Global()
	all := g.Complete().Clone()
	_ = all.Merge(g.Delta()) // the all-time values, what is not folded yet included
	d := stats.FlattenGlobal(g.Delta())
	c := stats.FlattenGlobal(all)
	return &admin.GlobalReport{Delta: &d, Complete: &c}, nil
}

// ConfigurationChanged rereads the configuration files the process was
// started with and adds or updates their collections.
func (a *crawlAdmin) ConfigurationChanged(ctx context.Context) error {
	for _, path := range a.configs {
		cfg, err := config.ParseFile(path, nil)
		if err != nil {
			return fmt.Errorf("rereading %s: %w", path, err)
		}
		if len(cfg.Collections) == 0 {
			continue
		}
		if _, err := a.CollectionAdd(ctx, cfg, nil, true); err != nil {
			return err
		}
	}
	a.log.Info("admin: configuration reread", "files", len(a.configs))
	return nil
}

// ReRegister is a no-op: trawl has no configuration service to register
// with (MS-FSCX is not public; docs/decisions/admin.md).
func (a *crawlAdmin) ReRegister(ctx context.Context) error {
	a.log.Info("admin: ReRegister called; there is no configuration service to register with")
	return nil
}

var _ admin.Backend = (*crawlAdmin)(nil)

// statsFlatten flattens a collection record for the status page.
func statsFlatten(r *stats.Record, now, refresh float64, mode int) stats.CollectionFlat {
	return stats.FlattenCollection(r, stats.FlattenParams{Now: now, Refresh: refresh, RefreshMode: stats.RefreshModeName(mode)})
}
