package admin

import (
	"context"

	"github.com/trawl/trawl/internal/xmlrpc"
)

// Extensions are the administrative operations of trawl that MS-FSCADM
// has no method for, although MS-FSCMT has the message that carries them
// out: quarantine with requeue (CMD_UM_QUARANTINE_SITE_REQUEUE), setting a
// collection's state (CMD_UM_CONF_STATE) and moving the sites of a node
// scheduler that will not come back to the others. A Backend that
// implements Extensions serves them as three more methods (section
// "trawl" in system.methodHelp); `trawl admin quarantine --requeue`,
// `state` and `reroute` call them.
type Extensions interface {
	// CollectionQuarantineSiteRequeue is CollectionQuarantineSite, after
	// which the site is queued at the front of the crawl queue.
	CollectionQuarantineSiteRequeue(ctx context.Context, collection, site string, seconds int) (string, error)
	// CollectionSetState sets a collection's state, one of MS-FSCMT
	// 2.2.3.21 but 3 (being removed: CollectionDelete does that).
	CollectionSetState(ctx context.Context, collection string, state int) (string, error)
	// RerouteNodeScheduler moves every site routed to the node scheduler
	// named (its --id) to the registered node schedulers (multinode
	// scheduler only).
	RerouteNodeScheduler(ctx context.Context, node string) (string, error)
}

// extensionTable returns the methods of Extensions.
func extensionTable() []*method {
	ext := func(s *Server) Extensions { e, _ := s.backend.(Extensions); return e }
	return []*method{
		{name: "CollectionQuarantineSiteRequeue", section: "trawl", params: []param{collParam, siteParam, p("Time", pInt)}, returns: "array",
			help: "Suspend crawling of a site for Time seconds, then queue it at the front of the crawl queue (CMD_UM_QUARANTINE_SITE_REQUEUE).",
			call: func(ctx context.Context, s *Server, a args) (xmlrpc.Value, error) {
				if a.int(2) < 0 {
					return nil, faultf("CollectionQuarantineSiteRequeue: parameter 3 (Time): must not be negative, got %d", a.int(2))
				}
				return cresult(ext(s).CollectionQuarantineSiteRequeue(ctx, a.str(0), a.str(1), a.int(2)))
			}},
		{name: "CollectionSetState", section: "trawl", params: []param{collParam, p("State", pInt)}, returns: "array",
			help: "Set a collection's state on every node scheduler (CMD_UM_CONF_STATE): 1 active, 2 blocked, 4 suspended by the user, 5 suspended (disk full), 6 compaction initiated, 7 compacting, 8 suspended (variable delay).",
			call: func(ctx context.Context, s *Server, a args) (xmlrpc.Value, error) {
				if st := a.int(1); st < 1 || st > 8 || st == 3 {
					return nil, faultf("CollectionSetState: parameter 2 (State): want 1, 2 or 4-8 (MS-FSCMT 2.2.3.21; 3 is CollectionDelete's), got %d", st)
				}
				return cresult(ext(s).CollectionSetState(ctx, a.str(0), a.int(1)))
			}},
		{name: "RerouteNodeScheduler", section: "trawl", params: []param{p("NodeID", pString)}, returns: "array",
			help: "Move every site routed to a node scheduler that will not come back (its --id) to the registered node schedulers; it may not register again (multinode scheduler only).",
			call: func(ctx context.Context, s *Server, a args) (xmlrpc.Value, error) {
				if s.role != MultinodeScheduler {
					return nil, faultf("RerouteNodeScheduler: this crawler is a %s, not a multinode scheduler", s.role)
				}
				if a.str(0) == "" {
					return nil, faultf("RerouteNodeScheduler: parameter 1 (NodeID): empty")
				}
				return cresult(ext(s).RerouteNodeScheduler(ctx, a.str(0)))
			}},
	}
}

// CollectionQuarantineSiteRequeue suspends a site for seconds, then queues
// it at the front of the crawl queue (an Extensions method).
func (c *Client) CollectionQuarantineSiteRequeue(ctx context.Context, collection, site string, seconds int) (string, error) {
	return c.cresult(ctx, "CollectionQuarantineSiteRequeue", xmlrpc.String(collection), xmlrpc.String(site), xmlrpc.Int(seconds))
}

// CollectionSetState sets a collection's state (an Extensions method).
func (c *Client) CollectionSetState(ctx context.Context, collection string, state int) (string, error) {
	return c.cresult(ctx, "CollectionSetState", xmlrpc.String(collection), xmlrpc.Int(state))
}

// RerouteNodeScheduler moves the sites of a node scheduler that will not
// come back to the others (an Extensions method).
func (c *Client) RerouteNodeScheduler(ctx context.Context, node string) (string, error) {
	return c.cresult(ctx, "RerouteNodeScheduler", xmlrpc.String(node))
}
