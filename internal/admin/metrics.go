package admin

import (
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/trawl/trawl/internal/diskspace"
)

// CounterSource returns the crawl engine's cumulative counters by
// collection (nodesched.Counters: fetched, bytes, http_<code>,
// errors_<kind>, queued, active_sites, ...).
type CounterSource func() map[string]map[string]int64

// Metrics are the Prometheus metrics of the HTTP interface (/metrics):
//
//	trawl_pages_fetched_total{collection}          responses received
//	trawl_bytes_received_total{collection}         body bytes received
//	trawl_documents_stored_total{collection}       documents stored
//	trawl_fetch_errors_total{collection,code}      HTTP status >= 400 by code, failed fetches by kind
//	trawl_queue_size{collection}                   URIs queued
//	trawl_in_flight{collection}                    fetches in flight
//	trawl_active_sites{collection}                 sites being crawled
//	trawl_screen_timeouts_total{collection}        URIs rejected because a regexp rule ran out of time
//	trawl_fetch_duration_seconds{collection}       fetch latency histogram
//	trawl_feed_backlog                             feed operations awaiting the indexer (SetFeedBacklog)
//	trawl_disk_paused                              1 while a full disk pauses the writes, else 0 (SetDisk)
//	trawl_disk_free_bytes                          free bytes of the data directory's file system (SetDisk)
//	trawl_disk_low_water_bytes                     the free space under which the writes pause (SetDisk)
//	trawl_disk_pauses_total                        pauses for a full disk (SetDisk)
//
// The counters are read from the engine at scrape time; the latency
// histogram is fed by ObserveFetch. Metrics registers itself on the
// registry it is given; nothing is global.
type Metrics struct {
	src         CounterSource
	latency     *prometheus.HistogramVec
	backlog     func() int
	backlogDesc *prometheus.Desc
	disk        func() diskspace.Status
	diskDescs   [4]*prometheus.Desc // paused, free, low-water mark, pauses

	fetched, bytes, stored, errs, queue, inflight, sites, screenTimeouts *prometheus.Desc
}

// NewMetrics registers the metrics on reg.
func NewMetrics(reg prometheus.Registerer, src CounterSource) (*Metrics, error) {
	coll := []string{"collection"}
	m := &Metrics{
		src: src,
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "trawl_fetch_duration_seconds", Help: "Time to fetch a document (request to end of body).",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, coll),
		fetched:  prometheus.NewDesc("trawl_pages_fetched_total", "Requests that got an HTTP response.", coll, nil),
		bytes:    prometheus.NewDesc("trawl_bytes_received_total", "Body bytes received.", coll, nil),
		stored:   prometheus.NewDesc("trawl_documents_stored_total", "Documents stored (new or changed).", coll, nil),
		errs:     prometheus.NewDesc("trawl_fetch_errors_total", "Failed fetches: HTTP status codes >= 400 by code, other failures by kind.", []string{"collection", "code"}, nil),
		queue:    prometheus.NewDesc("trawl_queue_size", "URIs in the crawl queues.", coll, nil),
		inflight: prometheus.NewDesc("trawl_in_flight", "Fetches in flight.", coll, nil),
		sites:    prometheus.NewDesc("trawl_active_sites", "Crawl sites being crawled.", coll, nil),
		screenTimeouts: prometheus.NewDesc("trawl_screen_timeouts_total",
			"URIs rejected because an include/exclude regexp ran out of time on them (a rule with nested quantifiers?).", coll, nil),
		backlogDesc: prometheus.NewDesc("trawl_feed_backlog", "Content operations waiting in the feed outbox for the indexer's callback.", nil, nil),
		diskDescs: [4]*prometheus.Desc{
			prometheus.NewDesc("trawl_disk_paused", "1 while the free space of the data directory is under the low-water mark and the writes pause, else 0.", nil, nil),
			prometheus.NewDesc("trawl_disk_free_bytes", "Free bytes of the data directory's file system, as last read.", nil, nil),
			prometheus.NewDesc("trawl_disk_low_water_bytes", "Free space under which the writes pause.", nil, nil),
			prometheus.NewDesc("trawl_disk_pauses_total", "Pauses for a full disk.", nil, nil),
		},
	}
	if err := reg.Register(m.latency); err != nil {
		return nil, err
	}
	if err := reg.Register(m); err != nil {
		return nil, err
	}
	return m, nil
}

// SetFeedBacklog makes the metrics report trawl_feed_backlog, the content
// operations not yet acknowledged by the indexer, from f. Call it before
// the metrics are served.
func (m *Metrics) SetFeedBacklog(f func() int) { m.backlog = f }

// SetDisk makes the metrics report the full-disk guard's state, read from
// f at each scrape (trawl_disk_*). Call it before the metrics are served.
func (m *Metrics) SetDisk(f func() diskspace.Status) { m.disk = f }

// ObserveFetch records the duration of one fetch of a collection.
func (m *Metrics) ObserveFetch(collection string, d time.Duration) {
	m.latency.WithLabelValues(collection).Observe(d.Seconds())
}

// Describe implements prometheus.Collector.
func (m *Metrics) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{m.fetched, m.bytes, m.stored, m.errs, m.queue, m.inflight, m.sites, m.screenTimeouts, m.backlogDesc} {
		ch <- d
	}
	for _, d := range m.diskDescs {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (m *Metrics) Collect(ch chan<- prometheus.Metric) {
	if m.backlog != nil {
		ch <- prometheus.MustNewConstMetric(m.backlogDesc, prometheus.GaugeValue, float64(m.backlog()))
	}
	if m.disk != nil {
		st := m.disk()
		paused := 0.0
		if st.Paused {
			paused = 1
		}
		ch <- prometheus.MustNewConstMetric(m.diskDescs[0], prometheus.GaugeValue, paused)
		ch <- prometheus.MustNewConstMetric(m.diskDescs[1], prometheus.GaugeValue, float64(st.Free))
		ch <- prometheus.MustNewConstMetric(m.diskDescs[2], prometheus.GaugeValue, float64(st.Low))
		ch <- prometheus.MustNewConstMetric(m.diskDescs[3], prometheus.CounterValue, float64(st.Pauses))
	}
	all := m.src()
	names := make([]string, 0, len(all))
	for n := range all {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, coll := range names {
		c := all[coll]
		counter := func(d *prometheus.Desc, v int64, labels ...string) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), append([]string{coll}, labels...)...)
		}
		gauge := func(d *prometheus.Desc, v int64) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v), coll)
		}
		counter(m.fetched, c["fetched"])
		counter(m.bytes, c["bytes"])
		counter(m.stored, c["stored"])
		counter(m.screenTimeouts, c["screen_timeouts"])
		gauge(m.queue, c["queued"])
		gauge(m.inflight, c["in_flight"])
		gauge(m.sites, c["active_sites"])
		for k, v := range c {
			switch {
			case strings.HasPrefix(k, "errors_"):
				counter(m.errs, v, k[len("errors_"):])
			case strings.HasPrefix(k, "http_"):
				if code, err := strconv.Atoi(k[len("http_"):]); err == nil && code >= 400 {
					counter(m.errs, v, k[len("http_"):])
				}
			}
		}
	}
}

// MetricsHandler serves the metrics of g in the Prometheus text format.
func MetricsHandler(g prometheus.Gatherer) http.Handler {
	return promhttp.HandlerFor(g, promhttp.HandlerOpts{})
}
