package crawladmin

import (
	"context"
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/trawl/trawl/internal/admin"
	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/config"
	"github.com/trawl/trawl/internal/urls"
)

var _ admin.Backend = (*Backend)(nil)

// Role implements admin.Backend.
func (b *Backend) Role() admin.Role { return b.role }

func (b *Backend) GetLogLevel(ctx context.Context) (int, error) { return b.level.Mask(), nil }

func (b *Backend) SetLogLevel(ctx context.Context, level int) error {
	b.level.SetMask(level)
	return b.eng.ForwardLogLevel(ctx, level)
}

func (b *Backend) NodeSchedulers(ctx context.Context) ([]admin.HostPort, error) {
	return b.eng.NodeSchedulers(ctx)
}

func (b *Backend) SiteManagerNum(ctx context.Context) (int, error) { return 1, nil }

// AbsoluteURIs refuses a list holding a URI that is not absolute.
func AbsoluteURIs(uris []string) error {
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

// Queue queues URIs of a live collection (Engine.Queue, after the checks).
func (b *Backend) Queue(ctx context.Context, coll string, uris []string, urgent, force bool) (int, error) {
	if _, err := b.live(ctx, coll); err != nil {
		return 0, err
	}
	if err := AbsoluteURIs(uris); err != nil {
		return 0, err
	}
	return b.eng.Queue(ctx, coll, uris, urgent, force)
}

func (b *Backend) AddURIs(ctx context.Context, coll string, urgent bool, uris []string) (string, error) {
	if _, err := b.Queue(ctx, coll, uris, urgent, false); err != nil {
		return "", err
	}
	return fmt.Sprintf("Queued collection %s with %d URIs", coll, len(uris)), nil
}

func (b *Backend) AddURIFile(ctx context.Context, coll string, urgent bool, path string) (string, error) {
	if _, err := b.collection(ctx, coll); err != nil {
		return "", err // 2.2.9.2: an unknown collection is a fault
	}
	uris, err := b.files.Read(path)
	if err != nil {
		return "", err
	}
	return b.AddURIs(ctx, coll, urgent, uris)
}

func (b *Backend) CollectionAdd(ctx context.Context, cfg *config.Config, data []byte, force bool) (string, error) {
	return b.add(ctx, cfg, true)
}

// add adds or updates the collections of cfg; with merge, cfg is a partial
// configuration merged into what exists (CollectionAdd), otherwise it
// replaces it (ConfigurationChanged rereads whole files).
func (b *Backend) add(ctx context.Context, cfg *config.Config, merge bool) (string, error) {
	var done []string
	for _, cc := range cfg.Collections {
		existing, err := b.collection(ctx, cc.Name)
		exists := err == nil
		if exists && existing.State == cmt.StateRemoving {
			return "", admin.Refuse("collection %s is being deleted; add it again when the deletion is complete", cc.Name)
		}
		// MS-FSCADM 2.2.9.3: a partial configuration is merged into the
		// existing collection, or into the defaults of a new one; the
		// result is checked as a whole (config.Merge has the rules).
		if merge {
			b.mu.Lock()
			base := &config.Collection{Name: cc.Name, Dir: cc.Dir}
			if cs := b.colls[cc.Name]; exists && cs != nil && cs.cfg != nil {
				base = cs.cfg
			}
			b.mu.Unlock()
			merged, err := config.MergeXML(base, cc, &config.Options{SkipFileChecks: true})
			if err != nil {
				return "", admin.Refuse("collection %s: %v", cc.Name, err)
			}
			cc = merged
		}
		if err := b.eng.AddCollection(ctx, cc, exists); err != nil {
			return "", err
		}
		b.mu.Lock()
		b.remember(cc)
		b.mu.Unlock()
		if b.store != nil {
			if err := b.store.Save(cc); err != nil {
				b.log.Error("admin: collection not saved; it will not survive a restart", "collection", cc.Name, "err", err)
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

func (b *Backend) CollectionDelete(ctx context.Context, coll string, force bool) (string, error) {
	if _, err := b.live(ctx, coll); err != nil {
		return "", err
	}
	if err := b.eng.RemoveCollection(ctx, coll); err != nil {
		return "", err
	}
	b.mu.Lock()
	delete(b.colls, coll)
	delete(b.ended, coll)
	b.tracker.Remove(coll)
	b.mu.Unlock()
	if b.store != nil {
		if err := b.store.Forget(coll); err != nil {
			b.log.Error("admin: saved collection not removed; it comes back at the next start", "collection", coll, "err", err)
			return "", fmt.Errorf("collection %s is being deleted but its saved copy could not be removed: %w", coll, err)
		}
	}
	return "Deleting collection " + coll, nil
}

// SiteOf returns the crawl site of a hostport ("host" or "host:port").
func SiteOf(hp string) string {
	u, err := urls.Normalize("http://"+hp+"/", nil)
	if err != nil {
		return strings.ToLower(hp)
	}
	return urls.Site(u)
}

func (b *Backend) CollectionDeleteSite(ctx context.Context, coll, site string) (string, error) {
	if _, err := b.live(ctx, coll); err != nil {
		return "", err
	}
	s := SiteOf(site)
	if err := b.eng.DeleteSite(ctx, coll, s); err != nil {
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

func (b *Backend) CollectionDeleteURIs(ctx context.Context, coll string, uris []string) (string, error) {
	if _, err := b.live(ctx, coll); err != nil {
		return "", err
	}
	if err := AbsoluteURIs(uris); err != nil {
		return "", err
	}
	sites, err := groupBySite(uris)
	if err != nil {
		return "", err
	}
	if err := b.eng.DeleteURIs(ctx, coll, sites); err != nil {
		return "", err
	}
	return fmt.Sprintf("Deleting %d URIs from collection %s", len(uris), coll), nil
}

func (b *Backend) CollectionDeleteURIFile(ctx context.Context, coll, path string) (string, error) {
	if _, err := b.collection(ctx, coll); err != nil {
		return "", err
	}
	uris, err := b.files.Read(path)
	if err != nil {
		return "", err
	}
	return b.CollectionDeleteURIs(ctx, coll, uris)
}

func (b *Backend) CollectionGetConfigurationXML(ctx context.Context, coll string) (string, error) {
	if _, err := b.collection(ctx, coll); err != nil {
		return "", err
	}
	b.mu.Lock()
	cs := b.colls[coll]
	b.mu.Unlock()
	if cs != nil && cs.xml != "" {
		return cs.xml, nil
	}
	return b.eng.ConfigXML(ctx, coll)
}

func (b *Backend) CollectionGetList(ctx context.Context) ([]string, error) {
	all, err := b.eng.Collections(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(all))
	for _, c := range all {
		out = append(out, c.Name)
	}
	sort.Strings(out)
	return out, nil
}

func (b *Backend) CollectionGetSiteRoutingAddress(ctx context.Context, coll, site string) (admin.HostPort, error) {
	if _, err := b.collection(ctx, coll); err != nil {
		return admin.HostPort{}, err
	}
	return b.eng.Route(ctx, coll, site)
}

func (b *Backend) CollectionPreemptSite(ctx context.Context, coll, site string) (string, error) {
	if _, err := b.live(ctx, coll); err != nil {
		return "", err
	}
	s := SiteOf(site)
	if err := b.eng.PreemptSite(ctx, coll, s); err != nil {
		return "", err
	}
	return fmt.Sprintf("Preempted site %s of collection %s", s, coll), nil
}

func (b *Backend) CollectionQuarantineSite(ctx context.Context, coll, site string, seconds int) (string, error) {
	if _, err := b.live(ctx, coll); err != nil {
		return "", err
	}
	s := SiteOf(site)
	if err := b.eng.QuarantineSite(ctx, coll, s, seconds); err != nil {
		return "", err
	}
	return fmt.Sprintf("Quarantined site %s of collection %s for %d seconds", s, coll, seconds), nil
}

func (b *Backend) CollectionRefetch(ctx context.Context, coll, sub string) (string, error) {
	if _, err := b.live(ctx, coll); err != nil {
		return "", err
	}
	flags := cmt.RefreshCollection
	if sub != "" {
		b.mu.Lock()
		cs := b.colls[coll]
		b.mu.Unlock()
		if cs != nil && cs.cfg != nil && cs.cfg.SubCollection(sub) == nil {
			return "", admin.Refuse("collection %s has no subcollection %q", coll, sub)
		}
		flags = cmt.RefreshSubCollection
	}
	if err := b.eng.Refresh(ctx, coll, sub, flags); err != nil {
		return "", err
	}
	if sub == "" {
		return "Scheduled refetch of collection " + coll, nil
	}
	return "Scheduled refetch of subcollection " + sub + " of collection " + coll, nil
}

func (b *Backend) CollectionRefetchURI(ctx context.Context, coll, uri string, refeed, site, immediately bool) (string, error) {
	if _, err := b.live(ctx, coll); err != nil {
		return "", err
	}
	if err := AbsoluteURIs([]string{uri}); err != nil {
		return "", err
	}
	what := uri
	if site {
		what = "the site of " + uri
	}
	// Refeed (URIF_FORCE_REFEED) is set by the node scheduler that owns
	// the URI's site, like Site: the multinode scheduler's queue has no
	// way to carry it.
	var err error
	if site || refeed {
		err = b.eng.RefetchURI(ctx, coll, uri, RefetchOptions{Site: site, Refeed: refeed, Urgent: immediately})
	} else {
		_, err = b.eng.Queue(ctx, coll, []string{uri}, immediately, true)
	}
	if err != nil {
		return "", err
	}
	return "Scheduled refetch of " + what, nil
}

func (b *Backend) reprocess(ctx context.Context, coll, site, prefix, dest string, exact bool) error {
	if _, err := b.live(ctx, coll); err != nil {
		return err
	}
	return b.eng.ReprocessSite(ctx, coll, SiteOf(site), prefix, dest, exact)
}

func destName(d string) string {
	if d == "" {
		return "the default destination"
	}
	return d
}

func (b *Backend) CollectionReprocessSite(ctx context.Context, coll, dest, site string) (string, error) {
	if err := b.reprocess(ctx, coll, site, "", dest, false); err != nil {
		return "", err
	}
	return fmt.Sprintf("Reprocessing site %s of collection %s to %s", SiteOf(site), coll, destName(dest)), nil
}

func (b *Backend) CollectionReprocessSitePrefix(ctx context.Context, coll, site, prefix, dest string) (string, error) {
	if err := b.reprocess(ctx, coll, site, prefix, dest, false); err != nil {
		return "", err
	}
	return fmt.Sprintf("Reprocessing site %s of collection %s under %s to %s", SiteOf(site), coll, prefix, destName(dest)), nil
}

func (b *Backend) CollectionReprocessURI(ctx context.Context, coll, dest string, uris []string) (string, error) {
	n := 0
	for _, raw := range uris { // 2.2.9.17: continue past invalid URIs
		u, err := urls.Normalize(raw, nil)
		if err != nil || u.Host == "" {
			continue
		}
		if err := b.reprocess(ctx, coll, u.Host, u.String(), dest, true); err != nil {
			return "", err
		}
		n++
	}
	if n == 0 {
		if _, err := b.collection(ctx, coll); err != nil {
			return "", err
		}
		return "", admin.Refuse("none of the %d URIs is a valid absolute URI", len(uris))
	}
	return fmt.Sprintf("Reprocessing %d URIs of collection %s to %s", n, coll, destName(dest)), nil
}

func (b *Backend) CollectionSuspend(ctx context.Context, coll string) (string, error) {
	c, err := b.live(ctx, coll)
	if err != nil {
		return "", err
	}
	if suspended(c.State) {
		return "", admin.StateError("collection %s is already suspended", coll)
	}
	if err := b.eng.Suspend(ctx, coll); err != nil {
		return "", err
	}
	return "Suspended collection " + coll, nil
}

func (b *Backend) CollectionResume(ctx context.Context, coll string) (string, error) {
	c, err := b.live(ctx, coll)
	if err != nil {
		return "", err
	}
	if !suspended(c.State) {
		return "", admin.StateError("collection %s is not suspended", coll)
	}
	if err := b.eng.Resume(ctx, coll); err != nil {
		return "", err
	}
	return "Resumed collection " + coll, nil
}

func (b *Backend) feeding(ctx context.Context, coll, dest string, suspend bool) (string, error) {
	if _, err := b.live(ctx, coll); err != nil {
		return "", err
	}
	b.syncModes(ctx)
	b.mu.Lock()
	cs := b.state(coll)
	off := cs.feedingOff[dest] || (dest != "" && cs.feedingOff[""])
	if dest == "" && !suspend {
		// Resuming every destination resumes any suspended one (or one
		// the configuration pauses).
		off = len(cs.feedingOff) > 0
	}
	b.mu.Unlock()
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
	if err := b.eng.SuspendFeeding(ctx, coll, suspend, dests); err != nil {
		return "", err
	}
	b.mu.Lock()
	if suspend {
		cs.feedingOff[dest] = true
	} else {
		delete(cs.feedingOff, dest)
		if dest == "" {
			clear(cs.feedingOff)
		}
	}
	b.mu.Unlock()
	if suspend {
		return fmt.Sprintf("Suspended feeding of %s to %s", coll, destName(dest)), nil
	}
	return fmt.Sprintf("Resumed feeding of %s to %s", coll, destName(dest)), nil
}

func (b *Backend) CollectionSuspendFeeding(ctx context.Context, coll, dest string) (string, error) {
	return b.feeding(ctx, coll, dest, true)
}

func (b *Backend) CollectionResumeFeeding(ctx context.Context, coll, dest string) (string, error) {
	return b.feeding(ctx, coll, dest, false)
}

func (b *Backend) refreshOnly(ctx context.Context, coll string, on bool) (string, error) {
	if _, err := b.live(ctx, coll); err != nil {
		return "", err
	}
	b.syncModes(ctx)
	if err := b.eng.SetRefreshOnly(ctx, coll, on); err != nil {
		return "", err
	}
	b.mu.Lock()
	b.state(coll).refreshOnly = on
	b.mu.Unlock()
	if on {
		return "Collection " + coll + " only refreshes known content", nil
	}
	return "Collection " + coll + " crawls new content", nil
}

func (b *Backend) CollectionEnableRefreshOnly(ctx context.Context, coll string) (string, error) {
	return b.refreshOnly(ctx, coll, true)
}

func (b *Backend) CollectionDisableRefreshOnly(ctx context.Context, coll string) (string, error) {
	return b.refreshOnly(ctx, coll, false)
}

// ConfigurationChanged rereads the configuration files the process was
// started with and adds or updates their collections.
func (b *Backend) ConfigurationChanged(ctx context.Context) error {
	if len(b.configs) == 0 && b.cfgFrom != "" {
		return fmt.Errorf("no configuration file to reread: this process takes its collections from its %s (call ConfigurationChanged there, which relays the changes)", b.cfgFrom)
	}
	for _, path := range b.configs {
		cfg, err := config.ParseFile(path, nil)
		if err != nil {
			return fmt.Errorf("rereading %s: %w", path, err)
		}
		if len(cfg.Collections) == 0 {
			continue
		}
		if _, err := b.add(ctx, cfg, false); err != nil {
			return err
		}
	}
	b.log.Info("admin: configuration reread", "files", len(b.configs))
	return nil
}

// ReRegister is a no-op: trawl has no configuration service to register
// with (MS-FSCX is not public).
func (b *Backend) ReRegister(ctx context.Context) error {
	b.log.Info("admin: ReRegister called; there is no configuration service to register with")
	return nil
}
