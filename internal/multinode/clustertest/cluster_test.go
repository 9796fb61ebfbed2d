package clustertest

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// farmSize is the synthetic web of the cluster tests: 200 sites of 20
// pages (plus what the farm's features add to each site).
const farmHosts, farmPages = 200, 20

// TestCluster crawls the farm with one multinode scheduler, three node
// schedulers and two duplicate servers, the first with a replica.
func TestCluster(t *testing.T) {
	c := newCluster(t, clusterOpts{hosts: farmHosts, pages: farmPages, nodes: 3, dupservers: 2, replica: true})
	c.start()
	start := time.Now()
	c.waitComplete(100*time.Second, 2*time.Second)
	t.Logf("crawl of %d URLs took %v", len(c.want), time.Since(start).Round(time.Millisecond))
	c.stopAll()
	c.checkFetched()
	c.checkDuplicates(c.dsOwners())
	c.checkReplica(filepath.Join(c.dir, "ds0"), false, filepath.Join(c.dir, "r0"), true)
}

// checkReplica compares a (stopped) duplicate server's checksum store with
// its replica's.
func (c *cluster) checkReplica(primary string, primaryReplicaMode bool, replica string, replicaMode bool) {
	c.t.Helper()
	p := c.dump(primary, primaryReplicaMode)
	r := c.dump(replica, replicaMode)
	if len(p) == 0 {
		c.t.Error("the duplicate server's store is empty")
	}
	if diff := cmp.Diff(p, r); diff != "" {
		c.t.Errorf("replica's checksum store differs from its duplicate server's (-primary +replica):\n%s", diff)
	} else {
		c.t.Logf("replica equals its duplicate server: %d checksums", len(p))
	}
}
