package main

import (
	"context"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/trawl/trawl/internal/admin"
	"github.com/trawl/trawl/internal/stats"
)

// TestAdminStatisticsAddUp crawls a webfarm with `trawl run`, then checks
// that the collection's statistics equal what `trawl store list` shows and
// that the sites' statistics sum to the collection's.
func TestAdminStatisticsAddUp(t *testing.T) {
	c := startCrawler(t, 5, 30)
	cl := admin.NewClient(c.addr, nil)
	ctx := context.Background()

	// Wait until the crawl is over: the farm has seen no request and the
	// statistics have not moved for longer than the fetch timeout (10 s),
	// so that the farm's stalled page, which holds its fetch until the
	// timeout, is counted too.
	var rep *admin.CollectionReport
	last, lastN, since := -1.0, -1, time.Now()
	deadline := time.Now().Add(90 * time.Second)
	for {
		var err error
		rep, err = cl.CollectionGetStatistics2(ctx, "c1")
		if err != nil {
			t.Fatal(err)
		}
		n := len(c.farm.Requests()) + int(rep.Complete.PPSucceeded)*100000
		if rep.Complete.Downloaded != last || n != lastN {
			last, lastN, since = rep.Complete.Downloaded, n, time.Now()
		} else if time.Since(since) > 12*time.Second {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the crawl did not settle")
		}
		time.Sleep(100 * time.Millisecond)
	}
	coll := rep.Complete
	if coll.Downloaded < 100 {
		t.Fatalf("crawl too small: %v documents", coll.Downloaded)
	}

	// The sites' statistics.
	sum := map[string]float64{}
	uriSkip, docSkip := map[string]float64{}, map[string]float64{}
	sites := map[string]bool{}
	for _, h := range c.farm.Hosts() {
		site := h.Name + ":" + strconv.Itoa(c.farm.Port())
		st, err := cl.CollectionGetSiteStatistics(ctx, "c1", site)
		if err != nil {
			t.Logf("site %s: %v", site, err)
			continue
		}
		sites[site] = true
		s := st.Get(site)
		if s == nil {
			t.Fatalf("site statistics of %s hold no series named after it", site)
		}
		r := s.Complete()
		for _, a := range []string{"Downloaded", "Stored", "Modified", "Deleted", "Unchanged", "Processed", "ReadNet"} {
			sum[a] += r.Value(a)
		}
		for k, v := range r.Hist("URISkip") {
			uriSkip[k] += v
		}
		for k, v := range r.Hist("DocSkip") {
			docSkip[k] += v
		}
	}
	want := map[string]float64{"Downloaded": coll.Downloaded, "Stored": coll.Stored, "Modified": coll.Modified,
		"Deleted": coll.Deleted, "Unchanged": coll.Unchanged, "Processed": coll.Processed, "ReadNet": coll.ReadNet}
	if diff := cmp.Diff(want, sum); diff != "" {
		t.Errorf("site statistics do not sum to the collection's (-collection +sum of %d sites):\n%s", len(sites), diff)
	}
	if diff := cmp.Diff(coll.URISkip, uriSkip); diff != "" {
		t.Errorf("URI skip codes of the sites do not sum to the collection's:\n%s", diff)
	}
	if diff := cmp.Diff(coll.DocSkip, docSkip); diff != "" {
		t.Errorf("document skip codes of the sites do not sum to the collection's:\n%s", diff)
	}
	checkFilledStatistics(t, c, cl, coll)
	checkMetrics(t, c, coll)
	c.stop()
	checkFeedingSummary(t, c, coll)

	// What the store holds.
	code, list, errOut := runTrawl(t, "", "store", "list", "--data", filepath.Join(c.data, "node"), "--collection", "c1")
	if code != 0 {
		t.Fatalf("store list: exit %d: %s", code, errOut)
	}
	byStatus := map[string]float64{}
	answered := 0.0
	for _, line := range strings.Split(strings.TrimSpace(list), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		byStatus[f[0]]++
		if n, _ := strconv.Atoi(f[1]); n > 0 {
			answered++
		}
	}
	got := map[string]float64{"Downloaded": coll.Downloaded, "Stored": coll.Stored, "Deleted": coll.Deleted,
		"Modified": coll.Modified, "cs": coll.DocSkip[stats.DocDuplicate]}
	// Duplicates' bodies are not stored (storage/store_dupes defaults to
	// no): they count under DocSkip cs, "downloaded but not stored".
	fromStore := map[string]float64{"Downloaded": answered, "Stored": byStatus["fetched"],
		"Deleted": byStatus["deleted"], "Modified": 0, "cs": byStatus["duplicate"]}
	if diff := cmp.Diff(fromStore, got); diff != "" {
		t.Errorf("statistics differ from the store (-store list +statistics):\n%s\nstatuses: %v", diff, byStatus)
	}
	t.Logf("collection: downloaded %v stored %v deleted %v duplicates %v; store: %v; %d sites", coll.Downloaded, coll.Stored, coll.Deleted, coll.DocSkip["cs"], byStatus, len(sites))
}

