package clustertest

import (
	"context"
	"crypto/tls"
	"path/filepath"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/tlsconf/tlstest"
)

// TestClusterTLS is TestCluster (the same farm, processes and checks) with
// mutual TLS on every link (one test CA, every process with --tls-cert,
// --tls-key, --tls-ca): the crawl and its checks pass unchanged. Then, with the processes still up, a peer without
// a certificate, and one with a certificate of another authority, are
// refused by the multinode scheduler, the duplicate servers and the
// replica, while one with a certificate of the CA is served.
func TestClusterTLS(t *testing.T) {
	c := newCluster(t, clusterOpts{hosts: farmHosts, pages: farmPages, nodes: 3, dupservers: 2, replica: true, tls: true})
	c.start()
	start := time.Now()
	c.waitComplete(100*time.Second, 2*time.Second)
	t.Logf("crawl of %d URLs over mutual TLS took %v", len(c.want), time.Since(start).Round(time.Millisecond))

	good := c.ca.Config("good")
	stranger, _ := tlstest.NewCA(t, "another CA").Issue("stranger")
	listeners := map[string]string{"multinode": c.mnsAddr, "dupserver ds0": c.dsAddrs[0], "dupserver ds1": c.dsAddrs[1], "replica r0": c.replicaAddr}
	for name, addr := range listeners {
		for _, tc := range []struct {
			peer string
			cfg  *tls.Config
			ok   bool
		}{
			{"no certificate", &tls.Config{RootCAs: c.ca.Pool(), ServerName: "127.0.0.1"}, false},
			{"another CA's certificate", &tls.Config{RootCAs: c.ca.Pool(), ServerName: "127.0.0.1", Certificates: []tls.Certificate{stranger}}, false},
			{"the CA's certificate", good.Client(addr), true},
		} {
			err := tlstest.Probe(context.Background(), addr, tc.cfg)
			if tc.ok && err != nil {
				t.Errorf("%s at %s, %s: refused: %v", name, addr, tc.peer, err)
			}
			if !tc.ok && err == nil {
				t.Errorf("%s at %s, %s: served", name, addr, tc.peer)
			}
		}
	}
	c.stopAll()
	c.checkFetched()
	c.checkDuplicates(c.dsOwners())
	c.checkReplica(filepath.Join(c.dir, "ds0"), false, filepath.Join(c.dir, "r0"), true)
}
