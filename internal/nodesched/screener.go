package nodesched

import (
	"context"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/nodesched/crawlpipe"
)

// URIs received from the multinode scheduler (CMD_UM_URI, CMD_UM_URI_URG)
// are screened off the event loop: a regexp rule with nested quantifiers
// costs up to its match timeout per URI, and the loop serves every
// collection. The driver hands each such message to a goroutine of its
// collection (a bounded queue of screenQueue messages), which screens the
// entry and posts the message back to the loop with its verdict; the
// Machine then uses the verdict instead of screening again, unless the
// collection was reconfigured meanwhile. A slow collection thus delays
// only its own URIs. When a collection's queue is full the loop screens
// the message itself (the queue is back-pressure, not a place to lose
// URIs). A screening that times out rejects the URI and counts in the
// collection's screen_timeouts.

// screenQueue is the number of messages a collection's screener holds.
const screenQueue = 4096

// screenVerdict is the result of screening an entry's URI off the loop
// with the collection settings s.
type screenVerdict struct {
	s      *crawlpipe.Settings
	nu     *url.URL
	reason string
}

type screenReq struct {
	peer Peer
	msg  cmt.Message
	s    *crawlpipe.Settings
	raw  string
}

// screeners are the per-collection screening goroutines of a Driver.
// offer is called from the event loop only.
type screeners struct {
	ctx context.Context
	// post hands a message and its verdict back to the loop; false once
	// the driver stopped.
	post    func(r screenReq, v *screenVerdict) bool
	pending *atomic.Int64
	qs      map[string]chan screenReq
}

// offer queues r on the screener of coll; false when its queue is full.
func (sc *screeners) offer(coll string, r screenReq) bool {
	q := sc.qs[coll]
	if q == nil {
		q = make(chan screenReq, screenQueue)
		sc.qs[coll] = q
		go sc.run(q)
	}
	select {
	case q <- r:
		sc.pending.Add(1)
		return true
	default:
		return false
	}
}

func (sc *screeners) run(q chan screenReq) {
	for {
		select {
		case <-sc.ctx.Done():
			return
		case r := <-q:
			nu, reason := crawlpipe.ScreenReason(r.s, r.raw)
			if !sc.post(r, &screenVerdict{s: r.s, nu: nu, reason: reason}) {
				return
			}
		}
	}
}

// ToScreen returns, for a message whose entry the collection's rules must
// screen (CMD_UM_URI and CMD_UM_URI_URG without URIFIgnoreRules, for a
// collection that takes URIs), the collection, its settings and the URI.
func (m *Machine) ToScreen(msg cmt.Message) (coll string, s *crawlpipe.Settings, raw string, ok bool) {
	var e *cmt.Entry
	switch x := msg.(type) {
	case *cmt.UMURI:
		coll, e = x.Collection, &x.Entry
	case *cmt.UMURIUrg:
		coll, e = x.Collection, &x.Entry
	default:
		return "", nil, "", false
	}
	c := m.colls[coll]
	if c == nil || c.state == cmt.StateRemoving || c.state == cmt.StateBlocked || e.Flags&cmt.URIFIgnoreRules != 0 {
		return "", nil, "", false
	}
	return coll, c.s, e.URI.URI, true
}

// HandleScreened is Handle for a message ToScreen named, screened off the
// loop with verdict v.
func (m *Machine) HandleScreened(from Peer, msg cmt.Message, v *screenVerdict, now time.Time) error {
	m.verdict = v
	defer func() { m.verdict = nil }()
	return m.Handle(from, msg, now)
}
