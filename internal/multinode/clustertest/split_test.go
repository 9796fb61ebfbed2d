package clustertest

import (
	"path/filepath"
	"regexp"
	"testing"
	"time"
)

// splitCut is how long the link between the duplicate server and its
// replica stays cut in TestSplitDupserver (issue 19: 30 s). The processes
// under test are built without the race detector, so it need not shrink
// under -race.
const splitCut = 30 * time.Second

// TestSplitDupserver cuts the link between the duplicate server ds0 and its
// failover replica r0 (at a TCP proxy that closes every connection and
// refuses new ones) for splitCut while the crawl goes on; node schedulers
// n1 and n2 still reach both, n0 reaches only ds0 (its path to r0's
// failover listener is cut too). The fenced pair (internal/dupserver,
// "Fencing"): ds0 learned at the start that r0 can be promoted, so without
// r0 it answers nothing and refuses node schedulers; n1 and n2 fail over to
// r0, which promotes itself with epoch 2 and carries the crawl; n0 gets no
// answer from anyone and keeps its checksum operations until the heal,
// then sends them to r0. When the link
// heals, ds0 redials r0, hears epoch 2 and is deposed. It is then restarted
// as r0's replica and catches up. Afterwards: every expected URL fetched;
// in every duplicate group of the node stores exactly one document is the
// owner (not flagged duplicate: the one fed to indexing) and every
// duplicate names it; the duplicate servers agree with the node stores; the
// deposed primary's store equals the promoted one's.
func TestSplitDupserver(t *testing.T) {
	o := faultOpts()
	o.failover = true
	o.proxyReplica, o.proxyFailover0 = true, true
	o.hosts, o.delay = 100, 0.5 // the crawl must outlast the cut
	c := newCluster(t, o)
	c.start()
	c.ds[0].waitLine(regexp.MustCompile(`the replica can be promoted`), 0, 30*time.Second)
	c.waitProgress(0.1, 60*time.Second)

	ds0Mark, rMark := c.ds[0].mark(), c.replica.mark()
	c.replicaProxy.setCut(true)
	c.failoverProxy.setCut(true)
	n0Before := c.failoverProxy.accepted()
	cutAt, atCut := time.Now(), c.progress()
	c.ds[0].waitLine(regexp.MustCompile(`fenced pair: node schedulers are refused`), ds0Mark, 30*time.Second)
	c.replica.waitLine(regexp.MustCompile(`PROMOTED to duplicate server.* epoch=2`), rMark, 30*time.Second)
	t.Logf("promoted %v after the cut", time.Since(cutAt).Round(time.Millisecond))
	time.Sleep(time.Until(cutAt.Add(splitCut)))
	atHeal := c.progress()
	c.replicaProxy.setCut(false)
	c.failoverProxy.setCut(false)
	t.Logf("link cut for %v: %d -> %d of %d URLs fetched meanwhile", splitCut, atCut, atHeal, len(c.want))
	if atHeal <= atCut {
		t.Errorf("the crawl did not go on while the link was cut: %d fetched at the cut, %d at the heal", atCut, atHeal)
	}
	if atCut >= len(c.want) {
		t.Errorf("the crawl was complete before the cut")
	}
	c.ds[0].waitLine(regexp.MustCompile(`DEPOSED`), ds0Mark, 30*time.Second)
	if c.ds[0].has(regexp.MustCompile(`answering from the local store`), ds0Mark) {
		t.Error("the fenced duplicate server answered from its own store while cut from its replica")
	}
	c.waitComplete(120*time.Second, 2*time.Second)
	// n0 reached r0 after the heal (a cut proxy counts no connection).
	if c.failoverProxy.accepted() == n0Before {
		t.Error("node n0 never reached the promoted replica after the heal")
	}

	// The deposed primary returns as the promoted one's replica.
	c.ds[0].stop()
	old := startProc(t, "old primary ds0 as replica", "dupserver", "--replica-mode", "--listen", c.primaryReplicaAddr,
		"--data", filepath.Join(c.dir, "ds0"), "--id", "ds0")
	old.waitLine(regexp.MustCompile(`replica follows a duplicate server of a newer epoch`), 0, 30*time.Second)
	c.replica.waitLine(regexp.MustCompile(`replica in sync`), rMark, 60*time.Second)
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
