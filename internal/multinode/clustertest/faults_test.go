package clustertest

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"
)

// faultOpts is the cluster of the fault tests: the farm of TestCluster with
// a small per-site delay, so that the crawl is still going when the fault
// comes.
func faultOpts() clusterOpts {
	return clusterOpts{hosts: farmHosts, pages: farmPages, nodes: 3, dupservers: 2, replica: true, delay: 0.05}
}

// finish waits for the end of the crawl, stops every process and checks
// that nothing was lost, no site was fetched by two node schedulers and
// the duplicates were found.
func (c *cluster) finish(limit time.Duration) {
	c.t.Helper()
	start := time.Now()
	c.waitComplete(limit, 2*time.Second)
	c.t.Logf("crawl completed %v after the fault", time.Since(start).Round(time.Millisecond))
	c.stopAll()
	c.checkFetched()
}

// TestKillMultinode kills the multinode scheduler with SIGKILL mid-crawl
// and restarts it: it reloads its routing database, asks the node
// schedulers for their routes (CMD_UM_ASK_ROUTE), gets the URIs the old one
// lost sent again, and the crawl goes on; the statistics count every
// fetch once (checkStats).
func TestKillMultinode(t *testing.T) {
	c := newCluster(t, faultOpts())
	c.start()
	c.waitProgress(0.3, 60*time.Second)
	c.mns.kill9()
	killedAt := c.progress()
	mark := c.mns.mark()
	c.mns.start()
	c.mns.waitLine(regexp.MustCompile(`listening for node schedulers.* routes=[1-9]`), mark, 30*time.Second)
	for i := range c.nodes {
		c.nodes[i].waitLine(regexp.MustCompile(`peer reachable again|link lost`), 0, 30*time.Second)
	}
	c.finishStats(90 * time.Second)
	t.Logf("killed at %d of %d URLs", killedAt, len(c.want))
	for _, n := range []string{"n0", "n1", "n2"} {
		if !c.mns.has(regexp.MustCompile(`node scheduler registered" node=`+n), mark) {
			t.Errorf("%s did not register with the restarted multinode scheduler", n)
		}
	}
	c.checkDuplicates(c.dsOwners())
}

// TestKillNode kills a node scheduler with SIGKILL mid-crawl and restarts
// it on its store: it resumes its sites, and the multinode scheduler kept
// what came for them meanwhile; the statistics count every fetch once
// (checkStats).
func TestKillNode(t *testing.T) {
	c := newCluster(t, faultOpts())
	c.start()
	c.waitProgress(0.3, 60*time.Second)
	c.nodes[1].kill9()
	killedAt := c.progress()
	c.mns.waitLine(regexp.MustCompile(`node scheduler disconnected" node=n1`), 0, 30*time.Second)
	time.Sleep(500 * time.Millisecond) // the crawl goes on without n1 for a while
	mark := c.mns.mark()
	c.nodes[1].start()
	c.mns.waitLine(regexp.MustCompile(`node scheduler registered" node=n1`), mark, 30*time.Second)
	c.finishStats(90 * time.Second)
	t.Logf("killed at %d of %d URLs", killedAt, len(c.want))
	c.checkDuplicates(c.dsOwners())
}

// TestKillPrimaryDupserver kills the duplicate server that has a replica:
// the node schedulers fail over to the replica, which promotes itself, and
// the crawl goes on. Then the old duplicate server comes back as the
// replica of the promoted one and catches up.
func TestKillPrimaryDupserver(t *testing.T) {
	o := faultOpts()
	o.failover = true
	c := newCluster(t, o)
	c.start()
	c.waitProgress(0.3, 60*time.Second)
	c.ds[0].kill9()
	killedAt := c.progress()
	c.replica.waitLine(regexp.MustCompile(`PROMOTED to duplicate server`), 0, 30*time.Second)
	c.waitComplete(90*time.Second, 2*time.Second)
	t.Logf("killed at %d of %d URLs", killedAt, len(c.want))

	// The old duplicate server returns as the promoted one's replica.
	old := startProc(t, "old primary ds0 as replica", "dupserver", "--replica-mode", "--listen", c.primaryReplicaAddr,
		"--data", filepath.Join(c.dir, "ds0"), "--id", "ds0")
	c.replica.waitLine(regexp.MustCompile(`replica in sync`), 0, 60*time.Second)
	for _, p := range c.nodes {
		p.stop()
	}
	c.mns.stop()
	c.ds[1].stop()
	old.stop()
	c.replica.stop()
	c.checkFetched()
	owners := c.dump(filepath.Join(c.dir, "r0"), true)
	for cs, o := range c.dump(filepath.Join(c.dir, "ds1"), false) {
		owners[cs] = o
	}
	c.checkDuplicates(owners)
	c.checkReplica(filepath.Join(c.dir, "r0"), true, filepath.Join(c.dir, "ds0"), true)
}

// TestSeverConnection closes the connection between a node scheduler and
// the multinode scheduler (at a TCP proxy between them) twice mid-crawl:
// the node scheduler reconnects, both ends send again what the broken
// connection may have lost, and the crawl completes.
func TestSeverConnection(t *testing.T) {
	o := faultOpts()
	o.proxyNode0 = true
	c := newCluster(t, o)
	c.start()
	for i, frac := range []float64{0.25, 0.5} {
		c.waitProgress(frac, 60*time.Second)
		before := c.proxy.accepted()
		if n := c.proxy.sever(); n == 0 {
			t.Fatalf("sever %d: no connection through the proxy", i)
		}
		deadline := time.Now().Add(30 * time.Second)
		for c.proxy.accepted() == before {
			if time.Now().After(deadline) {
				t.Fatalf("sever %d: node n0 did not reconnect", i)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	c.finish(90 * time.Second)
	if !c.nodes[0].has(regexp.MustCompile(`link lost" peer=multinode`), 0) {
		t.Error("n0 did not log the lost link")
	}
	c.checkDuplicates(c.dsOwners())
}

// TestRerouteDeadNode kills a node scheduler for good; the operator asks
// the multinode scheduler to reroute its sites (`trawl multinode --reroute
// ID --data DIR`, the hook of the operator command), and the crawl
// completes on the other node schedulers. The dead node's sites are
// fetched again by their new node schedulers (its store went with it); no
// site is fetched by two live node schedulers.
func TestRerouteDeadNode(t *testing.T) {
	c := newCluster(t, faultOpts())
	c.start()
	c.waitProgress(0.3, 60*time.Second)
	c.nodes[2].kill9()
	c.gone = map[string]bool{c.nodeIPs[2]: true}
	killedAt := c.progress()
	c.mns.waitLine(regexp.MustCompile(`node scheduler disconnected" node=n2`), 0, 30*time.Second)
	out, err := exec.Command(trawl.path, "multinode", "--reroute", "n2", "--data", filepath.Join(c.dir, "mns")).CombinedOutput()
	if err != nil {
		t.Fatalf("trawl multinode --reroute: %v\n%s", err, out)
	}
	c.mns.waitLine(regexp.MustCompile(`reroute done" node=n2 attrs=[1-9]`), 0, 30*time.Second)
	c.waitComplete(90*time.Second, 2*time.Second)
	t.Logf("killed at %d of %d URLs", killedAt, len(c.want))
	// n2 may not register again under its identifier (and gets no
	// crawl-IP grant, so it fetches nothing).
	mark := c.mns.mark()
	c.nodes[2].start()
	c.mns.waitLine(regexp.MustCompile(`sites of this node identifier were rerouted, closing the connection`), mark, 30*time.Second)
	c.nodes[2].kill9()
	c.stopAll()
	c.checkFetched()
}
