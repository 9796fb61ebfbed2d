package admin

import (
	"context"
	"encoding/json"
	"html/template"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/trawl/trawl/internal/diskspace"
)

// StatusReport is what the status page shows: the process, its
// collections with their sites, the crawl rates over time and the recent
// errors. /status.json serves it as JSON.
type StatusReport struct {
	Role        string             `json:"role"`
	Time        float64            `json:"time"`    // unix seconds
	Started     float64            `json:"started"` // unix seconds
	Collections []CollectionStatus `json:"collections"`
	Rates       []RatePoint        `json:"rates"`
	Errors      []ErrorEvent       `json:"errors"`
	// Analyses are the link analyses the process runs after refresh
	// cycles (trawl run's web analyzer), when it runs any.
	Analyses []AnalysisStatus `json:"analyses,omitempty"`
	// Chain is the feeding chain (MS-FSCDFT) of a process that feeds one
	// (trawl run), nil otherwise.
	Chain *ChainStatus `json:"chain,omitempty"`
	// Disk is the full-disk guard of the data directory (nil: none).
	// While Disk.Paused, the page says "disk full: paused".
	Disk *diskspace.Status `json:"disk,omitempty"`
}

// ChainStatus is the feeding chain of the status page: its name server,
// which content distributor is master, each distributor's sessions and
// operations in flight, each indexer partition's documents.
type ChainStatus struct {
	NameServer   string             `json:"nameserver"`
	InProcess    bool               `json:"in_process"`
	Master       string             `json:"master"`
	MasterID     int64              `json:"master_id"` // -1: no master
	Distributors []ChainDistributor `json:"distributors"`
	Indexers     []ChainIndexer     `json:"indexers"`
	Error        string             `json:"error,omitempty"`
}

// ChainDistributor is one content distributor of the chain.
type ChainDistributor struct {
	NodeID     int64  `json:"node_id"`
	Addr       string `json:"addr"`
	Master     bool   `json:"master"`
	Sessions   int    `json:"sessions"`
	Operations int64  `json:"operations_in_flight"`
	Error      string `json:"error,omitempty"`
}

// ChainIndexer is one indexer partition of the chain.
type ChainIndexer struct {
	Partition string `json:"partition"`
	Addr      string `json:"addr"`
	Documents int64  `json:"documents"`
	Error     string `json:"error,omitempty"`
}

// AnalysisStatus is a link analysis of the status page: its last run.
type AnalysisStatus struct {
	Name    string  `json:"name"`
	Runs    int     `json:"runs"`    // runs that ended
	Failed  int     `json:"failed"`  // runs that failed
	Running bool    `json:"running"` // a run goes on (Started is its start)
	Started float64 `json:"started"` // unix seconds; 0 before any run
	Seconds float64 `json:"seconds"` // the last run's duration
	// Incremental, Ranked, Links and Changed are the last successful
	// run's: incremental or full, URLs ranked, links analysed, links
	// dumped for it.
	Incremental bool   `json:"incremental"`
	RankKept    bool   `json:"rank_kept"` // the link graph had not changed: the static rank stood
	Ranked      int    `json:"ranked"`
	Links       int    `json:"links"`
	Changed     int    `json:"changed_links"`
	Error       string `json:"error"` // the last run's error
	// RanksQueued is the number of partial updates (rank and anchor text)
	// the last successful run queued for the index; RanksApplied those the
	// index has applied since, RanksPending those still on their way.
	RanksQueued  int   `json:"ranks_queued"`
	RanksApplied int64 `json:"ranks_applied"`
	RanksPending int   `json:"ranks_pending"`
	// ClickRuns counts the click builds run after the analysis,
	// ClickQueries is the last one's (query, URL) relevance records,
	// ClickError its error.
	ClickRuns    int    `json:"click_runs"`
	ClickQueries int    `json:"click_relevance"`
	ClickError   string `json:"click_error"`
}

// CollectionStatus is one collection of the status page.
type CollectionStatus struct {
	Name            string `json:"name"`
	Status          string `json:"status"` // crawling, suspended, compacting, zombie
	CrawlMode       string `json:"crawl_mode"`
	Feeding         bool   `json:"feeding"`
	RefreshOnly     bool   `json:"refresh_only"`
	Cycle           int64  `json:"cycle"`
	ProgressPercent int64  `json:"progress_percent"`
	ProgressText    string `json:"progress_text"`
	Idle            bool   `json:"idle"`
	Downloaded      int64  `json:"downloaded"`
	Stored          int64  `json:"stored"`
	Modified        int64  `json:"modified"`
	Deleted         int64  `json:"deleted"`
	Errors          int64  `json:"errors"`
	Bytes           int64  `json:"bytes"`
	Queued          int64  `json:"queued"`
	InFlight        int64  `json:"in_flight"`
	ActiveSites     int64  `json:"active_sites"`
	// ScreenTimeouts counts the URIs rejected because a regexp rule ran
	// out of time on them.
	ScreenTimeouts int64        `json:"screen_timeouts"`
	Sites          []SiteStatus `json:"sites"`
}

