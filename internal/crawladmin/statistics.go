package crawladmin

import (
	"context"
	"sort"

	"github.com/trawl/trawl/internal/admin"
	"github.com/trawl/trawl/internal/marshal"
	"github.com/trawl/trawl/internal/stats"
)

func (b *Backend) CollectionGetStatus(ctx context.Context, coll string) (stats.Status, error) {
	c, err := b.collection(ctx, coll)
	if err != nil {
		return 0, err
	}
	return StatusOf(c.State), nil
}

// snapshot refreshes the statistics, records each collection's state in
// its delta and folds, so that a statistics answer is up to date.
func (b *Backend) snapshot(ctx context.Context) {
	b.Refresh(ctx)
	all, _ := b.eng.Collections(ctx)
	now := b.now()
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, c := range all {
		s := b.tracker.Collection(c.Name)
		if s == nil {
			continue
		}
		d := s.Delta()
		_ = d.Set("Status", float64(StatusOf(c.State)))
		feeding, mode := 1.0, stats.CrawlModeNormal
		if cs := b.colls[c.Name]; cs != nil {
			if cs.feedingOff[""] {
				feeding = 0
			}
			for dest, off := range cs.feedingOff {
				if dest != "" {
					v := "1"
					if off {
						v = "0"
					}
					_ = d.SetDim("FeedingDestinations", dest, marshal.Str(v))
				}
			}
			if cs.refreshOnly {
				mode = stats.CrawlModeUserRefresh
			}
		}
		_ = d.Set("Feeding", feeding)
		_ = d.SetString("CrawlMode", mode)
	}
	b.foldLocked(now)
}

// dspec is a collection's refresh period and mode; b.mu is held.
func (b *Backend) dspec(name string) stats.DSpec {
	ds := stats.DSpec{Collection: name, Refresh: 1500, RefreshMode: stats.RefreshScratch}
	if cs := b.colls[name]; cs != nil && cs.cfg != nil {
		top := cs.cfg.Top()
		ds.Refresh = int(top.Refresh())
		if m, ok := stats.RefreshModeCode(top.RefreshMode()); ok {
			ds.RefreshMode = m
		}
	}
	return ds
}

func (b *Backend) CollectionGetSiteStatistics(ctx context.Context, coll, site string) (*stats.Statistics, error) {
	if _, err := b.collection(ctx, coll); err != nil {
		return nil, err
	}
	b.snapshot(ctx)
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.tracker.Site(coll, site)
	if s == nil {
		s = b.tracker.Site(coll, SiteOf(site))
	}
	if s == nil {
		return nil, admin.Refuse("collection %s has not crawled site %q", coll, site)
	}
	return &stats.Statistics{DSpec: []stats.DSpec{b.dspec(coll)}, Series: []*stats.Series{s.Clone()}}, nil
}

func (b *Backend) CollectionGetStatistics(ctx context.Context, coll string) (*stats.Statistics, error) {
	var names []string
	if coll == "" {
		l, err := b.CollectionGetList(ctx)
		if err != nil {
			return nil, err
		}
		names = l
	} else {
		if _, err := b.collection(ctx, coll); err != nil {
			return nil, err
		}
		names = []string{coll}
	}
	b.snapshot(ctx)
	b.mu.Lock()
	defer b.mu.Unlock()
	st := &stats.Statistics{Global: b.tracker.Global().Clone()}
	for _, n := range names {
		b.tracker.Add(n, unix(b.now()))
		st.DSpec = append(st.DSpec, b.dspec(n))
		st.Series = append(st.Series, b.tracker.Collection(n).Clone())
	}
	return st, nil
}

// flatten flattens a collection record with its refresh settings.
func flatten(r *stats.Record, now float64, ds stats.DSpec) stats.CollectionFlat {
	return stats.FlattenCollection(r, stats.FlattenParams{Now: now, Refresh: float64(ds.Refresh),
		RefreshMode: stats.RefreshModeName(ds.RefreshMode)})
}

func (b *Backend) CollectionGetStatistics2(ctx context.Context, coll string) (*admin.CollectionReport, error) {
	if _, err := b.collection(ctx, coll); err != nil {
		return nil, err
	}
	b.snapshot(ctx)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.tracker.Add(coll, unix(b.now()))
	s := b.tracker.Collection(coll)
	ds := b.dspec(coll)
	now := unix(b.now())
	flat := func(r *stats.Record) *stats.CollectionFlat {
		if r == nil {
			return nil
		}
		f := flatten(r, now, ds)
		return &f
	}
	return &admin.CollectionReport{Cur: flat(s.Current()), Prev: flat(s.Previous()), Complete: flat(s.Complete())}, nil
}

func (b *Backend) GetGlobalStatistics(ctx context.Context) (*admin.GlobalReport, error) {
	b.Refresh(ctx)
	b.mu.Lock()
	defer b.mu.Unlock()
	g := b.tracker.Global()
	all := g.Complete().Clone()
	_ = all.Merge(g.Delta()) // the all-time values, what is not folded yet included
	d := stats.FlattenGlobal(g.Delta())
	c := stats.FlattenGlobal(all)
	return &admin.GlobalReport{Delta: &d, Complete: &c}, nil
}

// Status builds the status page's report (admin.StatusHandler).
func (b *Backend) Status(ctx context.Context) (*admin.StatusReport, error) {
	all, err := b.eng.Collections(ctx)
	if err != nil {
		return nil, err
	}
	now := b.now()
	rep := &admin.StatusReport{Role: b.role.String(), Time: unix(now), Started: unix(b.started),
		Rates: b.rates.Rates(), Errors: b.errs.Recent()}
	if fn := b.analyses.Load(); fn != nil {
		rep.Analyses = (*fn)()
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, c := range all {
		cnt := b.counters[c.Name]
		cs := admin.CollectionStatus{Name: c.Name, Status: StatusOf(c.State).Code(), Feeding: true,
			Downloaded: cnt["fetched"], Stored: cnt["stored"], Modified: cnt["modified"], Deleted: cnt["deleted"],
			Errors: stats.ErrorTotal(cnt), Bytes: cnt["bytes"], Queued: cnt["queued"], InFlight: cnt["in_flight"],
			ActiveSites: cnt["active_sites"], ScreenTimeouts: cnt["screen_timeouts"],
			Idle: c.Idle && cnt["queued"] == 0 && cnt["in_flight"] == 0}
		if st := b.colls[c.Name]; st != nil {
			cs.Feeding = !st.feedingOff[""]
			cs.RefreshOnly = st.refreshOnly
			if st.refreshOnly {
				cs.CrawlMode = "Refreshing(limit=user)"
			}
		}
		if s := b.tracker.Collection(c.Name); s != nil {
			f := flatten(s.Current(), unix(now), b.dspec(c.Name))
			cs.Cycle, cs.ProgressPercent, cs.ProgressText = f.Epoch, f.ProgressPercent, f.ProgressText
		}
		sites := b.sites[c.Name]
		names := make([]string, 0, len(sites))
		for s := range sites {
			names = append(names, s)
		}
		sort.Strings(names)
		for _, s := range names {
			sc := sites[s]
			cs.Sites = append(cs.Sites, admin.SiteStatus{Site: s, Downloaded: sc["fetched"], Stored: sc["stored"],
				Modified: sc["modified"], Deleted: sc["deleted"], Errors: stats.ErrorTotal(sc), Bytes: sc["bytes"]})
		}
		rep.Collections = append(rep.Collections, cs)
	}
	return rep, nil
}
