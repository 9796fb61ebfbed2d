package clustertest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/trawl/trawl/internal/distrib"
	"github.com/trawl/trawl/internal/distrib/indexer"
	"github.com/trawl/trawl/internal/distrib/wire"
	"github.com/trawl/trawl/internal/index"
	"github.com/trawl/trawl/internal/stats"
	"github.com/trawl/trawl/internal/store"
	"github.com/trawl/trawl/internal/testenv"
)

// The feeding chain of a cluster (clusterOpts.chain): a name server, two
// content distributors (one becomes master, the other its backup) and two
// indexer partitions, each a `trawl` process on loopback with short timers,
// fed by the node schedulers (`trawl node --nameserver`). Every process
// comes back on the same address and data directory after a restart.
type feedChain struct {
	nsAddr string
	ns     *proc
	cds    []*proc
	cdBase []int
	ixs    []*proc
	ixBase []int
	// nodeHTTP is each node scheduler's HTTP interface (its /metrics
	// gives the feed backlog, its /RPC2 the statistics), mnsHTTP the
	// multinode scheduler's.
	nodeHTTP []string
	mnsHTTP  string
}

// chainPing is the distributors' master check and ping period, the name
// server's ping period and the indexers' rebind period.
const chainPing = "300ms"

const chainPartitions = 2

