package clustertest

import (
	"context"
	"crypto/md5"
	"encoding/binary"
	"fmt"
	"net"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/cmt"
)

// BenchmarkDupserverTCP measures checksum operations (PPDUP_ADD of new
// checksums, each answered with PPDUP_ADD_OK) per second through a `trawl
// dupserver` process, from 3 node scheduler connections with 256
// operations in flight each, without and with a replica process.
//
//	go test -run '^$' -bench DupserverTCP -benchtime 20000x ./internal/multinode/clustertest
func BenchmarkDupserverTCP(b *testing.B) {
	for _, withReplica := range []bool{false, true} {
		name := "no-replica"
		if withReplica {
			name = "replica"
		}
		b.Run(name, func(b *testing.B) {
			dir := b.TempDir()
			args := []string{"dupserver", "--listen", "127.0.0.1:0", "--data", filepath.Join(dir, "ds"), "--id", "bench", "--log-level", "info"}
			if withReplica {
				raddr := freeAddr(b)
				r := startProc(b, "replica", "dupserver", "--replica-mode", "--listen", raddr, "--data", filepath.Join(dir, "r"), "--log-level", "info")
				r.waitLine(dsListening, 0, 30*time.Second)
				args = append(args, "--replica", raddr)
			}
			ds := startProc(b, "dupserver", args...)
			addr := ds.waitLine(dsListening, 0, 30*time.Second)[1]
			if withReplica {
				// The replica link is up before the clock starts.
				ds.waitLine(regexOf(`replica connected`), 0, 30*time.Second)
			}
			const conns, window = 3, 256
			per := (b.N + conns - 1) / conns
			var wg sync.WaitGroup
			errs := make(chan error, conns)
			b.ResetTimer()
			start := time.Now()
			for c := 0; c < conns; c++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if err := addLoad(addr, "n"+strconv.Itoa(c), per, window); err != nil {
						errs <- err
					}
				}()
			}
			wg.Wait()
			el := time.Since(start)
			b.StopTimer()
			close(errs)
			for err := range errs {
				b.Fatal(err)
			}
			b.ReportMetric(float64(per*conns)/el.Seconds(), "ops/s")
		})
	}
}

// addLoad sends n PPDUP_ADD of distinct checksums over one connection,
// keeping window unanswered, and waits for every answer.
func addLoad(addr, node string, n, window int) error {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	conn := cmt.NewConn(c, cmt.ConnConfig{SendQueue: 2 * window})
	go conn.Run(context.Background())
	if err := conn.TrySend(&cmt.PPDUPSetConfig{Collection: "bench", Config: cmt.CrawlConfig{Collections: []cmt.Collection{{Name: "bench"}}}, VClock: 1}, cmt.PriorityHigh); err != nil {
		return err
	}
	sem := make(chan struct{}, window)
	done := make(chan error, 1)
	go func() {
		got := 0
		for f := range conn.Incoming() {
			switch f.Message.(type) {
			case *cmt.PPDUPAddOK:
				got++
				<-sem
				if got == n {
					done <- nil
					return
				}
			case *cmt.PPDUPError:
				done <- fmt.Errorf("PPDUP_ERROR: %+v", f.Message)
				return
			}
		}
		done <- fmt.Errorf("connection closed after %d answers", got)
	}()
	var buf [8]byte
	for i := 0; i < n; i++ {
		sem <- struct{}{}
		binary.LittleEndian.PutUint64(buf[:], uint64(i))
		cs := md5.Sum(append([]byte(node), buf[:]...))
		uri := "http://" + node + ".bench.test/" + strconv.Itoa(i)
		if err := conn.TrySend(&cmt.PPDUPAdd{Collection: "bench", NodeID: node, URI: uri, Checksum: cmt.Checksum(cs)}, cmt.PriorityNormal); err != nil {
			return err
		}
	}
	select {
	case err := <-done:
		return err
	case <-time.After(5 * time.Minute):
		return fmt.Errorf("answers missing after 5 minutes")
	}
}

// BenchmarkCrawlNodes measures crawl throughput (pages per second, from
// the start of the processes to the last request) on the 200-site farm
// with a per-site delay of 0.1 s and max_sites 8 per node scheduler, with
// 1, 2 and 3 node schedulers (no duplicate server).
//
//	go test -run '^$' -bench CrawlNodes -benchtime 1x ./internal/multinode/clustertest
func BenchmarkCrawlNodes(b *testing.B) {
	for _, nodes := range []int{1, 2, 3} {
		b.Run(strconv.Itoa(nodes)+"-nodes", func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				c := newCluster(b, clusterOpts{hosts: farmHosts, pages: farmPages, nodes: nodes, delay: 0.1, maxSites: 8})
				start := time.Now()
				c.start()
				c.waitComplete(10*time.Minute, time.Second)
				// The last request, not the quiet second after it.
				last := start
				for _, r := range c.farm.Requests() {
					if r.Time.After(last) {
						last = r.Time
					}
				}
				el := last.Sub(start)
				b.ReportMetric(float64(len(c.want))/el.Seconds(), "pages/s")
				b.ReportMetric(el.Seconds(), "s/crawl")
				c.stopAll()
			}
		})
	}
}

func regexOf(s string) *regexp.Regexp { return regexp.MustCompile(s) }
