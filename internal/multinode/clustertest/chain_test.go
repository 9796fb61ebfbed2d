package clustertest

import (
	"context"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"time"

	"github.com/trawl/trawl/internal/distrib"
	"github.com/trawl/trawl/internal/distrib/indexer"
	"github.com/trawl/trawl/internal/distrib/wire"
	"github.com/trawl/trawl/internal/index"
	"github.com/trawl/trawl/internal/store"
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
	// gives the feed backlog).
	nodeHTTP []string
}

// chainPing is the distributors' master check and ping period, the name
// server's ping period and the indexers' rebind period.
const chainPing = "300ms"

const chainPartitions = 2

// freeBase returns a base port whose offsets are free right now.
func freeBase(c *cluster, offsets ...int) int {
	c.t.Helper()
	for range 200 {
		base := 20000 + rand.IntN(30000)
		ok := true
		for _, off := range offsets {
			l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(base+off)))
			if err != nil {
				ok = false
				break
			}
			l.Close()
		}
		if ok {
			return base
		}
	}
	c.t.Fatal("no free base port")
	return 0
}

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
		base := freeBase(c, indexer.PortOffset)
		ch.ixBase = append(ch.ixBase, base)
		p := startProc(c.t, "indexer ix"+strconv.Itoa(i), append([]string{"indexer", "--nameserver", ch.nsAddr,
			"--partition", strconv.Itoa(i), "--partitions", strconv.Itoa(chainPartitions), "--base-port", strconv.Itoa(base),
			"--host", "127.0.0.1", "--listen", "127.0.0.1", "--data", filepath.Join(c.dir, "ix"+strconv.Itoa(i)),
			"--rebind", chainPing}, c.tlsArgs...)...)
		ch.ixs = append(ch.ixs, p)
		c.waitDial(p.name, ch.indexerAddr(i), 30*time.Second)
	}
	for i := 0; i < 2; i++ {
		base := freeBase(c, wire.PortInternal, wire.PortExternal)
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
func (c *cluster) indexable() []string {
	c.t.Helper()
	var out []string
	for i := range c.nodes {
		st, err := store.Open(filepath.Join(c.dir, "n"+strconv.Itoa(i)), store.Options{})
		if err != nil {
			c.t.Fatalf("node n%d store: %v", i, err)
		}
		err = st.URIs(collection, "", func(r *store.URIRecord) error {
			if r.Status == store.StatusFetched || r.Status == store.StatusNotModified {
				out = append(out, r.URI)
			}
			return nil
		})
		st.Close()
		if err != nil {
			c.t.Fatal(err)
		}
	}
	sort.Strings(out)
	return out
}

// checkIndex: the union of the (stopped) indexers' documents equals the
// node schedulers' indexable documents, each in one partition only (the
// one of its URI hash), nothing else.
func (c *cluster) checkIndex() {
	c.t.Helper()
	want := c.indexable()
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
