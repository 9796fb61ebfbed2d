package admintest

import (
	"context"
	"fmt"
	"slices"

	"github.com/trawl/trawl/internal/admin"
	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/stats"
)

var _ admin.Extensions = (*Fake)(nil)

func (f *Fake) CollectionQuarantineSiteRequeue(ctx context.Context, collection, site string, seconds int) (string, error) {
	return f.simple(collection, func(c *Collection) (string, error) {
		c.Quarantined[site] = seconds
		c.Requeued = append(c.Requeued, site)
		return fmt.Sprintf("Quarantined site %s for %d seconds, then requeued at the front", site, seconds), nil
	})
}

// CollectionSetState records the state; a suspended state (4, 5, 8)
// makes the status suspended, compaction (6, 7) compacting, others
// crawling.
func (f *Fake) CollectionSetState(ctx context.Context, collection string, state int) (string, error) {
	return f.simple(collection, func(c *Collection) (string, error) {
		c.State = state
		st := stats.StatusCrawling
		switch state {
		case 4, 5, 8:
			st = stats.StatusSuspended
		case 6, 7:
			st = stats.StatusCompacting
		}
		f.setStatus(c, st)
		return fmt.Sprintf("Collection %s set to state %s", collection, cmt.CollectionState(state)), nil
	})
}

func (f *Fake) RerouteNodeScheduler(ctx context.Context, node string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rerouted = append(f.rerouted, node)
	return "Rerouted 0 routing attributes of node scheduler " + node, nil
}

// Rerouted lists the nodes RerouteNodeScheduler was called with.
func (f *Fake) Rerouted() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.rerouted)
}
