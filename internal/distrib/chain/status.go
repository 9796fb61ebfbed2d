package chain

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/trawl/trawl/internal/admin"
	"github.com/trawl/trawl/internal/distrib/wire"
)

// surveyTimeout bounds one survey of the chain (a status page request, a
// metrics scrape).
const surveyTimeout = 3 * time.Second

// Status surveys the chain for the status page: a distributor or indexer
// that does not answer is shown with its error, a registry that does not
// answer as the chain's error.
func (c *Chain) Status(ctx context.Context) *admin.ChainStatus {
	ctx, cancel := context.WithTimeout(ctx, surveyTimeout)
	defer cancel()
	st := &admin.ChainStatus{NameServer: c.NameServer, InProcess: c.InProcess, MasterID: -1}
	s, err := c.Survey(ctx)
	if err != nil {
		st.Error = err.Error()
	}
	st.Master, st.MasterID = s.Master, s.MasterID
	for _, d := range s.Distributor {
		st.Distributors = append(st.Distributors, admin.ChainDistributor{NodeID: d.NodeID, Addr: d.Addr, Master: d.Master,
			Sessions: d.Sessions, Operations: d.Operations, Error: d.Err})
	}
	for _, ix := range s.Indexers {
		st.Indexers = append(st.Indexers, admin.ChainIndexer{Partition: strings.TrimPrefix(ix.Name, wire.NameIndexPrefix), Addr: ix.Addr, Documents: ix.Documents, Error: ix.Err})
	}
	return st
}

// Collector returns the chain's Prometheus metrics, surveyed at each
// scrape:
//
//	trawl_chain_master{node_id}                            1 for the master distributor
//	trawl_chain_sessions{node_id}                          sessions held by each distributor
//	trawl_chain_operations_in_flight{node_id}              operations sent to indexers, not yet answered
//	trawl_chain_indexer_documents{partition}               documents in each indexer partition
//	trawl_chain_up                                         1 when the registry answered
func (c *Chain) Collector() prometheus.Collector { return collector{c} }

type collector struct{ c *Chain }

var (
	descMaster   = prometheus.NewDesc("trawl_chain_master", "1 for the content distributor that is master (MS-FSCDFT), 0 for a backup.", []string{"node_id"}, nil)
	descSessions = prometheus.NewDesc("trawl_chain_sessions", "Feeding sessions held by a content distributor.", []string{"node_id"}, nil)
	descOps      = prometheus.NewDesc("trawl_chain_operations_in_flight", "Operations a content distributor has sent to indexers and not yet had answered.", []string{"node_id"}, nil)
	descDocs     = prometheus.NewDesc("trawl_chain_indexer_documents", "Documents in an indexer partition.", []string{"partition"}, nil)
	descUp       = prometheus.NewDesc("trawl_chain_up", "1 when the feeding chain's registry answered the survey.", nil, nil)
)

func (collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descMaster, descSessions, descOps, descDocs, descUp} {
		ch <- d
	}
}

func (k collector) Collect(ch chan<- prometheus.Metric) {
	st := k.c.Status(context.Background())
	up := 1.0
	if st.Error != "" {
		up = 0
	}
	ch <- prometheus.MustNewConstMetric(descUp, prometheus.GaugeValue, up)
	for _, d := range st.Distributors {
		id := strconv.FormatInt(d.NodeID, 10)
		master := 0.0
		if d.Master {
			master = 1
		}
		ch <- prometheus.MustNewConstMetric(descMaster, prometheus.GaugeValue, master, id)
		if d.Error == "" {
			ch <- prometheus.MustNewConstMetric(descSessions, prometheus.GaugeValue, float64(d.Sessions), id)
			ch <- prometheus.MustNewConstMetric(descOps, prometheus.GaugeValue, float64(d.Operations), id)
		}
	}
	for _, ix := range st.Indexers {
		if ix.Error == "" {
			ch <- prometheus.MustNewConstMetric(descDocs, prometheus.GaugeValue, float64(ix.Documents), ix.Partition)
		}
	}
}
