// Package nsadmin is the node scheduler's side of the MS-FSCADM backend:
// an Engine of internal/crawladmin over a running nodesched.Driver, and
// the Observe hook that feeds the backend's status page and LastUri.
//
// Decisions:
//   - An operation acts on this node as the multinode scheduler's message
//     would: the backend hands the node scheduler's machine the MS-FSCMT
//     message (CMD_ADM_CONF_SUSPEND, CMD_UM_DELETE_SITE, ...) as if the
//     multinode scheduler had sent it, so there is one code path for both.
//   - What MS-FSCMT has no message for (refresh-only, refetching a whole
//     site, refeeding) calls the machine directly.
//   - Statistics are the node scheduler's own cumulative counters; the
//     feeding suspension and refresh-only mode come from its crawl store,
//     which keeps them across restarts.
//   - A node scheduler's collections come from its multinode scheduler:
//     ConfigurationChanged has no file to reread and is a fault that says
//     so (crawladmin.Options.ConfigFrom).
//   - A node scheduler does not route sites: CollectionGetSiteRoutingAddress
//     is refused (ask the multinode scheduler), GetNodeSchedulerXmlRpcPorts
//     lists nothing, and SetLogLevel is not forwarded anywhere.
package nsadmin

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/trawl/trawl/internal/admin"
	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/config"
	"github.com/trawl/trawl/internal/crawladmin"
	"github.com/trawl/trawl/internal/fetch"
	"github.com/trawl/trawl/internal/nodesched"
	"github.com/trawl/trawl/internal/nodesched/crawlpipe"
	"github.com/trawl/trawl/internal/stats"
)

// Engine is a node scheduler as a crawladmin.Engine.
type Engine struct{ NS *nodesched.Driver }

var _ crawladmin.Engine = Engine{}

// New returns the backend of a node scheduler of a multinode setup.
func New(ns *nodesched.Driver, o crawladmin.Options) *crawladmin.Backend {
	o.Role = admin.NodeScheduler
	if len(o.Configs) == 0 {
		o.ConfigFrom = "multinode scheduler"
	}
	return crawladmin.New(Engine{NS: ns}, nil, o)
}

// onNode runs fn on the node scheduler's event loop for a collection it has.
func (e Engine) onNode(ctx context.Context, coll string, fn func(m *nodesched.Machine, now time.Time) error) error {
	return e.NS.Exec(ctx, func(m *nodesched.Machine, now time.Time) error {
		if m.State(coll) == 0 {
			return fmt.Errorf("collection %q: %w", coll, admin.ErrNoCollection)
		}
		return fn(m, now)
	})
}

// toNode hands a message to the machine as if the multinode scheduler had
// sent it.
func (e Engine) toNode(ctx context.Context, coll string, msg cmt.Message) error {
	return e.onNode(ctx, coll, func(m *nodesched.Machine, now time.Time) error {
		return m.Handle(nodesched.MNS, msg, now)
	})
}

func (e Engine) Collections(ctx context.Context) ([]crawladmin.CollectionInfo, error) {
	var out []crawladmin.CollectionInfo
	err := e.NS.Exec(ctx, func(m *nodesched.Machine, now time.Time) error {
		for _, n := range m.Collections() {
			out = append(out, crawladmin.CollectionInfo{Name: n, State: m.State(n)})
		}
		return nil
	})
	return out, err
}

func (e Engine) AddCollection(ctx context.Context, c *config.Collection, update bool) error {
	if err := e.NS.AddCollection(ctx, c); err != nil {
		return admin.Refuse("collection %s: %v", c.Name, err)
	}
	return nil
}

func (e Engine) RemoveCollection(ctx context.Context, name string) error {
	return e.toNode(ctx, name, &cmt.AdmConfRemove{Collection: name})
}

func (e Engine) Queue(ctx context.Context, coll string, uris []string, urgent, force bool) (int, error) {
	var n int
	err := e.onNode(ctx, coll, func(m *nodesched.Machine, now time.Time) error {
		var err error
		n, err = m.Refetch(coll, uris, false, urgent, now)
		return err
	})
	return n, err
}

