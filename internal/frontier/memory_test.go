package frontier

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/store"
)

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// fill queues n URIs spread over sites, in transactions of 10,000.
func fill(tb testing.TB, f *Frontier, n, sites int) {
	es := make([]Entry, 0, 10000)
	for i := 0; i < n; i++ {
		site := fmt.Sprintf("site%04d.example.com", i%sites)
		es = append(es, Entry{URI: fmt.Sprintf("http://%s/dir/page-%07d.html", site, i), Site: site, Hops: 1})
		if len(es) == cap(es) || i == n-1 {
			r, err := f.Add(t0, es...)
			if err != nil {
				tb.Fatal(err)
			}
			if r.Queued != len(es) {
				tb.Fatalf("queued %d of %d", r.Queued, len(es))
			}
			es = es[:0]
		}
	}
}

// TestMemoryBoundedByDisk queues 1,000,000 URIs over 1,000 sites and checks
// that the heap holds only the per-site state and queue heads: the URIs are
// on disk.
func TestMemoryBoundedByDisk(t *testing.T) {
	n := 1_000_000
	if raceEnabled || testing.Short() {
		n = 200_000 // the race detector makes the full run take minutes
	}
	const sites = 1000
	st, err := store.Open(t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	before := heapInUse()
	cfg := testConfig()
	cfg.MaxSites = 100
	f, err := Open(st, cfg, nil, t0)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	fill(t, f, n, sites)
	elapsed := time.Since(start)
	// Serve a few so heads are loaded from disk.
	for i := 0; i < 1000; i++ {
		fe, ok, _ := f.Next(t0)
		if !ok {
			break
		}
		if err := f.Done(fe, Result{}, t0); err != nil {
			t.Fatal(err)
		}
	}
	after := heapInUse()
	if s := f.Stats(); s.Queued != n-1000 || s.Sites != sites {
		t.Fatalf("stats %+v", s)
	}
	grew := int64(after) - int64(before)
	// Pebble's memtables (2 x 4 MiB) and block cache (8 MiB) plus ~1 KiB per
	// site; 1M URIs in memory would take well over 100 MiB.
	const bound = 48 << 20
	t.Logf("%d URIs over %d sites: heap grew %.1f MiB (%.1f bytes/URI), enqueue %.0f URIs/s",
		n, sites, float64(grew)/(1<<20), float64(grew)/float64(n), float64(n)/elapsed.Seconds())
	if grew > bound {
		t.Errorf("heap grew %d bytes, bound %d", grew, bound)
	}
	runtime.KeepAlive(f)
}

// BenchmarkEnqueueDequeue measures queueing n URIs (over 1,000 sites) and
// serving all of them, with delay 0, through the store on disk.
func BenchmarkEnqueueDequeue(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		b.Run(fmt.Sprintf("uris=%d", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				st, err := store.Open(b.TempDir(), store.Options{})
				if err != nil {
					b.Fatal(err)
				}
				cfg := testConfig()
				cfg.MaxSites = 1000
				cfg.MaxPending = 4
				f, err := Open(st, cfg, nil, t0)
				if err != nil {
					b.Fatal(err)
				}
				base := heapInUse()
				b.StartTimer()
				t1 := time.Now()
				fill(b, f, n, 1000)
				enq := time.Since(t1)
				peak := heapInUse()
				t2 := time.Now()
				served := 0
				batch := make([]Fetch, 0, 256)
				for {
					batch = batch[:0]
					for len(batch) < cap(batch) {
						fe, ok, _ := f.Next(t0)
						if !ok {
							break
						}
						batch = append(batch, fe)
					}
					if len(batch) == 0 {
						break
					}
					tx, err := f.Begin(t0)
					if err != nil {
						b.Fatal(err)
					}
					for _, fe := range batch {
						if err := tx.Done(fe, Result{Outcome: Fetched}); err != nil {
							b.Fatal(err)
						}
					}
					if err := tx.Commit(); err != nil {
						b.Fatal(err)
					}
					served += len(batch)
				}
				deq := time.Since(t2)
				b.StopTimer()
				if served != n {
					b.Fatalf("served %d of %d", served, n)
				}
				b.ReportMetric(float64(n)/enq.Seconds(), "enqueue-URIs/s")
				b.ReportMetric(float64(n)/deq.Seconds(), "dequeue-URIs/s")
				b.ReportMetric(float64(int64(peak)-int64(base))/(1<<20), "heap-MiB-at-peak")
				st.Close()
				b.StartTimer()
			}
		})
	}
}
