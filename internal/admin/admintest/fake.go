// Package admintest provides an in-memory admin.Backend for tests of the
// MS-FSCADM server, its clients and the trawl admin command.
package admintest

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/trawl/trawl/internal/admin"
	"github.com/trawl/trawl/internal/config"
	"github.com/trawl/trawl/internal/marshal"
	"github.com/trawl/trawl/internal/stats"
)

// Collection is the state the Fake keeps for one collection. Tests read
// it through Fake.Collection.
type Collection struct {
	Name   string
	Config *config.Collection
	XML    string
	Status stats.Status
	// RefreshOnly is set by CollectionEnableRefreshOnly.
	RefreshOnly bool
	// FeedingSuspended holds the suspended destinations ("default" for "").
	FeedingSuspended map[string]bool
	Queued           []string // AddURIs and AddURIFile, in order
	Urgent           []string // the urgent ones among them
	Deleted          []string // CollectionDeleteURIs and CollectionDeleteURIFile
	DeletedSites     []string
	Preempted        []string
	Quarantined      map[string]int // site -> seconds
	Requeued         []string       // sites quarantined with requeue (extensions.go)
	State            int            // the last CollectionSetState (extensions.go)
	Refetched        []string       // "" for the whole collection, else the subcollection; "uri:<uri>" for CollectionRefetchURI
	Reprocessed      []string       // "<dest> <site or uri or site+prefix>"
	Stats            *stats.Series
	Sites            map[string]*stats.Series
}

// Fake is an in-memory admin.Backend. Its zero value is not usable; call
// New. It is safe for concurrent use.
type Fake struct {
	mu          sync.Mutex
	role        admin.Role
	logLevel    int
	nodes       []admin.HostPort
	routes      map[string]admin.HostPort
	siteMgrs    int
	now         func() float64
	global      *stats.Series
	colls       map[string]*Collection
	configEvent int
	reregister  int
	rerouted    []string // RerouteNodeScheduler's nodes (extensions.go)
	// ReadFile reads the URI files of AddURIFile and
	// CollectionDeleteURIFile (os.ReadFile when nil).
	ReadFile func(string) ([]byte, error)
}

// New returns a Fake playing role, whose clock is now (unix seconds).
func New(role admin.Role, now func() float64) *Fake {
	return &Fake{role: role, logLevel: admin.LogInfo | admin.LogWarning | admin.LogError | admin.LogCritical,
		routes: map[string]admin.HostPort{}, siteMgrs: 1, now: now,
		global: stats.NewSeries(stats.GlobalSchema(), "global", 0, now()), colls: map[string]*Collection{}}
}

// SetNodeSchedulers sets what GetNodeSchedulerXmlRpcPorts returns.
func (f *Fake) SetNodeSchedulers(hps ...admin.HostPort) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nodes = slices.Clone(hps)
}

// SetRoute sets the routing address of a site.
func (f *Fake) SetRoute(site string, hp admin.HostPort) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.routes[site] = hp
}

// Update runs fn with the Fake locked, for tests that feed statistics or
// change a collection's state.
func (f *Fake) Update(fn func(global *stats.Series, colls map[string]*Collection)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f.global, f.colls)
}

// Collection returns a copy of a collection's state (nil if unknown).
func (f *Fake) Collection(name string) *Collection {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.colls[name]
	if !ok {
		return nil
	}
	cp := *c
	cp.Queued, cp.Urgent, cp.Deleted = slices.Clone(c.Queued), slices.Clone(c.Urgent), slices.Clone(c.Deleted)
	return &cp
}

// Events returns how many times ConfigurationChanged and ReRegister were
// called.
func (f *Fake) Events() (configChanged, reregister int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.configEvent, f.reregister
}

// Role implements admin.Backend.
func (f *Fake) Role() admin.Role { return f.role }

func (f *Fake) coll(name string) (*Collection, error) {
	c, ok := f.colls[name]
	if !ok {
		return nil, fmt.Errorf("collection %q: %w", name, admin.ErrNoCollection)
	}
	return c, nil
}

func (f *Fake) GetLogLevel(ctx context.Context) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.logLevel, nil
}

func (f *Fake) SetLogLevel(ctx context.Context, level int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.logLevel = level
	return nil
}

func (f *Fake) NodeSchedulers(ctx context.Context) ([]admin.HostPort, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.nodes), nil
}

func (f *Fake) SiteManagerNum(ctx context.Context) (int, error) { return f.siteMgrs, nil }

func absolute(uris []string) error {
	for _, u := range uris {
		p, err := url.Parse(u)
		if err != nil || !p.IsAbs() || p.Host == "" {
			return admin.Refuse("not an absolute URI: %q", u)
		}
	}
	return nil
}

