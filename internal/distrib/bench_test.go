package distrib_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/distrib"
)

// BenchmarkChain feeds documents of about 1 KiB of text through 1 or 3
// distributors into 1 or 2 indexer partitions (all in this process, over
// loopback TCP), from one feeder (batches of 100, 4 in flight), and
// reports documents/s from the first operation to the
// last callback.
//
//	go test -run '^$' -bench BenchmarkChain -benchtime 1x ./internal/distrib/
func BenchmarkChain(b *testing.B) {
	for _, cds := range []int{1, 3} {
		for _, ixs := range []int{1, 2} {
			b.Run(fmt.Sprintf("distributors=%d/indexers=%d", cds, ixs), func(b *testing.B) {
				c := newChain(b, cds, ixs)
				c.batch = 100 // the feeder's default
				waitFor(b, "a master", 10*time.Second, func() bool { _, ok := c.master(); return ok })
				n := 5000 * b.N
				b.ResetTimer()
				start := time.Now()
				feedDocs(b, c, n, nil)
				el := time.Since(start)
				b.ReportMetric(float64(n)/el.Seconds(), "docs/s")
			})
		}
	}
}

// BenchmarkFailover kills the master (its process context ends, its
// listeners close) and reports the seconds until a backup answers as the
// new master, with the given "check for master" period.
//
//	go test -run '^$' -bench BenchmarkFailover -benchtime 3x ./internal/distrib/
func BenchmarkFailover(b *testing.B) {
	for _, ping := range []time.Duration{time.Second, 5 * time.Second} {
		b.Run("ping="+ping.String(), func(b *testing.B) {
			var total time.Duration
			for range b.N {
				c := newChain(b, 3, 0)
				for id := range c.cds {
					c.cds[id].stop(b)
				}
				c.cds, c.cdSrv = map[int64]*proc{}, map[int64]*distrib.Server{}
				c.ping = ping
				for id := int64(1); id <= 3; id++ {
					c.startCD(id)
				}
				waitFor(b, "a master", 30*time.Second, func() bool { _, ok := c.master(); return ok })
				m, _ := c.master()
				killed := time.Now()
				c.cds[m].stop(b)
				waitFor(b, "a new master", 60*time.Second, func() bool { n, ok := c.master(); return ok && n != m })
				total += time.Since(killed)
			}
			b.ReportMetric(total.Seconds()/float64(b.N), "s-without-master")
		})
	}
}
