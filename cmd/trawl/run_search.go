package main

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/trawl/trawl/internal/admin"
	"github.com/trawl/trawl/internal/feed"
	"github.com/trawl/trawl/internal/index"
	"github.com/trawl/trawl/internal/nodesched"
)

// indexChain is trawl run's feeding chain and search: the embedded index
// under DATA/index (where `trawl search --data DATA` looks once trawl run
// has stopped), the node scheduler's feeders with an in-process
// destination, and the search page and JSON API on the HTTP interface.
type indexChain struct {
	idx *index.Index
	err error // opening the index failed
	log *slog.Logger

	// Indexing counters, from the feeders' callbacks.
	added, removed, rejected atomic.Int64
	mu                       sync.Mutex
	first, last              time.Time // first and last document acknowledged
}

// newIndexChain opens (or creates) the index of data directory o.data
// (none with --index=false). An error is kept in err for runRun to report.
func newIndexChain(o *runOptions, log *slog.Logger) *indexChain {
	s := &indexChain{log: log}
	if !o.index {
		return s // --index=false: crawl only, nothing fed
	}
	s.idx, s.err = index.Open(filepath.Join(o.data, "index"), index.Options{Create: true})
	return s
}

// feed is the node scheduler's feeding configuration (nil without index).
func (s *indexChain) feed() *nodesched.FeedConfig {
	if s.idx == nil {
		return nil
	}
	return &nodesched.FeedConfig{
		Dial: feed.IndexDialer(s.idx),
		Feeder: feed.FeederOptions{
			Logger:   s.log.With("role", "feeder"),
			OnResult: s.result,
		},
	}
}

func (s *indexChain) result(r feed.Result) {
	switch {
	case r.Err != nil:
		s.rejected.Add(1)
	case r.Kind == feed.Remove:
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

// mount adds the search page (/search) and the JSON API (/api/search) to
// the HTTP interface, behind auth (the admin API's with --search-auth, or
// none).
func (s *indexChain) mount(mux *http.ServeMux, auth admin.Auth) {
	if s.idx == nil {
		return
	}
	h := auth.Wrap(index.Handler(s.idx))
	mux.Handle("GET /search", h)
	mux.Handle("GET /api/search", h)
}

// close closes the index (after the engine has stopped).
func (s *indexChain) close() {
	if s.idx != nil {
		if err := s.idx.Close(); err != nil {
			s.log.Warn("closing the index", "err", err)
		}
	}
}

// printSummary adds the indexing lines to trawl run's summary.
func (s *indexChain) printSummary(w io.Writer, e *engine) {
	if s.idx == nil {
		return
	}
	n, err := s.idx.Count()
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
		"indexed", n, s.added.Load(), s.removed.Load(), s.rejected.Load(), rate, e.ns.FeedPending())
}