func (f *Fake) AddURIs(ctx context.Context, collection string, urgent bool, uris []string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, err := f.coll(collection)
	if err != nil {
		return "", err
	}
	if err := absolute(uris); err != nil {
		return "", err
	}
	c.Queued = append(c.Queued, uris...)
	if urgent {
		c.Urgent = append(c.Urgent, uris...)
	}
	return fmt.Sprintf("Queued collection %s with %d URIs", collection, len(uris)), nil
}

func (f *Fake) readURIFile(path string) ([]string, error) {
	if !filepath.IsAbs(path) {
		return nil, admin.Refuse("URI file %q is not an absolute path", path)
	}
	read := f.ReadFile
	if read == nil {
		read = os.ReadFile
	}
	b, err := read(path)
	if err != nil {
		return nil, admin.Refuse("reading URI file: %v", err)
	}
	var uris []string
	for _, l := range bytes.Split(b, []byte("\n")) {
		if s := strings.TrimSpace(string(l)); s != "" {
			uris = append(uris, s)
		}
	}
	return uris, absolute(uris)
}

func (f *Fake) AddURIFile(ctx context.Context, collection string, urgent bool, path string) (string, error) {
	f.mu.Lock()
	if _, err := f.coll(collection); err != nil {
		f.mu.Unlock()
		return "", err
	}
	f.mu.Unlock()
	uris, err := f.readURIFile(path)
	if err != nil {
		return "", err
	}
	return f.AddURIs(ctx, collection, urgent, uris)
}

func (f *Fake) CollectionAdd(ctx context.Context, cfg *config.Config, data []byte, force bool) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var names []string
	for _, cc := range cfg.Collections {
		if c, ok := f.colls[cc.Name]; ok && c.Status == stats.StatusDeleting {
			return "", admin.Refuse("collection %s is being deleted", cc.Name)
		}
	}
	for _, cc := range cfg.Collections {
		var buf bytes.Buffer
		if err := config.WriteCollections(&buf, []*config.Collection{cc}); err != nil {
			return "", err
		}
		if c, ok := f.colls[cc.Name]; ok {
			c.Config, c.XML = cc, buf.String()
			names = append(names, "updated "+cc.Name)
			continue
		}
		now := f.now()
		s := stats.NewSeries(stats.CollectionSchema(), cc.Name, 0, now)
		_ = s.Delta().Set("Uptime", now)
		_ = s.Delta().Set("CrawlStarted", now)
		_ = s.Delta().Set("LastRefresh", now)
		_ = s.Delta().Set("Epoch", 0)
		_ = s.Delta().Set("Status", float64(stats.StatusCrawling))
		_ = s.Delta().Set("Feeding", 1)
		_ = s.Delta().SetString("CrawlMode", stats.CrawlModeNormal)
		s.Fold(now)
		f.colls[cc.Name] = &Collection{Name: cc.Name, Config: cc, XML: buf.String(), Status: stats.StatusCrawling,
			FeedingSuspended: map[string]bool{}, Quarantined: map[string]int{}, Stats: s, Sites: map[string]*stats.Series{}}
		names = append(names, "added "+cc.Name)
	}
	return "Collection " + strings.Join(names, ", "), nil
}

func (f *Fake) CollectionDelete(ctx context.Context, collection string, force bool) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, err := f.coll(collection); err != nil {
		return "", err
	}
	delete(f.colls, collection)
	return "Deleted collection " + collection, nil
}

func (f *Fake) CollectionDeleteSite(ctx context.Context, collection, site string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, err := f.coll(collection)
	if err != nil {
		return "", err
	}
	c.DeletedSites = append(c.DeletedSites, site)
	delete(c.Sites, site)
	return fmt.Sprintf("Deleting site %s from collection %s", site, collection), nil
}

func (f *Fake) CollectionDeleteURIs(ctx context.Context, collection string, uris []string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, err := f.coll(collection)
	if err != nil {
		return "", err
	}
	if err := absolute(uris); err != nil {
		return "", err
	}
	c.Deleted = append(c.Deleted, uris...)
	return fmt.Sprintf("Deleting %d URIs from collection %s", len(uris), collection), nil
}

func (f *Fake) CollectionDeleteURIFile(ctx context.Context, collection, path string) (string, error) {
	f.mu.Lock()
	if _, err := f.coll(collection); err != nil {
		f.mu.Unlock()
		return "", err
	}
	f.mu.Unlock()
	uris, err := f.readURIFile(path)
	if err != nil {
		return "", err
	}
	return f.CollectionDeleteURIs(ctx, collection, uris)
}

func (f *Fake) CollectionGetConfigurationXML(ctx context.Context, collection string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, err := f.coll(collection)
	if err != nil {
		return "", err
	}
	return c.XML, nil
}