// SiteStatus is one crawl site of a collection.
type SiteStatus struct {
	Site       string `json:"site"`
	Downloaded int64  `json:"downloaded"`
	Stored     int64  `json:"stored"`
	Modified   int64  `json:"modified"`
	Deleted    int64  `json:"deleted"`
	Errors     int64  `json:"errors"`
	Bytes      int64  `json:"bytes"`
}

// RatePoint is the crawl rate over one sampling interval ending at T.
type RatePoint struct {
	T      float64 `json:"t"`
	Pages  float64 `json:"pages"`  // responses per second
	Bytes  float64 `json:"bytes"`  // bytes per second
	Errors float64 `json:"errors"` // failed fetches and status >= 400 per second
}

// ErrorEvent is a failed fetch.
type ErrorEvent struct {
	T          float64 `json:"t"`
	Collection string  `json:"collection"`
	URI        string  `json:"uri"`
	Status     int     `json:"status"`
	Error      string  `json:"error"`
}

// RateHistory keeps the last samples of cumulative totals and turns them
// into rates. It is safe for concurrent use.
type RateHistory struct {
	mu      sync.Mutex
	max     int
	samples []rateSample
}

type rateSample struct {
	t                    float64
	pages, bytes, errors int64
}

// NewRateHistory keeps up to n samples (at least 2).
func NewRateHistory(n int) *RateHistory { return &RateHistory{max: max(n, 2)} }

// Sample records the cumulative totals at t (unix seconds).
func (h *RateHistory) Sample(t float64, pages, bytes, errors int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.samples) == h.max {
		copy(h.samples, h.samples[1:])
		h.samples = h.samples[:h.max-1]
	}
	h.samples = append(h.samples, rateSample{t, pages, bytes, errors})
}

// Rates returns the rate of each interval between samples, oldest first.
// A total that went down (a restart) counts as a rate of 0.
func (h *RateHistory) Rates() []RatePoint {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]RatePoint, 0, len(h.samples))
	for i := 1; i < len(h.samples); i++ {
		a, b := h.samples[i-1], h.samples[i]
		dt := b.t - a.t
		if dt <= 0 {
			continue
		}
		rate := func(x, y int64) float64 { return float64(max(y-x, 0)) / dt }
		out = append(out, RatePoint{T: b.t, Pages: rate(a.pages, b.pages), Bytes: rate(a.bytes, b.bytes), Errors: rate(a.errors, b.errors)})
	}
	return out
}

// ErrorLog keeps the most recent errors. It is safe for concurrent use.
type ErrorLog struct {
	mu   sync.Mutex
	max  int
	evs  []ErrorEvent
	next int
}

// NewErrorLog keeps the last n errors.
func NewErrorLog(n int) *ErrorLog { return &ErrorLog{max: max(n, 1)} }

// Add records an error; a URI or message longer than 512 bytes is cut.
func (l *ErrorLog) Add(ev ErrorEvent) {
	ev.URI, ev.Error = cut(ev.URI, 512), cut(ev.Error, 512)
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.evs) < l.max {
		l.evs = append(l.evs, ev)
		return
	}
	l.evs[l.next] = ev
	l.next = (l.next + 1) % l.max
}

// Recent returns the errors, newest first.
func (l *ErrorLog) Recent() []ErrorEvent {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]ErrorEvent, 0, len(l.evs))
	for i := 0; i < len(l.evs); i++ {
		j := (l.next - 1 - i + 2*len(l.evs)) % len(l.evs)
		out = append(out, l.evs[j])
	}
	return out
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// StatusHandler serves the status page at /status (and /), and its data
// at /status.json. The page is one HTML document with its own CSS and
// script (no external resources): it shows the collections with their
// state and progress, a table of sites per collection, charts of the
// rates over time (inline SVG) and the recent errors, and refreshes
// itself every two seconds.
func StatusHandler(report func(ctx context.Context) (*StatusReport, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "405 method not allowed", http.StatusMethodNotAllowed)
			return
		}
		rep, err := report(r.Context())
		if err != nil {
			http.Error(w, "status: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		if strings.HasSuffix(r.URL.Path, ".json") {
			w.Header().Set("Content-Type", "application/json")
			enc := json.NewEncoder(w)
			enc.SetIndent("", " ")
			_ = enc.Encode(rep)
			return
		}
		data, err := json.Marshal(rep)
		if err != nil {
			http.Error(w, "status: "+err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src data:")
		_ = statusPage.Execute(w, struct {
			Role string
			Data template.JS
			Time string
		}{rep.Role, template.JS(data), time.Unix(int64(rep.Time), 0).UTC().Format(time.RFC3339)})
	})
}
