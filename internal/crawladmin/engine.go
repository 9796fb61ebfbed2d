package crawladmin

import (
	"context"

	"github.com/trawl/trawl/internal/admin"
	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/config"
	"github.com/trawl/trawl/internal/stats"
)

// CollectionInfo is what an Engine reports of a collection.
type CollectionInfo struct {
	Name  string
	State cmt.CollectionState
	// Idle is set when the engine holds nothing for the collection
	// (nothing queued or waiting at a multinode scheduler; a node
	// scheduler leaves it to its counters).
	Idle bool
}

// Modes are a collection's feeding suspension and refresh-only mode as a
// node scheduler's store keeps them across restarts.
type Modes struct {
	// FeedingAll is set when feeding to every destination is suspended;
	// FeedingOff lists the suspended destinations.
	FeedingAll  bool
	FeedingOff  []string
	RefreshOnly bool
}

// RefetchOptions are CollectionRefetchURI's flags that a plain queued
// refetch cannot carry.
type RefetchOptions struct {
	// Site refetches every stored URI of the URI's crawl site too.
	Site bool
	// Refeed sets URIF_FORCE_REFEED: the documents are fed again even if
	// unchanged.
	Refeed bool
	// Urgent queues them at the front.
	Urgent bool
}

// Engine is the crawl engine under a Backend: one role's implementation
// (internal/multinode/mnsadmin, internal/nodesched/nsadmin) or a
// composition of two (trawl run). Each method acts on the engine and
// returns errors the API understands: an unknown collection wraps
// admin.ErrNoCollection, a refusal is admin.Refuse, anything else is a
// fault.
type Engine interface {
	// Collections lists the collections in any order.
	Collections(ctx context.Context) ([]CollectionInfo, error)
	// AddCollection adds c, or updates the collection of that name when
	// update is set.
	AddCollection(ctx context.Context, c *config.Collection, update bool) error
	RemoveCollection(ctx context.Context, name string) error
	// Queue queues URIs of a collection (force: crawl them even if seen in
	// this cycle) and returns how many were queued.
	Queue(ctx context.Context, coll string, uris []string, urgent, force bool) (int, error)
	DeleteSite(ctx context.Context, coll, site string) error
	DeleteURIs(ctx context.Context, coll string, sites []cmt.SiteURIs) error
	PreemptSite(ctx context.Context, coll, site string) error
	QuarantineSite(ctx context.Context, coll, site string, seconds int) error
	ReprocessSite(ctx context.Context, coll, site, prefix, dest string, exact bool) error
	Refresh(ctx context.Context, coll, sub string, flags cmt.RefreshFlags) error
	Suspend(ctx context.Context, coll string) error
	Resume(ctx context.Context, coll string) error
	// SuspendFeeding suspends or resumes feeding to dests (nil: every
	// destination).
	SuspendFeeding(ctx context.Context, coll string, suspend bool, dests []string) error
	SetRefreshOnly(ctx context.Context, coll string, on bool) error
	// RefetchURI refetches uri with the options a queued refetch cannot
	// carry (Site or Refeed is set).
	RefetchURI(ctx context.Context, coll, uri string, o RefetchOptions) error
	// Route returns the admin address of the node scheduler a site of a
	// collection is routed to.
	Route(ctx context.Context, coll, site string) (admin.HostPort, error)
	// NodeSchedulers lists the registered node schedulers' admin
	// addresses.
	NodeSchedulers(ctx context.Context) ([]admin.HostPort, error)
	// ForwardLogLevel passes a new log level on to the processes this one
	// speaks for (a multinode scheduler's node schedulers).
	ForwardLogLevel(ctx context.Context, level int) error
	// Counters returns the cumulative counters of every collection.
	Counters(ctx context.Context) map[string]stats.CounterReport
	// DNS returns the DNS counters, when the engine resolves names.
	DNS(ctx context.Context) (stats.DNSCounters, bool)
	// Modes returns the modes a node scheduler's store keeps; ok is false
	// when the engine keeps none (the Backend keeps what it was told).
	Modes(ctx context.Context) (modes map[string]Modes, ok bool)
	// ConfigXML writes the configuration a collection is crawled with,
	// for a collection the Backend was never given.
	ConfigXML(ctx context.Context, coll string) (string, error)
}