func (f *Fake) CollectionGetList(ctx context.Context) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]string, 0, len(f.colls))
	for n := range f.colls {
		out = append(out, n)
	}
	sort.Strings(out)
	return out, nil
}

func (f *Fake) CollectionGetSiteRoutingAddress(ctx context.Context, collection, site string) (admin.HostPort, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, err := f.coll(collection); err != nil {
		return admin.HostPort{}, err
	}
	hp, ok := f.routes[site]
	if !ok {
		return admin.HostPort{}, admin.Refuse("site %s is not routed to any node scheduler", site)
	}
	return hp, nil
}

// simple runs op on an existing collection.
func (f *Fake) simple(collection string, op func(c *Collection) (string, error)) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, err := f.coll(collection)
	if err != nil {
		return "", err
	}
	return op(c)
}

func (f *Fake) CollectionPreemptSite(ctx context.Context, collection, site string) (string, error) {
	return f.simple(collection, func(c *Collection) (string, error) {
		c.Preempted = append(c.Preempted, site)
		return "Preempted site " + site, nil
	})
}

func (f *Fake) CollectionQuarantineSite(ctx context.Context, collection, site string, seconds int) (string, error) {
	return f.simple(collection, func(c *Collection) (string, error) {
		c.Quarantined[site] = seconds
		return fmt.Sprintf("Quarantined site %s for %d seconds", site, seconds), nil
	})
}

func (f *Fake) CollectionRefetch(ctx context.Context, collection, sub string) (string, error) {
	return f.simple(collection, func(c *Collection) (string, error) {
		if sub != "" && c.Config.SubCollection(sub) == nil {
			return "", admin.Refuse("collection %s has no subcollection %q", collection, sub)
		}
		c.Refetched = append(c.Refetched, sub)
		if sub == "" {
			return "Scheduled refetch of collection " + collection, nil
		}
		return "Scheduled refetch of subcollection " + sub, nil
	})
}

func (f *Fake) CollectionRefetchURI(ctx context.Context, collection, uri string, refeed, site, immediately bool) (string, error) {
	return f.simple(collection, func(c *Collection) (string, error) {
		if err := absolute([]string{uri}); err != nil {
			return "", err
		}
		c.Refetched = append(c.Refetched, fmt.Sprintf("uri:%s refeed=%t site=%t immediately=%t", uri, refeed, site, immediately))
		return "Scheduled refetch of " + uri, nil
	})
}

func destName(d string) string {
	if d == "" {
		return "default"
	}
	return d
}

func (f *Fake) CollectionReprocessSite(ctx context.Context, collection, dest, site string) (string, error) {
	return f.simple(collection, func(c *Collection) (string, error) {
		c.Reprocessed = append(c.Reprocessed, destName(dest)+" "+site)
		return "Reprocessing site " + site, nil
	})
}

func (f *Fake) CollectionReprocessSitePrefix(ctx context.Context, collection, site, prefix, dest string) (string, error) {
	return f.simple(collection, func(c *Collection) (string, error) {
		c.Reprocessed = append(c.Reprocessed, destName(dest)+" "+site+" "+prefix)
		return "Reprocessing site " + site + " under " + prefix, nil
	})
}

func (f *Fake) CollectionReprocessURI(ctx context.Context, collection, dest string, uris []string) (string, error) {
	return f.simple(collection, func(c *Collection) (string, error) {
		for _, u := range uris {
			c.Reprocessed = append(c.Reprocessed, destName(dest)+" "+u)
		}
		return fmt.Sprintf("Reprocessing %d URIs", len(uris)), nil
	})
}

func (f *Fake) setStatus(c *Collection, st stats.Status) {
	c.Status = st
	_ = c.Stats.Delta().Set("Status", float64(st))
	c.Stats.Fold(f.now())
}

func (f *Fake) CollectionResume(ctx context.Context, collection string) (string, error) {
	return f.simple(collection, func(c *Collection) (string, error) {
		if c.Status != stats.StatusSuspended {
			return "", fmt.Errorf("collection %s is not suspended", collection)
		}
		f.setStatus(c, stats.StatusCrawling)
		return "Resumed collection " + collection, nil
	})
}

func (f *Fake) CollectionSuspend(ctx context.Context, collection string) (string, error) {
	return f.simple(collection, func(c *Collection) (string, error) {
		if c.Status == stats.StatusSuspended {
			return "", fmt.Errorf("collection %s is already suspended", collection)
		}
		f.setStatus(c, stats.StatusSuspended)
		return "Suspended collection " + collection, nil
	})
}

