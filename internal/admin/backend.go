package admin

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"

	"github.com/trawl/trawl/internal/config"
	"github.com/trawl/trawl/internal/stats"
)

// Role is the part a crawler process plays (MS-FSCADM 1.3).
type Role int

// The roles.
const (
	// Standalone is a node scheduler that performs as a single node.
	Standalone Role = iota + 1
	// NodeScheduler is a node scheduler of a multinode setup.
	NodeScheduler
	// MultinodeScheduler is the multinode scheduler.
	MultinodeScheduler
)

func (r Role) String() string {
	switch r {
	case Standalone:
		return "standalone node scheduler"
	case NodeScheduler:
		return "node scheduler"
	case MultinodeScheduler:
		return "multinode scheduler"
	}
	return "unknown role"
}

// Log level bits (MS-FSCADM 2.2.3.5).
const (
	LogInfo     = 0x04
	LogDebug    = 0x08
	LogWarning  = 0x10
	LogError    = 0x20
	LogCritical = 0x40
	LogVerbose  = 0x80
	// LogMask is every defined bit.
	LogMask = 0xFC
)

// HostPort is a host name and port, the elements of
// GetNodeSchedulerXmlRpcPorts and the routing address of
// CollectionGetSiteRoutingAddress.
type HostPort struct {
	Host string
	Port int
}

func (h HostPort) String() string { return net.JoinHostPort(h.Host, strconv.Itoa(h.Port)) }

// CollectionReport is what CollectionGetStatistics2 returns: the current
// cycle, the previous one (nil when there is none; "prev" is then left
// out) and the whole life of the collection. A nil Cur or Complete is sent
// as an empty dictionary ("no statistics available").
type CollectionReport struct {
	Cur, Prev, Complete *stats.CollectionFlat
}

// GlobalReport is what GetGlobalStatistics returns: the recent delta (nil
// to leave it out) and the whole life of the crawler.
type GlobalReport struct {
	Delta, Complete *stats.GlobalFlat
}

// Backend does the work of each method. The server has checked the
// parameters; collection names are not checked (an unknown collection is
// the backend's error: return ErrNoCollection wrapped, which becomes a
// fault). Methods returning a string return the text of a successful
// cresult; Refuse makes an in-band failure.
type Backend interface {
	// Role is the role of the process; it must not change.
	Role() Role

	GetLogLevel(ctx context.Context) (int, error)
	// SetLogLevel sets the level (a mask within LogMask); a multinode
	// scheduler forwards it to every node scheduler before returning.
	SetLogLevel(ctx context.Context, level int) error
	// NodeSchedulers lists the registered node schedulers' admin
	// addresses (called on a multinode scheduler only).
	NodeSchedulers(ctx context.Context) ([]HostPort, error)
	// SiteManagerNum is the number of site managers (called on node
	// schedulers only; a multinode scheduler answers 0).
	SiteManagerNum(ctx context.Context) (int, error)

	AddURIs(ctx context.Context, collection string, urgent bool, uris []string) (string, error)
	AddURIFile(ctx context.Context, collection string, urgent bool, path string) (string, error)
	// CollectionAdd adds or updates the collections of cfg, parsed and
	// validated from data. force is the Force flag (already checked
	// against the role).
	CollectionAdd(ctx context.Context, cfg *config.Config, data []byte, force bool) (string, error)
	CollectionDelete(ctx context.Context, collection string, force bool) (string, error)
	CollectionDeleteSite(ctx context.Context, collection, site string) (string, error)
	CollectionDeleteURIs(ctx context.Context, collection string, uris []string) (string, error)
	CollectionDeleteURIFile(ctx context.Context, collection, path string) (string, error)
	CollectionGetConfigurationXML(ctx context.Context, collection string) (string, error)
	CollectionGetList(ctx context.Context) ([]string, error)
	CollectionGetSiteRoutingAddress(ctx context.Context, collection, site string) (HostPort, error)
	CollectionPreemptSite(ctx context.Context, collection, site string) (string, error)
	CollectionQuarantineSite(ctx context.Context, collection, site string, seconds int) (string, error)
	CollectionRefetch(ctx context.Context, collection, subcollection string) (string, error)
	CollectionRefetchURI(ctx context.Context, collection, uri string, refeed, site, immediately bool) (string, error)
	CollectionReprocessSite(ctx context.Context, collection, dest, site string) (string, error)
	CollectionReprocessSitePrefix(ctx context.Context, collection, site, prefix, dest string) (string, error)
	CollectionReprocessURI(ctx context.Context, collection, dest string, uris []string) (string, error)
	CollectionResume(ctx context.Context, collection string) (string, error)
	CollectionResumeFeeding(ctx context.Context, collection, dest string) (string, error)
	CollectionSuspend(ctx context.Context, collection string) (string, error)
	CollectionSuspendFeeding(ctx context.Context, collection, dest string) (string, error)
	CollectionDisableRefreshOnly(ctx context.Context, collection string) (string, error)
	CollectionEnableRefreshOnly(ctx context.Context, collection string) (string, error)
	CollectionGetStatus(ctx context.Context, collection string) (stats.Status, error)
	// CollectionGetSiteStatistics returns the site's statistics: Global
	// nil, one site series.
	CollectionGetSiteStatistics(ctx context.Context, collection, site string) (*stats.Statistics, error)
	// CollectionGetStatistics returns the statistics of collection, or of
	// every collection when it is "", with the global series.
	CollectionGetStatistics(ctx context.Context, collection string) (*stats.Statistics, error)
	CollectionGetStatistics2(ctx context.Context, collection string) (*CollectionReport, error)
	GetGlobalStatistics(ctx context.Context) (*GlobalReport, error)

	// ConfigurationChanged and ReRegister are the MS-FSCX callbacks of the
	// configuration service (MS-FSCADM 3.3.3): reread the configuration,
	// register again.
	ConfigurationChanged(ctx context.Context) error
	ReRegister(ctx context.Context) error
}

// ErrNoCollection is the error a Backend wraps for an unknown collection.
var ErrNoCollection = errors.New("no such collection")

// RefusedError is a refusal a Backend returns with Refuse.
type RefusedError struct{ Msg string }

func (e *RefusedError) Error() string { return e.Msg }

// Refuse returns an error that the server sends as the in-band failure of
// the method (cresult [0, msg]), not as a fault.
func Refuse(format string, args ...any) error {
	return &RefusedError{Msg: fmt.Sprintf(format, args...)}
}

// ErrState matches (errors.Is) the error a Backend returns with
// StateError: the collection's state does not allow the method (it is
// being deleted, it is already suspended). It is a fault.
var ErrState = errors.New("the collection's state does not allow this")

// StateError returns an error that matches ErrState, with the text given.
func StateError(format string, args ...any) error {
	return &stateError{msg: fmt.Sprintf(format, args...)}
}

type stateError struct{ msg string }

func (e *stateError) Error() string        { return e.msg }
func (e *stateError) Is(target error) bool { return target == ErrState }
