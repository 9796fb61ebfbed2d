package clustertest

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// chaosDuration is how long TestChaos keeps killing processes:
// $TRAWL_CHAOS_DURATION (a Go duration) or 20 s. bench/chaos.sh runs it
// longer and repeatedly.
func chaosDuration(t *testing.T) time.Duration {
	if s := os.Getenv("TRAWL_CHAOS_DURATION"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("TRAWL_CHAOS_DURATION: %v", err)
		}
		return d
	}
	return 20 * time.Second
}

// TestChaos crawls a farm of 100 sites with a multinode scheduler, three
// node schedulers, two duplicate servers each with a replica, and a
// feeding chain the node schedulers feed (a name server, two content
// distributors, master and backup, and two indexer partitions, each its
// own process). Every 1.5-3 s it kills a random one of them with SIGKILL
// and restarts it on its data directory and address, or severs node n0's
// connection to the multinode scheduler. The per-site delay keeps the
// crawl going through the chaos. At the end:
//
//   - every expected URL was fetched, no site by two node schedulers;
//   - every duplicate group has one owner the duplicate servers agree on,
//     and each replica equals its primary;
//   - the index equals the stores: the indexers together hold exactly the
//     node schedulers' stored documents that are fetched and not
//     duplicates, each once, in the partition of its URI hash (checkIndex);
//   - the statistics add up, and must across every kill because a node
//     scheduler saves its counters in the same store batch as the crawl
//     step they count (internal/stats, internal/nodesched), and the
//     multinode scheduler keeps each node scheduler's last report, which
//     is its saved state (checkStats): over XML-RPC, the multinode
//     scheduler's collection statistics equal the sum of the node
//     schedulers' (Processed, Downloaded, Stored, DocSize, the PP
//     counters, ...; checkLiveStats); per node scheduler and per site,
//     "processed" equals the fetches its store records and the multinode
//     scheduler's saved copy equals the node scheduler's; Stored equals
//     the documents in the stores (fetched and duplicates); PPAdded less
//     PPDeleted equals the documents in the index;
//   - the web analyzer's dmake build over n0's crawl, with a dmake worker
//     killed mid-build and restarted, keeps the same tables as an
//     undisturbed build (checkAnalysis);
//   - the URLs fetched more than once are bounded by what can be in
//     flight at the site restarts (see the comment on the repeats below).
func TestChaos(t *testing.T) {
	o := clusterOpts{hosts: 100, pages: farmPages, nodes: 3, dupservers: 2, replica: true, replica1: true, chain: true, delay: 0.5, proxyNode0: true}
	c := newCluster(t, o)
	c.start()
	c.waitProgress(0.05, 60*time.Second)

	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("TRAWL_CHAOS_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("chaos seed %d (TRAWL_CHAOS_SEED repeats it)", seed)
	r := rand.New(rand.NewPCG(seed, 0))
	victims := []victim{
		{"multinode", func() *proc { return c.mns }},
		{"n0", func() *proc { return c.nodes[0] }},
		{"n1", func() *proc { return c.nodes[1] }},
		{"n2", func() *proc { return c.nodes[2] }},
		{"ds1", func() *proc { return c.ds[1] }},
		{"replica r0", func() *proc { return c.replica }},
		{"replica r1", func() *proc { return c.replica1 }},
		{"sever n0-multinode", nil},
	}
	victims = append(victims, c.chainVictims()...)
	if only := os.Getenv("TRAWL_CHAOS_VICTIMS"); only != "" {
		// A comma-separated subset of the victims' names, to chase one
		// failure.
		keep := victims[:0]
		for _, v := range victims {
			if strings.Contains(","+only+",", ","+v.name+",") {
				keep = append(keep, v)
			}
		}
		victims = keep
	}
	kills := map[string]int{}
	type event struct {
		at   time.Time
		what string
	}
	var events []event
	nodeKills, mnsKills := 0, 0
	end := time.Now().Add(chaosDuration(t))
	for time.Now().Before(end) && c.progress() < len(c.want) {
		time.Sleep(1500*time.Millisecond + time.Duration(r.IntN(1500))*time.Millisecond)
		if len(victims) == 0 { // TRAWL_CHAOS_VICTIMS=none: an undisturbed run
			continue
		}
		v := victims[r.IntN(len(victims))]
		at := c.progress()
		if v.p == nil {
			n := c.proxy.sever()
			t.Logf("chaos: severed %d n0-multinode connections at %d of %d URLs", n, at, len(c.want))
			kills[v.name]++
			continue
		}
		p := v.p()
		events = append(events, event{time.Now(), "kill " + v.name})
		p.kill9()
		time.Sleep(time.Duration(r.IntN(1000)) * time.Millisecond)
		p.start()
		kills[v.name]++
		switch {
		case v.name == "multinode":
			mnsKills++
		case len(v.name) == 2 && v.name[0] == 'n':
			nodeKills++
		}
		t.Logf("chaos: kill -9 and restart of %s at %d of %d URLs", v.name, at, len(c.want))
	}
	t.Logf("chaos over: %v", kills)

	c.waitComplete(180*time.Second, 3*time.Second)
	c.waitFed(120*time.Second, 2*time.Second)
	time.Sleep(3 * statsEvery) // the node schedulers' last CMD_UM_STAT
	live := c.checkLiveStats()
	c.stopAll()
	c.checkFetched()
	c.checkDuplicates(c.dsOwners())
	c.checkReplica(filepath.Join(c.dir, "ds0"), false, filepath.Join(c.dir, "r0"), true)
	c.checkReplica(filepath.Join(c.dir, "ds1"), false, filepath.Join(c.dir, "r1"), true)
	c.checkIndex(live)
	c.checkStats()
	c.checkAnalysis()

	// Repeats: every request of a URL after its first. A killed node
	// scheduler may fetch again what it had in flight and not yet
	// committed (at most --workers fetches: a committed step survives the
	// kill, internal/pebblefs) and the robots.txt of the sites it holds
	// (the robots cache lives in memory). A killed multinode scheduler
	// makes every node scheduler start its sites again when it registers
	// with the new one, and so does a severed link when the node scheduler
	// registers again: each may fetch again what it had in flight (at most
	// --workers) and its sites' robots.txt. So every registration of a node
	// scheduler after its first (the multinode scheduler logs each) is one
	// site restart; the repeats are bounded by the restarts. Killing a
	// duplicate server, a replica or a process of the feeding chain repeats
	// no fetch (the feeder keeps every operation until its callback).
	// Nothing else is fetched twice.
	count := map[string]int{}
	for _, q := range c.requests() {
		count[q.url]++
	}
	repeats, robots := 0, 0
	var twice []string
	for u, n := range count {
		if n > 1 {
			repeats += n - 1
			if filepath.Base(u) == "robots.txt" {
				robots += n - 1
			} else {
				twice = append(twice, u)
			}
		}
	}
	sort.Strings(twice)
	restarts := c.registrations() - o.nodes // node schedulers that started their sites again
	bound := restarts * o.workersOrDefault()
	t.Logf("%d URLs, %d requests repeated (%d of them robots.txt); %d node scheduler and %d multinode scheduler kills, %d site restarts (registrations again), bound on page repeats %d",
		len(count), repeats, robots, nodeKills, mnsKills, restarts, bound)
	if len(twice) > 0 {
		t.Logf("fetched more than once: %v", head(twice, 20))
		times := map[string][]string{}
		for _, q := range c.farm.Requests() {
			if count[q.URL] > 1 {
				times[q.URL] = append(times[q.URL], q.Time.Format("15:04:05.000")+" from "+q.Remote)
			}
		}
		for _, u := range head(twice, 10) {
			t.Logf("  %s: %v", u, times[u])
		}
		for _, e := range events {
			t.Logf("  %s %s", e.at.Format("15:04:05.000"), e.what)
		}
	}
	if repeats-robots > bound {
		t.Errorf("%d page requests repeated, more than the %d that %d site restarts of a node scheduler can have in flight", repeats-robots, bound, restarts)
	}
	sites := o.hosts + len(c.mir.hosts) + 12 // the farm, the mirrors, and the hosts its features add
	if robots > restarts*sites {
		t.Errorf("%d robots.txt requests repeated, more than one per site (%d) for each of %d site restarts of a node scheduler", robots, sites, restarts)
	}
}

func (o clusterOpts) workersOrDefault() int {
	if o.workers == 0 {
		return 16
	}
	return o.workers
}

var registered = regexp.MustCompile(`multinode: node scheduler registered" node=`)

// registrations counts the node schedulers' registrations with the
// multinode scheduler, over all its runs.
func (c *cluster) registrations() int {
	c.mns.mu.Lock()
	defer c.mns.mu.Unlock()
	n := 0
	for _, l := range c.mns.lines {
		if registered.MatchString(l) {
			n++
		}
	}
	return n
}