func (e Engine) DeleteSite(ctx context.Context, coll, site string) error {
	return e.toNode(ctx, coll, &cmt.UMDeleteSite{Collection: coll, Site: site})
}

func (e Engine) DeleteURIs(ctx context.Context, coll string, sites []cmt.SiteURIs) error {
	return e.toNode(ctx, coll, &cmt.UMDeleteURIs{Collection: coll, Sites: sites, ErrCode: cmt.ErrCodeUser})
}

func (e Engine) PreemptSite(ctx context.Context, coll, site string) error {
	return e.toNode(ctx, coll, &cmt.AdmPreemptSite{Collection: coll, Site: site, Requeue: true})
}

func (e Engine) QuarantineSite(ctx context.Context, coll, site string, seconds int) error {
	return e.toNode(ctx, coll, &cmt.UMQuarantineSite{Collection: coll, Site: site, Seconds: int64(seconds)})
}

func (e Engine) ReprocessSite(ctx context.Context, coll, site, prefix, dest string, exact bool) error {
	return e.toNode(ctx, coll, &cmt.UMReprocessSite{Collection: coll, Site: site, Prefix: prefix, Destination: dest, Exact: exact})
}

func (e Engine) Refresh(ctx context.Context, coll, sub string, flags cmt.RefreshFlags) error {
	return e.toNode(ctx, coll, &cmt.AdmConfRefresh{Collection: coll, SubCollection: sub, Flags: flags})
}

func (e Engine) Suspend(ctx context.Context, coll string) error {
	return e.toNode(ctx, coll, &cmt.AdmConfSuspend{Collection: coll, State: cmt.StateSuspendedUser})
}

func (e Engine) Resume(ctx context.Context, coll string) error {
	return e.toNode(ctx, coll, &cmt.AdmConfResume{Collection: coll})
}

func (e Engine) SuspendFeeding(ctx context.Context, coll string, suspend bool, dests []string) error {
	return e.toNode(ctx, coll, &cmt.AdmConfFeedingSuspend{Collection: coll, Suspend: suspend, Destinations: dests})
}

func (e Engine) SetRefreshOnly(ctx context.Context, coll string, on bool) error {
	return e.onNode(ctx, coll, func(m *nodesched.Machine, now time.Time) error {
		m.SetRefreshOnly(coll, on)
		return nil
	})
}

func (e Engine) RefetchURI(ctx context.Context, coll, uri string, o crawladmin.RefetchOptions) error {
	return e.onNode(ctx, coll, func(m *nodesched.Machine, now time.Time) error {
		_, err := m.RefetchWith(coll, []string{uri}, nodesched.RefetchOptions{Site: o.Site, Urgent: o.Urgent, Refeed: o.Refeed}, now)
		return err
	})
}

func (e Engine) Route(ctx context.Context, coll, site string) (admin.HostPort, error) {
	return admin.HostPort{}, admin.Refuse("a node scheduler does not route sites; ask the multinode scheduler")
}

func (e Engine) NodeSchedulers(ctx context.Context) ([]admin.HostPort, error) { return nil, nil }

func (e Engine) ForwardLogLevel(ctx context.Context, level int) error { return nil }

func (e Engine) Counters(ctx context.Context) map[string]stats.CounterReport {
	out := map[string]stats.CounterReport{}
	for name, c := range e.NS.Stats() {
		out[name] = stats.CounterReport{Counters: c}
	}
	for name, ss := range e.NS.SiteStats() {
		r := out[name]
		if r.Counters == nil {
			r.Counters = map[string]int64{}
		}
		r.Sites = make(map[string]map[string]int64, len(ss))
		for s, c := range ss {
			r.Sites[s] = c
		}
		out[name] = r
	}
	return out
}

