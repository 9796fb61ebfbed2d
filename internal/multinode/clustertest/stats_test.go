package clustertest

import (
	"path/filepath"
	"strconv"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/trawl/trawl/internal/multinode"
	"github.com/trawl/trawl/internal/nodesched"
	"github.com/trawl/trawl/internal/stats"
	"github.com/trawl/trawl/internal/store"
)

// statsEvery is the period of the node schedulers' CMD_UM_STAT in the
// cluster tests (nodeArgs).
const statsEvery = time.Second

// finishStats is finish with the statistics checked too: it lets the node
// schedulers send a last report after the crawl went quiet (a report is
// sent every statsEvery; nothing else tells when the multinode scheduler
// has the last one), stops the cluster and checks the statistics.
func (c *cluster) finishStats(limit time.Duration) {
	c.t.Helper()
	c.waitComplete(limit, 2*time.Second)
	time.Sleep(3 * statsEvery)
	c.stopAll()
	c.checkFetched()
	c.checkStats()
}

// checkStats reads the stopped cluster's statistics and checks that every
// event was counted once, whatever was killed on the way:
//
//   - each node scheduler's saved "processed" counter, per site and for
//     the collection, equals the fetches its crawl store records (the sum
//     of the URI records' fetch counts): a fetch counted twice or lost
//     across a kill -9 breaks the equality;
//   - the multinode scheduler's saved statistics of each node scheduler,
//     per collection and per site, equal that node scheduler's saved
//     counters (its last report is its final state: none lost, none
//     added twice across a restart of either side).
func (c *cluster) checkStats() {
	c.t.Helper()
	rs, err := multinode.OpenRouteStore(filepath.Join(c.dir, "mns", "routes"), nil, nil)
	if err != nil {
		c.t.Fatal(err)
	}
	mnsColl := map[string]map[string]int64{}
	mnsSites := map[string]map[string]map[string]int64{}
	err = rs.LoadStats(func(p multinode.PersistStats) {
		if p.Collection != collection {
			return
		}
		if p.Coll != nil {
			mnsColl[p.Node] = stats.DecodeStat(p.Coll)
		}
		for s, d := range p.Sites {
			if mnsSites[p.Node] == nil {
				mnsSites[p.Node] = map[string]map[string]int64{}
			}
			mnsSites[p.Node][s] = stats.DecodeStat(d)
		}
	})
	rs.Close()
	if err != nil {
		c.t.Fatal(err)
	}
	var total int64
	for i := range c.nodes {
		node := "n" + strconv.Itoa(i)
		st, err := store.Open(filepath.Join(c.dir, node), store.Options{})
		if err != nil {
			c.t.Fatal(err)
		}
		coll, sites, err := nodesched.SavedStats(st, collection)
		if err != nil {
			st.Close()
			c.t.Fatal(err)
		}
		fetches := map[string]int64{}
		err = st.URIs(collection, "", func(r *store.URIRecord) error {
			fetches[r.Site] += int64(r.FetchCount)
			fetches[""] += int64(r.FetchCount)
			return nil
		})
		st.Close()
		if err != nil {
			c.t.Fatal(err)
		}
		counted := map[string]int64{"": coll["processed"]}
		for s, cs := range sites {
			if cs["processed"] > 0 {
				counted[s] = cs["processed"]
			}
		}
		for s, n := range fetches {
			if n == 0 {
				delete(fetches, s)
			}
		}
		if diff := cmp.Diff(fetches, counted); diff != "" {
			c.t.Errorf("%s: fetches in the store (-) and processed counters (+) differ:\n%s", node, diff)
		}
		total += coll["processed"]
		want := map[string]int64(coll)
		got := mnsColl[node]
		delete(got, "active_sites") // gauges: sent, not saved
		delete(got, "pp_checksums")
		if diff := cmp.Diff(want, got); diff != "" {
			c.t.Errorf("%s: the multinode scheduler's statistics (+) differ from the node scheduler's (-):\n%s", node, diff)
		}
		for s, cs := range sites {
			if diff := cmp.Diff(map[string]int64(cs), mnsSites[node][s]); diff != "" {
				c.t.Errorf("%s, site %s: the multinode scheduler's statistics (+) differ from the node scheduler's (-):\n%s", node, s, diff)
			}
		}
	}
	c.t.Logf("statistics: %d fetches counted over %d node schedulers, each once", total, len(c.nodes))
}