// checkFilledStatistics checks the statistics fields fed from the
// engine's less common counters after a crawl of the farm: the global DNS
// statistics (the multinode scheduler's resolver, here a hosts file),
// WriteNet, LastUri and the feeding (PP) counters, and that
// CollectionGetSiteRoutingAddress reports the port trawl run really
// listens on (--listen 127.0.0.1:0).
func checkFilledStatistics(t *testing.T, c *crawlerUnderTest, cl *admin.Client, coll *stats.CollectionFlat) {
	t.Helper()
	ctx := context.Background()
	hosts := c.farm.Hosts()

	g, err := cl.GetGlobalStatistics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	dns := g.Complete
	if dns.DNSRequests < float64(len(hosts)) || dns.DNSResponses > dns.DNSRequests ||
		dns.DNSResponse["0"] < float64(len(hosts)) || dns.DNSResponse["0"] > dns.DNSResponses || dns.DNSRateLimit < 1 {
		t.Errorf("global DNS statistics after resolving %d farm hosts: %+v", len(hosts), *dns)
	}

	// WriteNet: every request written counts; a request is at least a
	// request line and a Host header, and far less than a kilobyte here.
	if coll.WriteNet < 30*coll.Processed || coll.WriteNet > 2000*coll.Processed {
		t.Errorf("WriteNet %v bytes for %v requests", coll.WriteNet, coll.Processed)
	}

	// LastUri: one of the URIs the farm served, for the collection and
	// for each site.
	requested := map[string]bool{}
	for _, r := range c.farm.Requests() {
		requested[r.URL] = true
	}
	st, err := cl.CollectionGetStatistics(ctx, "c1")
	if err != nil {
		t.Fatal(err)
	}
	cur := st.Get("c1").Complete()
	if u := cur.String("LastUri"); !requested[u] {
		t.Errorf("collection LastUri %q is not a URI the farm served", u)
	}
	// The crawl ran out of work during the settle window: CrawlEnded is
	// set, after CrawlStarted; a single node scheduler's SumActiveSites
	// and SumPPChecksums are 0 (2.2.4.10).
	if e, s := cur.Value("CrawlEnded"), cur.Value("CrawlStarted"); e <= s || s == 0 {
		t.Errorf("CrawlStarted %v, CrawlEnded %v after the crawl ended", s, e)
	}
	if cur.Value("SumActiveSites") != 0 || cur.Value("SumPPChecksums") != 0 {
		t.Errorf("SumActiveSites %v, SumPPChecksums %v on a single node scheduler", cur.Value("SumActiveSites"), cur.Value("SumPPChecksums"))
	}
	if got, want := cur.Value("WriteNet"), coll.WriteNet; got != want {
		t.Errorf("WriteNet %v in CollectionGetStatistics, %v in CollectionGetStatistics2", got, want)
	}
	site := hosts[0].Name + ":" + strconv.Itoa(c.farm.Port())
	ss, err := cl.CollectionGetSiteStatistics(ctx, "c1", site)
	if err != nil {
		t.Fatal(err)
	}
	sr := ss.Get(site).Complete()
	if u := sr.String("LastUri"); !requested[u] || !strings.Contains(u, "://"+site+"/") {
		t.Errorf("LastUri of site %s is %q", site, u)
	}
	if sr.Value("WriteNet") <= 0 || sr.Value("WriteNet") > coll.WriteNet {
		t.Errorf("WriteNet of site %s: %v (collection %v)", site, sr.Value("WriteNet"), coll.WriteNet)
	}

	// Feeding: every document operation the crawl made was answered by
	// the index, none was refused. Besides the added and modified
	// documents, an owner is fed again when its list of duplicates or
	// redirects changes (pp/ds_meta_info), at most once per URI listed:
	// those are among the downloads that were not stored.
	relisted := coll.PPSucceeded - (coll.PPAdded + coll.PPModified)
	if coll.PPAdded < coll.Stored/2 || relisted < 0 || relisted > coll.Downloaded-coll.Stored ||
		coll.PPFed != coll.PPSucceeded+coll.PPFailed || coll.PPFailed != 0 {
		t.Errorf("feeding statistics: added %v modified %v fed %v succeeded %v failed %v deleted %v (stored %v)",
			coll.PPAdded, coll.PPModified, coll.PPFed, coll.PPSucceeded, coll.PPFailed, coll.PPDeleted, coll.Stored)
	}

	// The routing address is the real HTTP interface.
	hp, err := cl.CollectionGetSiteRoutingAddress(ctx, "c1", site)
	if err != nil {
		t.Fatal(err)
	}
	if hp.String() != c.addr {
		t.Errorf("CollectionGetSiteRoutingAddress = %s, trawl run listens on %s", hp, c.addr)
	}
}

