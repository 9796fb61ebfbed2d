package main

import (
	"context"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/feed"
	"github.com/trawl/trawl/internal/index"
)

// BenchmarkRunIndexAndSearch crawls the demo web with `trawl run` (sizes
// from TRAWL_BENCH_HOSTS and TRAWL_BENCH_PAGES, default 20 x 100), reports
// the documents indexed per second during the crawl, then runs 1,000
// queries of one to three words of the web's vocabulary (and a quoted
// phrase every tenth query) against the index and reports the median and
// 99th-percentile latency. Run it with -benchtime=1x:
//
//	go test -run '^$' -bench RunIndexAndSearch -benchtime=1x ./cmd/trawl
func BenchmarkRunIndexAndSearch(b *testing.B) {
	hosts, pages := envInt("TRAWL_BENCH_HOSTS", 20), envInt("TRAWL_BENCH_PAGES", 100)
	data := b.TempDir()
	var out strings.Builder
	env := &cmdEnv{stdin: strings.NewReader(""), stdout: &out, stderr: &strings.Builder{}}
	code := runMain(context.Background(), env, []string{"run", "--demo", "--data", data, "--demo-hosts", strconv.Itoa(hosts),
		"--demo-pages", strconv.Itoa(pages), "--listen", "off", "--progress", "off"})
	if code != 0 {
		b.Fatalf("trawl run: exit %d\n%s", code, out.String())
	}
	b.Logf("trawl run:\n%s", out.String())
	idx, err := index.Open(filepath.Join(data, "index"), index.Options{ReadOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	defer idx.Close()
	n, _ := idx.Count()

	// The vocabulary: words of the indexed pages' text.
	farm := demoFarm(b, data, hosts, pages)
	seen := map[string]bool{}
	var words []string
	var sentences [][]string
	var urls []string
	for _, u := range farm.StartURLs() {
		urls = append(urls, u)
		if res, err := farm.Describe(u, 0); err == nil {
			for i, l := range res.Links {
				if i < 8 {
					urls = append(urls, l.URL)
				}
			}
		}
	}
	for _, u := range urls {
		res, err := farm.Describe(u, 0)
		if err != nil {
			continue
		}
		f := strings.Fields(strings.ToLower(feed.ExtractText(res.ContentType, res.Body).Text))
		for i, w := range f {
			w = strings.Trim(w, ".,;:!?\"'()")
			if len(w) > 2 && !seen[w] {
				seen[w] = true
				words = append(words, w)
			}
			if i+3 <= len(f) && i%7 == 0 {
				sentences = append(sentences, f[i:i+3])
			}
		}
	}
	if len(words) < 20 {
		b.Fatalf("vocabulary of %d words", len(words))
	}
	rng := rand.New(rand.NewSource(1))
	queries := make([]string, 1000)
	for i := range queries {
		if i%10 == 9 && len(sentences) > 0 {
			queries[i] = `"` + strings.Join(sentences[rng.Intn(len(sentences))], " ") + `"`
			continue
		}
		k := 1 + rng.Intn(3)
		q := make([]string, k)
		for j := range q {
			q[j] = words[rng.Intn(len(words))]
		}
		queries[i] = strings.Join(q, " ")
	}
	b.ResetTimer()
	var lat []time.Duration
	hits := 0
	for it := 0; it < b.N; it++ {
		for _, q := range queries {
			t0 := time.Now()
			res, err := idx.Search(context.Background(), q, index.SearchOptions{Size: 10})
			lat = append(lat, time.Since(t0))
			if err != nil {
				b.Fatal(err)
			}
			if res.Total > 0 {
				hits++
			}
		}
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50_ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99_ms")
	b.ReportMetric(float64(hits)/float64(len(lat)), "queries_with_hits")
	b.ReportMetric(float64(n), "docs")
	if m := regexp.MustCompile(`([\d.]+) documents/s`).FindStringSubmatch(out.String()); m != nil {
		v, _ := strconv.ParseFloat(m[1], 64)
		b.ReportMetric(v, "docs_indexed/s")
	}
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}