// waitDial waits until addr accepts a TCP connection.
func (c *cluster) waitDial(what, addr string, limit time.Duration) {
	c.t.Helper()
	deadline := time.Now().Add(limit)
	for {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			conn.Close()
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("%s: %s not listening after %v: %v", what, addr, limit, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// startChain starts the name server, the indexers and the distributors
// (before the node schedulers, which are given the name server).
func (c *cluster) startChain() {
	c.t.Helper()
	ch := &feedChain{nsAddr: freeAddr(c.t)}
	c.chain = ch
	ch.ns = startProc(c.t, "nameserver", append([]string{"nameserver", "--listen", ch.nsAddr, "--data", filepath.Join(c.dir, "ns"),
		"--ping-interval", chainPing}, c.tlsArgs...)...)
	c.waitDial("nameserver", ch.nsAddr, 30*time.Second)
	for i := 0; i < chainPartitions; i++ {
		base := testenv.FreeBasePort(c.t, indexer.PortOffset)
		ch.ixBase = append(ch.ixBase, base)
		p := startProc(c.t, "indexer ix"+strconv.Itoa(i), append([]string{"indexer", "--nameserver", ch.nsAddr,
			"--partition", strconv.Itoa(i), "--partitions", strconv.Itoa(chainPartitions), "--base-port", strconv.Itoa(base),
			"--host", "127.0.0.1", "--listen", "127.0.0.1", "--data", filepath.Join(c.dir, "ix"+strconv.Itoa(i)),
			"--rebind", chainPing}, c.tlsArgs...)...)
		ch.ixs = append(ch.ixs, p)
		c.waitDial(p.name, ch.indexerAddr(i), 30*time.Second)
	}
	for i := 0; i < 2; i++ {
		base := testenv.FreeBasePort(c.t, wire.PortInternal, wire.PortExternal)
		ch.cdBase = append(ch.cdBase, base)
		p := startProc(c.t, "distributor cd"+strconv.Itoa(i+1), append([]string{"distributor", "--id", strconv.Itoa(i + 1),
			"--nameserver", ch.nsAddr, "--base-port", strconv.Itoa(base), "--host", "127.0.0.1", "--listen", "127.0.0.1",
			"--data", filepath.Join(c.dir, "cd"+strconv.Itoa(i+1)), "--ping-master", chainPing, "--check-master", chainPing}, c.tlsArgs...)...)
		ch.cds = append(ch.cds, p)
		c.waitDial(p.name, "127.0.0.1:"+strconv.Itoa(base+wire.PortInternal), 30*time.Second)
	}
	for i := 0; i < c.o.nodes; i++ {
		ch.nodeHTTP = append(ch.nodeHTTP, freeAddr(c.t))
	}
	ch.mnsHTTP = freeAddr(c.t)
}

// chainMNSArgs are the multinode scheduler's flags for the chain: its
// HTTP interface, for the statistics.
func (c *cluster) chainMNSArgs() []string {
	if c.chain == nil {
		return nil
	}
	return []string{"--admin-listen", c.chain.mnsHTTP}
}

func (ch *feedChain) indexerAddr(i int) string {
	return "127.0.0.1:" + strconv.Itoa(ch.ixBase[i]+indexer.PortOffset)
}

// chainNodeArgs are the node scheduler i's flags for the chain.
func (c *cluster) chainNodeArgs(i int) []string {
	if c.chain == nil {
		return nil
	}
	return []string{"--nameserver", c.chain.nsAddr, "--listen", c.chain.nodeHTTP[i]}
}

var feedBacklog = regexp.MustCompile(`(?m)^trawl_feed_backlog (\d+)`)

// feedBacklog returns node scheduler i's content operations waiting for
// their callback (-1 when its /metrics does not answer).
func (c *cluster) feedBacklog(i int) int {
	cl := http.Client{Timeout: 3 * time.Second}
	resp, err := cl.Get("http://" + c.chain.nodeHTTP[i] + "/metrics")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		return -1
	}
	m := feedBacklog.FindSubmatch(b)
	if m == nil {
		return -1
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}

// waitFed waits until every node scheduler's feed backlog is empty (every
// operation acknowledged by an indexer) and stays so for quiet.
func (c *cluster) waitFed(limit, quiet time.Duration) {
	c.t.Helper()
	deadline := time.Now().Add(limit)
	var since time.Time
	var last []int
	for time.Now().Before(deadline) {
		last = last[:0]
		zero := true
		for i := range c.nodes {
			n := c.feedBacklog(i)
			last = append(last, n)
			zero = zero && n == 0
		}
		switch {
		case !zero:
			since = time.Time{}
		case since.IsZero():
			since = time.Now()
		case time.Since(since) >= quiet:
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	for _, p := range c.chainProcs() {
		p.dumpTail(30)
	}
	c.t.Fatalf("the node schedulers' feed backlogs are not empty after %v: %v", limit, last)
}

// chainProcs lists the chain's processes.
func (c *cluster) chainProcs() []*proc {
	if c.chain == nil {
		return nil
	}
	return append(append([]*proc{c.chain.ns}, c.chain.cds...), c.chain.ixs...)
}

// stopChain stops the chain's processes with SIGTERM (after the node
// schedulers).
func (c *cluster) stopChain() {
	for _, p := range c.chainProcs() {
		p.stop()
	}
}

// indexable returns the URIs of the (stopped) node schedulers' stores that
// the indexers must hold: the fetched (or 304) documents that are not
// duplicates (the farm of the cluster tests has no noindex pages), the rule
// of internal/nodesched/feeding.go.
func (c *cluster) indexable() (out []string, dups int) {
	c.t.Helper()
	for i := range c.nodes {
		st, err := store.Open(filepath.Join(c.dir, "n"+strconv.Itoa(i)), store.Options{})
		if err != nil {
			c.t.Fatalf("node n%d store: %v", i, err)
		}
		err = st.URIs(collection, "", func(r *store.URIRecord) error {
			switch r.Status {
			case store.StatusFetched, store.StatusNotModified:
				out = append(out, r.URI)
			case store.StatusDuplicate:
				dups++
			}
			return nil
		})
		st.Close()
		if err != nil {
			c.t.Fatal(err)
		}
	}
	sort.Strings(out)
	return out, dups
}

// checkIndex: the union of the (stopped) indexers' documents equals the
// node schedulers' indexable documents, each in one partition only (the
// one of its URI hash), nothing else. live is the node schedulers'
// statistics (checkLiveStats): the documents stored are the stores'
// documents (fetched and duplicates), and the documents added less those
// removed are the index.
func (c *cluster) checkIndex(live *stats.CollectionFlat) {
	c.t.Helper()
	want, dups := c.indexable()
	if len(want) == 0 {
		c.t.Fatal("no indexable document in the node schedulers' stores")
	}
	where := map[string]int{}
	var total uint64
	bad := 0
	for i := range c.chain.ixs {
		ix, err := index.Open(filepath.Join(c.dir, "ix"+strconv.Itoa(i), "indexer", "index"), index.Options{ReadOnly: true})
		if err != nil {
			c.t.Fatalf("indexer ix%d: %v", i, err)
		}
		n, err := ix.Count()
		if err != nil {
			c.t.Fatal(err)
		}
		total += n
		for _, u := range want {
			got, err := ix.Lookup(context.Background(), collection, u)
			if err != nil {
				c.t.Fatal(err)
			}
			if got.Found {
				where[u]++
				if p := distrib.Partition(u, chainPartitions); p != i {
					if bad++; bad <= 10 {
						c.t.Errorf("%s in partition %d, its hash says %d", u, i, p)
					}
				}
			}
		}
		if err := ix.Close(); err != nil {
			c.t.Fatal(err)
		}
	}
	var missing, twice []string
	for _, u := range want {
		switch where[u] {
		case 0:
			missing = append(missing, u)
		case 1:
		default:
			twice = append(twice, u)
		}
	}
	if len(missing)+len(twice) > 0 {
		c.t.Errorf("indexers vs the stores' %d indexable documents: %d missing %v, %d in two partitions %v",
			len(want), len(missing), head(missing, 20), len(twice), head(twice, 20))
	}
	if total != uint64(len(want)) {
		c.t.Errorf("the indexers hold %d documents together, the stores %d indexable ones (%d extra)", total, len(want), int(total)-len(want))
	} else {
		c.t.Logf("index equals the stores: %d documents over %d partitions, each once", total, chainPartitions)
	}
	if int(live.Stored) != len(want)+dups {
		c.t.Errorf("the node schedulers counted %v documents stored, their stores hold %d (%d indexable, %d duplicates)", live.Stored, len(want)+dups, len(want), dups)
	}
	if int(live.PPAdded-live.PPDeleted) != len(want) {
		c.t.Errorf("the node schedulers counted %v documents added to the index and %v removed, the stores have %d indexable ones", live.PPAdded, live.PPDeleted, len(want))
	}
}

// chainVictims are the chain's processes as chaos victims.
func (c *cluster) chainVictims() []victim {
	if c.chain == nil {
		return nil
	}
	ch := c.chain
	return []victim{
		{"nameserver", func() *proc { return ch.ns }},
		{"distributor cd1", func() *proc { return ch.cds[0] }},
		{"distributor cd2", func() *proc { return ch.cds[1] }},
		{"indexer ix0", func() *proc { return ch.ixs[0] }},
		{"indexer ix1", func() *proc { return ch.ixs[1] }},
	}
}

// victim is a process TestChaos may kill (p nil: sever n0's link to the
// multinode scheduler).
type victim struct {
	name string
	p    func() *proc
}

// liveStats returns a collection's flattened statistics of all time
// (CollectionGetStatistics2's "complete" cycle) from the HTTP interface at
// addr, through `trawl admin stats --json`.
func (c *cluster) liveStats(addr string) *stats.CollectionFlat {
	c.t.Helper()
	cmd := exec.Command(trawl.path, "admin", "-C", addr, "stats", "--json", collection)
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		c.t.Fatalf("trawl admin -C %s stats: %v\n%s", addr, err, stderr)
	}
	var rep map[string]*stats.CollectionFlat
	if err := json.Unmarshal(out, &rep); err != nil {
		c.t.Fatalf("trawl admin -C %s stats: %v\n%s", addr, err, out)
	}
	if rep["complete"] == nil {
		c.t.Fatalf("trawl admin -C %s stats: no complete cycle\n%s", addr, out)
	}
	return rep["complete"]
}

// checkLiveStats compares, over the running processes' XML-RPC
// (MS-FSCADM CollectionGetStatistics2), the multinode scheduler's
// statistics of the collection with the sum of the node schedulers': every
// counter must add up (see TestChaos for why they must hold across kills).
// It returns the sum over the node schedulers.
func (c *cluster) checkLiveStats() *stats.CollectionFlat {
	c.t.Helper()
	mns := c.liveStats(c.chain.mnsHTTP)
	var sum stats.CollectionFlat
	for i := range c.nodes {
		n := c.liveStats(c.chain.nodeHTTP[i])
		for _, f := range summedStats {
			*f.p(&sum) += *f.p(n)
		}
	}
	var diffs []string
	for _, f := range summedStats {
		if *f.p(mns) != *f.p(&sum) {
			diffs = append(diffs, fmt.Sprintf("%s: multinode %v, node schedulers %v", f.name, *f.p(mns), *f.p(&sum)))
		}
	}
	if len(diffs) > 0 {
		c.t.Errorf("the multinode scheduler's statistics differ from the sum of the node schedulers':\n%s", strings.Join(diffs, "\n"))
	}
	c.t.Logf("statistics over XML-RPC: processed %v, downloaded %v, stored %v, modified %v, deleted %v, unchanged %v; fed %v, succeeded %v, failed %v, deleted %v, added %v",
		sum.Processed, sum.Downloaded, sum.Stored, sum.Modified, sum.Deleted, sum.Unchanged, sum.PPFed, sum.PPSucceeded, sum.PPFailed, sum.PPDeleted, sum.PPAdded)
	return &sum
}

// summedStats are the counters of CollectionFlat that add up over node
// schedulers.
var summedStats = []struct {
	name string
	p    func(*stats.CollectionFlat) *float64
}{
	{"Processed", func(f *stats.CollectionFlat) *float64 { return &f.Processed }},
	{"Downloaded", func(f *stats.CollectionFlat) *float64 { return &f.Downloaded }},
	{"Modified", func(f *stats.CollectionFlat) *float64 { return &f.Modified }},
	{"Stored", func(f *stats.CollectionFlat) *float64 { return &f.Stored }},
	{"Deleted", func(f *stats.CollectionFlat) *float64 { return &f.Deleted }},
	{"Unchanged", func(f *stats.CollectionFlat) *float64 { return &f.Unchanged }},
	{"DocSize", func(f *stats.CollectionFlat) *float64 { return &f.DocSize }},
	{"Retries", func(f *stats.CollectionFlat) *float64 { return &f.Retries }},
	{"PPFed", func(f *stats.CollectionFlat) *float64 { return &f.PPFed }},
	{"PPSucceeded", func(f *stats.CollectionFlat) *float64 { return &f.PPSucceeded }},
	{"PPFailed", func(f *stats.CollectionFlat) *float64 { return &f.PPFailed }},
	{"PPDeleted", func(f *stats.CollectionFlat) *float64 { return &f.PPDeleted }},
	{"PPAdded", func(f *stats.CollectionFlat) *float64 { return &f.PPAdded }},
}
