package dmake_test

import (
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/tlsconf/tlstest"
)

// TestBuildOverTLS: the three-worker build of TestBuildOnThreeWorkers (1 MB)
// with mutual TLS on every link: master to workers and the file transfers
// between workers (netsink listeners, netsource connections). The outputs
// are the reference's.
func TestBuildOverTLS(t *testing.T) {
	ca := tlstest.NewCA(t, "trawl test CA")
	var flags [][]string
	for _, name := range []string{"w0", "w1", "w2"} {
		_, f := ca.Issue(name)
		flags = append(flags, f.Args())
	}
	c := newCluster(t, 1<<20, flags...)
	_, mf := ca.Issue("master")
	m := startMaster(t, c.build, c.workers, append([]string{"--compress"}, mf.Args()...)...)
	if err := m.wait(t, 5*time.Minute); err != nil {
		t.Fatalf("master: %v", err)
	}
	if log := m.log.String(); !strings.Contains(log, "build complete") {
		t.Errorf("master log lacks %q", "build complete")
	}
	c.check(t)
}