var indexedLine = regexp.MustCompile(`indexed +(\d+) documents in the index \(this run: (\d+) added or updated, (\d+) removed, (\d+) rejected`)

// checkFeedingSummary compares the feeding statistics with what trawl
// run's summary says the index holds and took.
func checkFeedingSummary(t *testing.T, c *crawlerUnderTest, coll *stats.CollectionFlat) {
	t.Helper()
	m := indexedLine.FindStringSubmatch(c.stdout.String())
	if m == nil {
		t.Fatalf("no indexing line in the summary:\n%s", c.stdout.String())
	}
	n := func(i int) float64 { v, _ := strconv.Atoi(m[i]); return float64(v) }
	got := map[string]float64{"added or updated": coll.PPSucceeded, "removed": coll.PPDeleted, "rejected": coll.PPFailed}
	want := map[string]float64{"added or updated": n(2), "removed": n(3), "rejected": n(4)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("feeding statistics differ from the index's answers (-index +statistics):\n%s", diff)
	}
	// Every document in the index was added and not removed. (Not
	// equal: an add decided twice for one URI, which the index keeps
	// once, was seen in one run of many.)
	if inIndex := n(1); inIndex == 0 || inIndex > coll.PPAdded-coll.PPDeleted {
		t.Errorf("the index holds %v documents; PPAdded %v - PPDeleted %v", inIndex, coll.PPAdded, coll.PPDeleted)
	}
}

// checkMetrics reads /metrics after the crawl and checks each metric the
// issue names against the statistics of the same crawl: pages fetched,
// bytes, errors by code, queue size, in flight and active sites (the
// crawl is over: 0), the fetch latency histogram (one observation per
// request) and the feed backlog (all fed: 0).
func checkMetrics(t *testing.T, c *crawlerUnderTest, coll *stats.CollectionFlat) {
	t.Helper()
	resp, err := http.Get("http://" + c.addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var p expfmt.TextParser
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("/metrics is not Prometheus text: %v", err)
	}
	value := func(name string, labels map[string]string) (float64, bool) {
		f := fams[name]
		if f == nil {
			return 0, false
		}
	next:
		for _, m := range f.Metric {
			for k, v := range labels {
				found := false
				for _, l := range m.Label {
					found = found || (l.GetName() == k && l.GetValue() == v)
				}
				if !found {
					continue next
				}
			}
			switch {
			case m.Counter != nil:
				return m.Counter.GetValue(), true
			case m.Gauge != nil:
				return m.Gauge.GetValue(), true
			case m.Histogram != nil:
				return float64(m.Histogram.GetSampleCount()), true
			}
		}
		return 0, false
	}
	c1 := map[string]string{"collection": "c1"}
	want := map[string]float64{
		"trawl_pages_fetched_total":    coll.Downloaded,
		"trawl_bytes_received_total":   coll.ReadNet,
		"trawl_documents_stored_total": coll.Stored,
		"trawl_queue_size":             0,
		"trawl_in_flight":              0,
		"trawl_active_sites":           0,
		"trawl_fetch_duration_seconds": coll.Processed,
		"trawl_feed_backlog":           0,
	}
	got := map[string]float64{}
	for name := range want {
		labels := c1
		if name == "trawl_feed_backlog" {
			labels = nil
		}
		v, ok := value(name, labels)
		if !ok {
			t.Errorf("metric %s missing", name)
		}
		got[name] = v
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("metrics differ from the statistics (-statistics +metrics):\n%s", diff)
	}
	if h := fams["trawl_fetch_duration_seconds"]; h == nil || h.GetType() != dto.MetricType_HISTOGRAM || len(h.Metric[0].Histogram.Bucket) < 5 {
		t.Errorf("trawl_fetch_duration_seconds is not a histogram with buckets: %v", h)
	}
	// Errors by code: every HTTP status >= 400 of the statistics.
	codes := 0
	for code, n := range coll.HTTPResponse {
		if code < "400" || len(code) != 3 {
			continue
		}
		codes++
		if v, _ := value("trawl_fetch_errors_total", map[string]string{"collection": "c1", "code": code}); v != n {
			t.Errorf("trawl_fetch_errors_total{code=%q} = %v, HTTPResponse says %v", code, v, n)
		}
	}
	if codes == 0 {
		t.Errorf("the farm's crawl gave no HTTP error to check: %v", coll.HTTPResponse)
	}
}
