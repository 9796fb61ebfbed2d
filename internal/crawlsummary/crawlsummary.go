// Package crawlsummary writes what trawl run prints about a crawl: the
// live progress line and the summary at the end, from the crawl counters
// (the node scheduler's, summed over the collections).
package crawlsummary

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// ProgressLine is the live progress line of trawl run: t are the crawl
// counters summed over the collections.
func ProgressLine(t map[string]int64, elapsed time.Duration) string {
	secs := elapsed.Seconds()
	rate := 0.0
	if secs > 0 {
		rate = float64(t["fetched"]) / secs
	}
	return fmt.Sprintf("%6.1fs  fetched %d  (%.0f pages/s)  queued %d  in flight %d  active sites %d  errors %d",
		secs, t["fetched"], rate, t["queued"], t["in_flight"], t["active_sites"], errorCount(t))
}

func errorCount(t map[string]int64) int64 {
	var n int64
	for k, v := range t {
		if strings.HasPrefix(k, "errors_") {
			n += v
		}
	}
	return n
}

// Write writes trawl run's summary of counters t after elapsed. With a
// synthetic web (farm set), requested are the URLs it served and expect
// those a correct crawl fetches: the summary says how complete the crawl
// was.
func Write(w io.Writer, t map[string]int64, elapsed time.Duration, farm bool, requested, expect []string) {
	rate := 0.0
	if s := elapsed.Seconds(); s > 0 {
		rate = float64(t["fetched"]) / s
	}
	fmt.Fprintf(w, "crawl summary (%.1fs, %.0f pages/s)\n", elapsed.Seconds(), rate)
	rows := []struct{ name, key string }{
		{"requests answered", "fetched"}, {"documents stored", "stored"}, {"modified", "modified"},
		{"unchanged", "unchanged"}, {"duplicates", "duplicates"}, {"redirects", "redirects"},
		{"robots.txt fetched", "robots_fetched"}, {"denied by robots.txt", "robots_denied"},
		{"excluded by rules", "excluded"}, {"deleted", "deleted"}, {"bytes received", "bytes"},
	}
	for _, r := range rows {
		fmt.Fprintf(w, "  %-22s %d\n", r.name, t[r.key])
	}
	var codes, errs []string
	for k, v := range t {
		switch {
		case strings.HasPrefix(k, "http_"):
			codes = append(codes, fmt.Sprintf("%s:%d", strings.TrimPrefix(k, "http_"), v))
		case strings.HasPrefix(k, "errors_"):
			errs = append(errs, fmt.Sprintf("%s:%d", strings.TrimPrefix(k, "errors_"), v))
		}
	}
	sort.Strings(codes)
	sort.Strings(errs)
	if len(codes) > 0 {
		fmt.Fprintf(w, "  %-22s %s\n", "HTTP status", strings.Join(codes, " "))
	}
	if len(errs) > 0 {
		fmt.Fprintf(w, "  %-22s %s\n", "fetch errors", strings.Join(errs, " "))
	}
	if farm {
		got := map[string]bool{}
		for _, u := range requested {
			got[u] = true
		}
		missing := 0
		for _, u := range expect {
			if !got[u] {
				missing++
			}
		}
		fmt.Fprintf(w, "  %-22s %d of %d expected URLs fetched (%d missing), %d distinct URLs requested\n",
			"completeness", len(expect)-missing, len(expect), missing, len(got))
	}
}
