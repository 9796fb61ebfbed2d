// Package mnsadmin is the multinode scheduler's side of the MS-FSCADM
// backend: an Engine of internal/crawladmin over a running
// multinode.Server.
//
// Decisions:
//   - Collection operations go through the multinode scheduler's machine,
//     which relays them to the node schedulers in MS-FSCMT messages
//     (CMD_ADM_CONF_ADD, CMD_ADM_CONF_SUSPEND, CMD_UM_DELETE_SITE, ...),
//     as in any distributed setup.
//   - What MS-FSCMT cannot carry (the log level, refresh-only, refetching
//     a whole site, refeeding) is forwarded to the node schedulers' own
//     XML-RPC interfaces, at the admin address each announced in
//     CMD_UM_INIT: the log level and refresh-only to every registered node
//     scheduler (their errors joined), a site refetch or refeed to the one
//     the site is routed to. A refeed of a site not routed yet falls back
//     to a plain refetch (what it fetches of a site never crawled is fed
//     anyway).
//   - Statistics are the sums of the node schedulers' CMD_UM_STAT deltas
//     the multinode scheduler keeps, decoded once by
//     stats.ParseCounterReport; SumActiveSites is their active_sites.
//   - The multinode scheduler's errors map onto the API's: an unknown
//     collection is admin.ErrNoCollection (a fault); no node scheduler
//     registered, the site's node scheduler offline and a URI that does
//     not parse are refusals (the in-band failure).
package mnsadmin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/trawl/trawl/internal/admin"
	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/collstore"
	"github.com/trawl/trawl/internal/config"
	"github.com/trawl/trawl/internal/crawladmin"
	"github.com/trawl/trawl/internal/multinode"
	"github.com/trawl/trawl/internal/stats"
	"github.com/trawl/trawl/internal/urls"
)

// Engine is a multinode scheduler as a crawladmin.Engine.
type Engine struct {
	MNS *multinode.Server
	// NodeClient returns a client of a node scheduler's admin interface
	// (admin.NewClient when nil).
	NodeClient func(hp admin.HostPort) *admin.Client
}

var _ crawladmin.Engine = (*Engine)(nil)

// New returns the backend of a multinode scheduler; known are the
// collections it started with.
func New(e *Engine, known []*config.Collection, o crawladmin.Options) *crawladmin.Backend {
	o.Role = admin.MultinodeScheduler
	o.SumActiveSites = true
	return crawladmin.New(e, known, o)
}

func (e *Engine) client(hp admin.HostPort) *admin.Client {
	if e.NodeClient != nil {
		return e.NodeClient(hp)
	}
	return admin.NewClient(hp.String(), nil)
}

// mapErr turns the multinode scheduler's errors into the API's.
func mapErr(err error) error {
	var ue *multinode.URIError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, multinode.ErrUnknownCollection):
		return fmt.Errorf("%v: %w", err, admin.ErrNoCollection)
	case errors.Is(err, multinode.ErrNoNodes), errors.Is(err, multinode.ErrNodeOffline), errors.As(err, &ue):
		return admin.Refuse("%v", err)
	}
	return err
}

// forward calls fn on every registered node scheduler's admin interface
// and joins their errors.
func (e *Engine) forward(ctx context.Context, fn func(c *admin.Client) error) error {
	nodes, err := e.MNS.Nodes(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, n := range nodes {
		hp := admin.HostPort{Host: n.AdminHost, Port: int(n.AdminPort)}
		if err := fn(e.client(hp)); err != nil {
			errs = append(errs, fmt.Errorf("node scheduler %s (%s): %w", n.NodeID, hp, err))
		}
	}
	return errors.Join(errs...)
}

func (e *Engine) Collections(ctx context.Context) ([]crawladmin.CollectionInfo, error) {
	infos, err := e.MNS.CollectionInfos(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]crawladmin.CollectionInfo, len(infos))
	for i, ci := range infos {
		out[i] = crawladmin.CollectionInfo{Name: ci.Name, State: ci.State, Idle: ci.Queued == 0 && ci.Waiting == 0}
	}
	return out, nil
}

