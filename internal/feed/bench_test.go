package feed

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// syntheticHTML returns a deterministic HTML document of about size bytes.
func syntheticHTML(r *rand.Rand, i, size int) []byte {
	words := []string{"crawler", "index", "search", "document", "river", "otter", "lemon", "market", "network",
		"storage", "village", "engine", "query", "sample", "garden", "violet", "harbor", "silver", "forest", "signal"}
	var b strings.Builder
	fmt.Fprintf(&b, "<!DOCTYPE html><html lang=\"en\"><head><title>Synthetic page %d %s</title></head><body><h1>Page %d</h1>", i, words[i%len(words)], i)
	for b.Len() < size-30 {
		b.WriteString("<p>")
		for range 12 {
			b.WriteString(words[r.IntN(len(words))])
			fmt.Fprintf(&b, "%d ", r.IntN(500))
		}
		fmt.Fprintf(&b, "<a href=\"/p/%d\">link %d</a></p>", r.IntN(10000), i)
	}
	b.WriteString("</body></html>")
	return []byte(b.String())
}

// BenchmarkFeedIndex feeds 10,000 synthetic 5 KB HTML documents through the
// outbox, the feeder and an in-process index destination (HTML extraction,
// bleve indexing, persistence) and reports documents per second.
func BenchmarkFeedIndex(b *testing.B) {
	const docs, size = 10000, 5 << 10
	r := rand.New(rand.NewPCG(1, 2))
	ops := make([]Operation, docs)
	for i := range ops {
		ops[i] = Operation{Kind: Add, URI: fmt.Sprintf("http://site%d.bench/page/%d", i%50, i), MIME: "text/html",
			Content: syntheticHTML(r, i, size)}
	}
	b.ResetTimer()
	var total time.Duration
	for range b.N {
		b.StopTimer()
		dir := b.TempDir()
		ob, err := OpenOutbox(filepath.Join(dir, "outbox"), OutboxOptions{})
		if err != nil {
			b.Fatal(err)
		}
		idx := newIndex(b, filepath.Join(dir, "index"))
		f, err := NewFeeder(ob, []Target{{Name: "bench", Collection: "web", Primary: true}}, IndexDialer(idx),
			FeederOptions{BatchOps: 200, Window: 4})
		if err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		b.StartTimer()
		start := time.Now()
		go func() { done <- f.Run(ctx) }()
		for i := 0; i < docs; i += 100 {
			if err := f.Feed(ctx, ops[i:i+100]...); err != nil {
				b.Fatal(err)
			}
		}
		for ob.Pending("bench") > 0 {
			time.Sleep(time.Millisecond)
		}
		total += time.Since(start)
		b.StopTimer()
		cancel()
		<-done
		if n, err := idx.Count(); err != nil || n != docs {
			b.Fatalf("index has %d documents (%v)", n, err)
		}
		idx.Close()
		ob.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(docs*b.N)/total.Seconds(), "docs/s")
}