// DNS returns the node scheduler's DNS counters: the lookups it asked its
// multinode scheduler for (nodesched.DNSCounts).
func (e Engine) DNS(ctx context.Context) (stats.DNSCounters, bool) {
	var d nodesched.DNSCounts
	err := e.NS.Exec(ctx, func(m *nodesched.Machine, _ time.Time) error { d = m.DNSStats(); return nil })
	if err != nil {
		return stats.DNSCounters{}, false
	}
	return stats.DNSCounters{Requests: d.Requests, Responses: d.Responses, Retries: d.Retries,
		Written: d.Written, Read: d.Read, RCodes: d.RCodes}, true
}

func (e Engine) Modes(ctx context.Context) (map[string]crawladmin.Modes, bool) {
	got := map[string]crawladmin.Modes{}
	err := e.NS.Exec(ctx, func(m *nodesched.Machine, now time.Time) error {
		for _, n := range m.Collections() {
			f := m.Feeding(n)
			md := crawladmin.Modes{FeedingAll: f.All, RefreshOnly: m.RefreshOnly(n)}
			for d := range f.Destinations {
				md.FeedingOff = append(md.FeedingOff, d)
			}
			got[n] = md
		}
		return nil
	})
	return got, err == nil
}

// ConfigXML writes the configuration the node scheduler crawls with (a
// node scheduler of a multinode setup got the collection from the
// multinode scheduler).
func (e Engine) ConfigXML(ctx context.Context, coll string) (string, error) {
	var buf bytes.Buffer
	err := e.onNode(ctx, coll, func(m *nodesched.Machine, now time.Time) error {
		return config.WriteCollections(&buf, []*config.Collection{m.Settings(coll).Config})
	})
	return buf.String(), err
}

// Observe returns the node scheduler's Observe hook (nodesched.Config):
// it records each finished request as the collection's LastUri, its
// duration in m (when not nil), and failed fetches on the status page.
func Observe(b *crawladmin.Backend, m *admin.Metrics) func(coll string, o *crawlpipe.Outcome) {
	return func(coll string, o *crawlpipe.Outcome) {
		if m != nil && o.Skipped == "" {
			m.ObserveFetch(coll, o.Duration)
		}
		if o.Skipped == "" && o.Job != nil {
			b.NoteLastURI(coll, o.Job.Fetch.Site, o.Job.Fetch.URI)
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
			b.NoteError(admin.ErrorEvent{T: float64(o.Start.Add(o.Duration).UnixNano()) / 1e9, Collection: coll,
				URI: o.Job.Fetch.URI, Status: o.Status, Error: msg})
		}
	}
}

// Announced is the host and port a node scheduler announces for its
// admin interface (PKT_XMLRPCRT of CMD_UM_INIT), which
// CollectionGetSiteRoutingAddress and GetNodeSchedulerXmlRpcPorts report
// and the multinode scheduler calls: the listener's address when it is
// bound to one IP (a client can reach it there and nowhere else), the
// machine's host name when it listens on every address, and the host name
// with the base port when there is no listener.
func Announced(addr net.Addr, basePort int) (string, int32) {
	host, _ := os.Hostname()
	ta, ok := addr.(*net.TCPAddr)
	if !ok {
		return host, int32(basePort)
	}
	if ta.IP != nil && !ta.IP.IsUnspecified() {
		host = ta.IP.String()
	}
	return host, int32(ta.Port)
}

// The methods of crawladmin.ExtEngine: the two a node scheduler does are
// handed to its machine as the multinode scheduler's messages.

var _ crawladmin.ExtEngine = Engine{}

func (e Engine) QuarantineSiteRequeue(ctx context.Context, coll, site string, seconds int) error {
	return e.toNode(ctx, coll, &cmt.UMQuarantineSiteRequeue{Collection: coll, Site: site, Seconds: int64(seconds)})
}

func (e Engine) SetState(ctx context.Context, coll string, state cmt.CollectionState) error {
	return e.toNode(ctx, coll, &cmt.UMConfState{Collection: coll, State: state})
}

// RerouteNode is refused: a node scheduler routes no sites.
func (e Engine) RerouteNode(ctx context.Context, node string) (int, error) {
	return 0, admin.Refuse("a node scheduler routes no sites: reroute on the multinode scheduler")
}