func (e *Engine) AddCollection(ctx context.Context, c *config.Collection, update bool) error {
	spec, err := multinode.NewCollectionSpec(c, nil)
	if err != nil {
		return admin.Refuse("collection %s: %v", c.Name, err)
	}
	if update {
		return mapErr(e.MNS.UpdateCollection(ctx, spec))
	}
	return mapErr(e.MNS.AddCollection(ctx, spec))
}

func (e *Engine) RemoveCollection(ctx context.Context, name string) error {
	return mapErr(e.MNS.RemoveCollection(ctx, name))
}

func (e *Engine) Queue(ctx context.Context, coll string, uris []string, urgent, force bool) (int, error) {
	n, err := e.MNS.AddURIs(ctx, coll, uris, urgent, force)
	if err != nil {
		return 0, mapErr(err)
	}
	return n, nil
}

func (e *Engine) DeleteSite(ctx context.Context, coll, site string) error {
	return mapErr(e.MNS.DeleteSite(ctx, coll, site))
}

func (e *Engine) DeleteURIs(ctx context.Context, coll string, sites []cmt.SiteURIs) error {
	return mapErr(e.MNS.DeleteURIs(ctx, coll, sites))
}

func (e *Engine) PreemptSite(ctx context.Context, coll, site string) error {
	return mapErr(e.MNS.PreemptSite(ctx, coll, site, true))
}

func (e *Engine) QuarantineSite(ctx context.Context, coll, site string, seconds int) error {
	return mapErr(e.MNS.QuarantineSite(ctx, coll, site, time.Duration(seconds)*time.Second, false))
}

func (e *Engine) ReprocessSite(ctx context.Context, coll, site, prefix, dest string, exact bool) error {
	return mapErr(e.MNS.ReprocessSite(ctx, coll, site, prefix, dest, exact))
}

func (e *Engine) Refresh(ctx context.Context, coll, sub string, flags cmt.RefreshFlags) error {
	return mapErr(e.MNS.RefreshCollection(ctx, coll, sub, flags))
}

func (e *Engine) Suspend(ctx context.Context, coll string) error {
	return mapErr(e.MNS.SuspendCollection(ctx, coll, cmt.StateSuspendedUser))
}

func (e *Engine) Resume(ctx context.Context, coll string) error {
	return mapErr(e.MNS.ResumeCollection(ctx, coll))
}

func (e *Engine) SuspendFeeding(ctx context.Context, coll string, suspend bool, dests []string) error {
	return mapErr(e.MNS.SuspendFeeding(ctx, coll, suspend, dests))
}

func (e *Engine) SetRefreshOnly(ctx context.Context, coll string, on bool) error {
	return e.forward(ctx, func(c *admin.Client) error {
		var err error
		if on {
			_, err = c.CollectionEnableRefreshOnly(ctx, coll)
		} else {
			_, err = c.CollectionDisableRefreshOnly(ctx, coll)
		}
		return err
	})
}

func (e *Engine) RefetchURI(ctx context.Context, coll, uri string, o crawladmin.RefetchOptions) error {
	u, err := urls.Normalize(uri, nil)
	if err != nil {
		return admin.Refuse("URI %q: %v", uri, err)
	}
	hp, err := e.Route(ctx, coll, u.Hostname())
	if err != nil && !o.Site {
		// No node scheduler to ask: a plain refetch.
		_, err := e.Queue(ctx, coll, []string{uri}, o.Urgent, true)
		return err
	}
	if err != nil {
		return err
	}
	if _, err := e.client(hp).CollectionRefetchURI(ctx, coll, uri, o.Refeed, o.Site, o.Urgent); err != nil {
		return fmt.Errorf("node scheduler %s: %w", hp, err)
	}
	return nil
}

func (e *Engine) Route(ctx context.Context, coll, site string) (admin.HostPort, error) {
	host := strings.ToLower(site)
	if h, _, ok := strings.Cut(host, ":"); ok && !strings.HasPrefix(host, "[") {
		host = h
	}
	node, _, ok, err := e.MNS.Route(ctx, coll, host)
	if err != nil {
		return admin.HostPort{}, err
	}
	if !ok {
		return admin.HostPort{}, admin.Refuse("site %s is not routed to any node scheduler yet", site)
	}
	nodes, err := e.MNS.Nodes(ctx)
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

func (e *Engine) NodeSchedulers(ctx context.Context) ([]admin.HostPort, error) {
	nodes, err := e.MNS.Nodes(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]admin.HostPort, len(nodes))
	for i, n := range nodes {
		out[i] = admin.HostPort{Host: n.AdminHost, Port: int(n.AdminPort)}
	}
	return out, nil
}

