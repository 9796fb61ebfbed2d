package webfarm

import (
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// BenchmarkServe measures serving throughput: 64 clients with keep-alive
// connections fetch ordinary pages of 200 hosts in parallel. The clients
// run in the same process, so they share the CPU with the farm.
func BenchmarkServe(b *testing.B) {
	cfg := Config{Seed: 1, Hosts: 200, PagesPerHost: 500, Features: FeatCommon, LogCap: 1 << 16}
	f := startFarm(b, cfg)
	client := farmClient(b, f, 10*time.Second)
	client.Transport.(*http.Transport).MaxIdleConnsPerHost = 64
	pre := *f.prefix.Load()
	urls := make([]string, 0, 4096)
	g := &gen{}
	for i := 0; i < cap(urls); i++ {
		h, n := int(mix64(uint64(i))%200), int(mix64(uint64(i)+7)%500)
		g.tp = f.appendPagePath(g.tp[:0], h, n)
		urls = append(urls, pre[h]+string(g.tp))
	}
	var next, bytes atomic.Int64
	const workers = 64
	b.ResetTimer()
	cpu0 := cpuTime()
	start := time.Now()
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(b.N) {
					return
				}
				resp, err := client.Get(urls[i%int64(len(urls))])
				if err != nil {
					b.Error(err)
					return
				}
				n, _ := io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				bytes.Add(n)
			}
		}()
	}
	wg.Wait()
	el := time.Since(start)
	cpu := cpuTime() - cpu0
	b.ReportMetric(float64(b.N)/el.Seconds(), "pages/s")
	// CPU seconds of the whole process (farm and clients) per page: on a
	// loaded machine wall-clock pages/s understates what two idle cores do.
	b.ReportMetric(cpu.Seconds()*1e6/float64(b.N), "cpu-us/page")
	b.ReportMetric(float64(bytes.Load())/float64(b.N), "bytes/page")
}

// BenchmarkRender measures page generation alone.
func BenchmarkRender(b *testing.B) {
	f, err := New(Config{Seed: 1, Hosts: 200, PagesPerHost: 500, Features: FeatCommon, Port: 8080})
	if err != nil {
		b.Fatal(err)
	}
	g := &gen{}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		g.reset(f, i%200, false)
		r := res{kind: rPage, h: i % 200, n: i % 500}
		f.render(g, &r)
	}
}

// cpuTime returns the process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
