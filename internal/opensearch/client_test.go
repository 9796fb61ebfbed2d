package opensearch

import (
	"context"
	"testing"
	"time"
)

// TestCluster starts the two-node cluster and checks that both nodes are
// in it.
func TestCluster(t *testing.T) {
	start := time.Now()
	c := clusterFor(t)
	var nodes map[string]any
	c.must(t, "GET", "/_cat/nodes?format=json&h=name,node.role", nil, nil)
	_ = nodes
	if err := c.waitNodes(context.Background(), 2); err != nil {
		t.Fatal(err)
	}
	t.Logf("two-node cluster up (%v)", time.Since(start))
}