func (e *Engine) ForwardLogLevel(ctx context.Context, level int) error {
	return e.forward(ctx, func(c *admin.Client) error { return c.SetLogLevel(ctx, level) })
}

func (e *Engine) Counters(ctx context.Context) map[string]stats.CounterReport {
	out := map[string]stats.CounterReport{}
	infos, err := e.MNS.CollectionInfos(ctx)
	if err != nil {
		return out
	}
	for _, ci := range infos {
		d, err := e.MNS.Stats(ctx, ci.Name)
		if err != nil {
			continue
		}
		out[ci.Name] = stats.ParseCounterReport(d)
	}
	return out
}

func (e *Engine) DNS(ctx context.Context) (stats.DNSCounters, bool) {
	d, err := e.MNS.DNSStats(ctx)
	if err != nil {
		return stats.DNSCounters{}, false
	}
	return stats.DNSCounters{Requests: d.Requests, Responses: d.Responses, Retries: d.Retries, Timeouts: d.Timeouts,
		Written: d.Written, Read: d.Read, RCodes: d.RCodes, MaxRate: d.MaxRate}, true
}

// Modes: the multinode scheduler keeps no modes; the backend keeps what
// it was told.
func (e *Engine) Modes(ctx context.Context) (map[string]crawladmin.Modes, bool) { return nil, false }

func (e *Engine) ConfigXML(ctx context.Context, coll string) (string, error) {
	return "", fmt.Errorf("collection %q: no configuration known", coll)
}

// Configs returns the configurations of specs.
func Configs(specs []*multinode.CollectionSpec) []*config.Collection {
	cols := make([]*config.Collection, 0, len(specs))
	for _, s := range specs {
		cols = append(cols, s.Config)
	}
	return cols
}

// WithSaved returns specs with the collections saved in store:
// a saved collection replaces the --config one of the same name (it was
// added or updated over the API after the process read --config) and the
// others are appended.
func WithSaved(specs []*multinode.CollectionSpec, store collstore.Store, log *slog.Logger) []*multinode.CollectionSpec {
	out := append([]*multinode.CollectionSpec(nil), specs...)
	for _, c := range store.Load(log) {
		sp, err := multinode.NewCollectionSpec(c, nil)
		if err != nil {
			log.Error("admin: saved collection skipped", "collection", c.Name, "err", err)
			continue
		}
		replaced := false
		for i, s := range out {
			if s.Config.Name == c.Name {
				out[i], replaced = sp, true
				log.Info("admin: the collection saved over the API replaces the --config one", "collection", c.Name)
			}
		}
		if !replaced {
			out = append(out, sp)
			log.Info("admin: collection restored from the API's saved copy", "collection", c.Name)
		}
	}
	return out
}

// The methods of crawladmin.ExtEngine.

var _ crawladmin.ExtEngine = (*Engine)(nil)

func (e *Engine) QuarantineSiteRequeue(ctx context.Context, coll, site string, seconds int) error {
	return mapErr(e.MNS.QuarantineSite(ctx, coll, site, time.Duration(seconds)*time.Second, true))
}

func (e *Engine) SetState(ctx context.Context, coll string, state cmt.CollectionState) error {
	err := e.MNS.SetCollectionState(ctx, coll, state)
	if errors.Is(err, multinode.ErrBadState) {
		return admin.Refuse("%v", err)
	}
	return mapErr(err)
}

// RerouteNode refuses (in band) a node scheduler still connected and a
// reroute with no node scheduler to take the sites.
func (e *Engine) RerouteNode(ctx context.Context, node string) (int, error) {
	n, err := e.MNS.RerouteNode(ctx, node)
	if errors.Is(err, multinode.ErrNodeConnected) {
		return 0, admin.Refuse("%v", err)
	}
	return n, mapErr(err)
}
