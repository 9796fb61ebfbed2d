package feed

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/trawl/trawl/internal/clicks"
	"github.com/trawl/trawl/internal/index"
)

// Local is the feeding chain of a single-machine crawl (trawl run): the
// embedded index under DATA/index (where `trawl search --data DATA`
// looks once the crawl has stopped), the feeders' in-process destination,
// the counts of what was indexed, and the search page and JSON API.
type Local struct {
	// Index is nil when the crawl feeds nothing (--index=false) or feeds
	// a distributed chain whose indexers are elsewhere.
	Index *index.Index
	// Remote, when set, is the feeders' destination instead of Index: the
	// content distributors of a distributed chain, named RemoteName.
	Remote     Dialer
	RemoteName string
	// Search, when set, is what the search page queries instead of
	// Index: the search engine Remote feeds (internal/opensearch, or the
	// indexers of a distributed chain, merged), and Searched names it in
	// the summary.
	Search   index.Searcher
	Searched string
	// OnClose run after Close closed the index (stopping an in-process
	// chain, closing the remote client).
	OnClose []func() error
	// Clicks, when set, logs the searches and result clicks of the search
	// page and API (OpenLog opens DATA/clicks/log).
	Clicks *clicks.Log
	log    *slog.Logger

	// Indexing counters, from the feeders' callbacks.
	added, removed, rejected atomic.Int64
	mu                       sync.Mutex
	first, last              time.Time // first and last document acknowledged
}

// OpenLocal opens (or creates) the index of data directory data; with
// enabled false it opens nothing and the chain feeds nothing.
func OpenLocal(data string, enabled bool, log *slog.Logger) (*Local, error) {
	s := &Local{log: log}
	if !enabled {
		return s, nil
	}
	var err error
	if s.Clicks, err = clicks.OpenLog(clicks.LogDir(data), nil); err != nil {
		return s, err
	}
	s.Index, err = index.Open(filepath.Join(data, "index"), index.Options{Create: true,
		Clicks: clicks.NewRelevance(clicks.RelevancePath(data))})
	return s, err
}

// NewLocal returns a chain over an index opened elsewhere (nil for none).
func NewLocal(idx *index.Index, log *slog.Logger) *Local { return &Local{Index: idx, log: log} }

// Dialer is the feeders' destination (nil when nothing is fed).
func (s *Local) Dialer() Dialer {
	if s.Remote != nil {
		return s.Remote
	}
	if s.Index == nil {
		return nil
	}
	return IndexDialer(s.Index)
}

// FeederOptions are the feeders' options: their logger and the callback
// that counts what was indexed.
func (s *Local) FeederOptions() FeederOptions {
	return FeederOptions{Logger: s.log.With("role", "feeder"), OnResult: s.result}
}

func (s *Local) result(r Result) {
	switch {
	case r.Err != nil:
		s.rejected.Add(1)
	case r.Kind == Remove:
		s.removed.Add(1)
	default:
		s.added.Add(1)
	}
	now := time.Now()
	s.mu.Lock()
	if s.first.IsZero() {
		s.first = now
	}
	s.last = now
	s.mu.Unlock()
}

// Mount adds the search page (/search) and the JSON API (/api/search) to
// an HTTP interface, each wrapped by wrap (authentication; nil: none).
func (s *Local) Mount(mux *http.ServeMux, wrap func(http.Handler) http.Handler) {
	var src index.Searcher
	switch {
	case s.Search != nil:
		src = s.Search
	case s.Index != nil:
		src = s.Index
	default:
		return
	}
	var h http.Handler = index.NewHandler(src, index.HandlerOptions{Clicks: s.Clicks, Logger: s.log})
	if wrap != nil {
		h = wrap(h)
	}
	mux.Handle("GET /search", h)
	mux.Handle("GET /api/search", h)
	if s.Clicks != nil {
		mux.Handle("GET /click", h)
	}
}

// Close closes the index (after the crawl has stopped), then runs OnClose.
func (s *Local) Close() {
	if s.Index != nil && len(s.OnClose) == 0 {
		if err := s.Index.Close(); err != nil {
			s.log.Warn("closing the index", "err", err)
		}
	}
	for _, f := range s.OnClose {
		if err := f(); err != nil {
			s.log.Warn("stopping the feeding chain", "err", err)
		}
	}
}

// WriteSummary writes the indexing line of trawl run's summary; pending
// are the operations still waiting to be fed.
func (s *Local) WriteSummary(w io.Writer, pending int) {
	if s.Remote != nil && s.Search != nil {
		fmt.Fprintf(w, "  %-22s into %s (this run: %d added or updated, %d removed, %d rejected), %d operations waiting\n",
			"fed", s.Searched, s.added.Load(), s.removed.Load(), s.rejected.Load(), pending)
		return
	}
	if s.Remote != nil && s.Index == nil {
		fmt.Fprintf(w, "  %-22s through the content distributors of %s (this run: %d added or updated, %d removed, %d rejected), %d operations waiting\n",
			"fed", s.RemoteName, s.added.Load(), s.removed.Load(), s.rejected.Load(), pending)
		return
	}
	if s.Index == nil {
		return
	}
	n, err := s.Index.Count()
	if err != nil {
		fmt.Fprintf(w, "  %-22s %v\n", "index", err)
		return
	}
	s.mu.Lock()
	span := s.last.Sub(s.first)
	s.mu.Unlock()
	rate := ""
	if added := s.added.Load(); added > 1 && span > 0 {
		rate = fmt.Sprintf(", %.0f documents/s", float64(added)/span.Seconds())
	}
	fmt.Fprintf(w, "  %-22s %d documents in the index (this run: %d added or updated, %d removed, %d rejected%s), %d operations waiting\n",
		"indexed", n, s.added.Load(), s.removed.Load(), s.rejected.Load(), rate, pending)
}