func (f *Fake) feeding(collection, dest string, suspend bool) (string, error) {
	return f.simple(collection, func(c *Collection) (string, error) {
		d := destName(dest)
		if c.FeedingSuspended[d] == suspend {
			if suspend {
				return "", admin.Refuse("feeding of %s to %s is already suspended", collection, d)
			}
			return "", admin.Refuse("feeding of %s to %s is not suspended", collection, d)
		}
		c.FeedingSuspended[d] = suspend
		feeding, state := 1.0, "1"
		if suspend {
			feeding, state = 0, "0"
		}
		_ = c.Stats.Delta().Set("Feeding", feeding)
		_ = c.Stats.Delta().SetDim("FeedingDestinations", d, stringValue(state))
		c.Stats.Fold(f.now())
		if suspend {
			return fmt.Sprintf("Suspended feeding of %s to %s", collection, d), nil
		}
		return fmt.Sprintf("Resumed feeding of %s to %s", collection, d), nil
	})
}

func (f *Fake) CollectionResumeFeeding(ctx context.Context, collection, dest string) (string, error) {
	return f.feeding(collection, dest, false)
}

func (f *Fake) CollectionSuspendFeeding(ctx context.Context, collection, dest string) (string, error) {
	return f.feeding(collection, dest, true)
}

func (f *Fake) refreshOnly(collection string, on bool) (string, error) {
	return f.simple(collection, func(c *Collection) (string, error) {
		c.RefreshOnly = on
		mode := stats.CrawlModeNormal
		if on {
			mode = stats.CrawlModeUserRefresh
		}
		_ = c.Stats.Delta().SetString("CrawlMode", mode)
		c.Stats.Fold(f.now())
		if on {
			return "Collection " + collection + " only refreshes known content", nil
		}
		return "Collection " + collection + " crawls new content", nil
	})
}

func (f *Fake) CollectionDisableRefreshOnly(ctx context.Context, collection string) (string, error) {
	return f.refreshOnly(collection, false)
}

func (f *Fake) CollectionEnableRefreshOnly(ctx context.Context, collection string) (string, error) {
	return f.refreshOnly(collection, true)
}

func (f *Fake) CollectionGetStatus(ctx context.Context, collection string) (stats.Status, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, err := f.coll(collection)
	if err != nil {
		return 0, err
	}
	return c.Status, nil
}

func dspec(c *Collection) stats.DSpec {
	top := c.Config.Top()
	mode, _ := stats.RefreshModeCode(top.RefreshMode())
	return stats.DSpec{Collection: c.Name, Refresh: int(top.Refresh()), RefreshMode: mode}
}

func (f *Fake) CollectionGetSiteStatistics(ctx context.Context, collection, site string) (*stats.Statistics, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, err := f.coll(collection)
	if err != nil {
		return nil, err
	}
	s, ok := c.Sites[site]
	if !ok {
		return nil, fmt.Errorf("collection %s has no statistics for site %q", collection, site)
	}
	return &stats.Statistics{DSpec: []stats.DSpec{dspec(c)}, Series: []*stats.Series{s.Clone()}}, nil
}

func (f *Fake) CollectionGetStatistics(ctx context.Context, collection string) (*stats.Statistics, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	st := &stats.Statistics{Global: f.global.Clone()}
	var names []string
	if collection == "" {
		for n := range f.colls {
			names = append(names, n)
		}
		sort.Strings(names)
	} else {
		if _, err := f.coll(collection); err != nil {
			return nil, err
		}
		names = []string{collection}
	}
	for _, n := range names {
		c := f.colls[n]
		st.DSpec = append(st.DSpec, dspec(c))
		st.Series = append(st.Series, c.Stats.Clone())
	}
	return st, nil
}

func (f *Fake) CollectionGetStatistics2(ctx context.Context, collection string) (*admin.CollectionReport, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, err := f.coll(collection)
	if err != nil {
		return nil, err
	}
	top := c.Config.Top()
	p := stats.FlattenParams{Now: f.now(), Refresh: top.Refresh(), RefreshMode: top.RefreshMode()}
	flat := func(r *stats.Record) *stats.CollectionFlat {
		if r == nil {
			return nil
		}
		fl := stats.FlattenCollection(r, p)
		return &fl
	}
	return &admin.CollectionReport{Cur: flat(c.Stats.Current()), Prev: flat(c.Stats.Previous()), Complete: flat(c.Stats.Complete())}, nil
}

func (f *Fake) GetGlobalStatistics(ctx context.Context) (*admin.GlobalReport, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	d := stats.FlattenGlobal(f.global.Delta())
	c := stats.FlattenGlobal(f.global.Complete())
	return &admin.GlobalReport{Delta: &d, Complete: &c}, nil
}

func (f *Fake) ConfigurationChanged(ctx context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.configEvent++
	return nil
}

func (f *Fake) ReRegister(ctx context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reregister++
	return nil
}

var _ admin.Backend = (*Fake)(nil)

func stringValue(s string) marshal.Value { return marshal.Str(s) }
