package multinode

import (
	"context"
	"fmt"
	"time"

	"github.com/trawl/trawl/internal/cmt"
)

// AddURIs queues URIs given by an administrator (MS-FSCADM AddURIs,
// AddURIFile, CollectionRefetchURI) like start URIs: they are routed and
// forwarded as any entry, urgent ones at the front of the queue and
// forwarded as CMD_UM_URI_URG. With force they carry URIF_FORCE, so a node
// scheduler crawls them even if it has seen them in this refresh cycle
// (a refetch). It returns how many were queued; a URI that cannot be
// parsed is an error and nothing is queued.
func (m *MNS) AddURIs(name string, uris []string, urgent, force bool, now time.Time) (int, []Action, error) {
	col, err := m.live(name)
	if err != nil {
		return 0, m.flush(), err
	}
	entries := make([]cmt.Entry, 0, len(uris))
	for _, raw := range uris {
		e, err := StartEntry(raw)
		if err != nil {
			return 0, m.flush(), &URIError{URI: raw, Err: err}
		}
		e.Flags &^= cmt.URIFStartURI
		if force {
			e.Flags |= cmt.URIFForce
			e.QueueFlags |= cmt.QFForce
		}
		entries = append(entries, e)
	}
	n := 0
	for _, e := range entries {
		if col.mufilter != nil && !force && col.mufilter.testAndAdd(e.URI.URI) {
			col.counts.Filtered++
			continue
		}
		m.enqueue(col, e, urgent, now)
		n++
	}
	return n, m.flush(), nil
}

// URIError is AddURIs' error for a URI that cannot be parsed.
type URIError struct {
	URI string
	Err error
}

func (e *URIError) Error() string { return fmt.Sprintf("multinode: URI %q: %v", e.URI, e.Err) }
func (e *URIError) Unwrap() error { return e.Err }

// AddURIs queues URIs given by an administrator (see MNS.AddURIs).
func (s *Server) AddURIs(ctx context.Context, name string, uris []string, urgent, force bool) (int, error) {
	var n int
	err := s.op(ctx, func(m *MNS, now time.Time) ([]Action, error) {
		var acts []Action
		var err error
		n, acts, err = m.AddURIs(name, uris, urgent, force, now)
		return acts, err
	})
	return n, err
}
