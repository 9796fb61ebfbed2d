package crawladmin

import (
	"context"
	"fmt"

	"github.com/trawl/trawl/internal/admin"
	"github.com/trawl/trawl/internal/cmt"
)

// ExtEngine is what an Engine does for the methods of admin.Extensions
// (the operations MS-FSCMT carries but MS-FSCADM has no method for). An
// Engine without it refuses them.
type ExtEngine interface {
	// QuarantineSiteRequeue is QuarantineSite with requeue
	// (CMD_UM_QUARANTINE_SITE_REQUEUE).
	QuarantineSiteRequeue(ctx context.Context, coll, site string, seconds int) error
	// SetState sets a collection's state (CMD_UM_CONF_STATE).
	SetState(ctx context.Context, coll string, state cmt.CollectionState) error
	// RerouteNode moves the routes of a node scheduler that will not come
	// back to the registered ones and returns how many routing
	// attributes moved.
	RerouteNode(ctx context.Context, node string) (int, error)
}

var _ admin.Extensions = (*Backend)(nil)

func (b *Backend) ext() (ExtEngine, error) {
	e, ok := b.eng.(ExtEngine)
	if !ok {
		return nil, admin.Refuse("this %s does not do this", b.role)
	}
	return e, nil
}

func (b *Backend) CollectionQuarantineSiteRequeue(ctx context.Context, coll, site string, seconds int) (string, error) {
	if _, err := b.live(ctx, coll); err != nil {
		return "", err
	}
	e, err := b.ext()
	if err != nil {
		return "", err
	}
	s := SiteOf(site)
	if err := e.QuarantineSiteRequeue(ctx, coll, s, seconds); err != nil {
		return "", err
	}
	return fmt.Sprintf("Quarantined site %s of collection %s for %d seconds, then requeued at the front", s, coll, seconds), nil
}

func (b *Backend) CollectionSetState(ctx context.Context, coll string, state int) (string, error) {
	if _, err := b.live(ctx, coll); err != nil {
		return "", err
	}
	e, err := b.ext()
	if err != nil {
		return "", err
	}
	st := cmt.CollectionState(state)
	if err := e.SetState(ctx, coll, st); err != nil {
		return "", err
	}
	return fmt.Sprintf("Collection %s set to state %s", coll, st), nil
}

func (b *Backend) RerouteNodeScheduler(ctx context.Context, node string) (string, error) {
	e, err := b.ext()
	if err != nil {
		return "", err
	}
	n, err := e.RerouteNode(ctx, node)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("Rerouted %d routing attributes of node scheduler %s", n, node), nil
}
