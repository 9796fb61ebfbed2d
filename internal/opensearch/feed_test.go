package opensearch

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/feed"
	"github.com/trawl/trawl/internal/testenv"
)

// feedRig is a feeder over a durable outbox feeding one OpenSearch index,
// as trawl run's node scheduler runs one.
type feedRig struct {
	c      *Client
	ob     *feed.Outbox
	f      *feed.Feeder
	log    *testenv.Buffer
	target string
	cancel context.CancelFunc
	done   chan struct{}
}

const rigCollection = "c"

func newFeedRig(t *testing.T, url string) *feedRig {
	t.Helper()
	r := &feedRig{log: &testenv.Buffer{}, target: feed.DefaultTargetName(rigCollection), done: make(chan struct{})}
	log := slog.New(slog.NewTextHandler(r.log, &slog.HandlerOptions{Level: slog.LevelInfo}))
	var err error
	if r.c, err = New(url, Options{Logger: log}); err != nil {
		t.Fatal(err)
	}
	if r.ob, err = feed.OpenOutbox(t.TempDir(), feed.OutboxOptions{}); err != nil {
		t.Fatal(err)
	}
	targets := []feed.Target{{Name: r.target, Collection: rigCollection, Primary: true}}
	r.f, err = feed.NewFeeder(r.ob, targets, r.c.Dial, feed.FeederOptions{
		BatchOps: 200, MinBackoff: 50 * time.Millisecond, MaxBackoff: 500 * time.Millisecond, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go func() {
		defer close(r.done)
		r.f.Run(ctx)
	}()
	t.Cleanup(func() {
		r.cancel()
		<-r.done
		r.ob.Close()
		r.c.Close()
		if t.Failed() {
			t.Logf("feeder log:\n%s", tail([]byte(r.log.String()), 4000))
		}
	})
	return r
}

// pageURI is the URI of synthetic page i.
func pageURI(i int) string { return fmt.Sprintf("http://site%d.farm.test/page/%d.html", i%7, i) }

func addOp(i int) feed.Operation {
	return feed.Operation{Kind: feed.Add, URI: pageURI(i), MIME: "text/html; charset=utf-8",
		Title: fmt.Sprintf("Page %d of the feeding test", i),
		Text:  fmt.Sprintf("Page %d of the feeding test. Words of page %d: lantern harbour %d.", i, i, i*7)}
}

func (r *feedRig) feedRange(t *testing.T, kind feed.Kind, from, to int) {
	t.Helper()
	ops := make([]feed.Operation, 0, to-from)
	for i := from; i < to; i++ {
		op := addOp(i)
		op.Kind = kind
		ops = append(ops, op)
	}
	if err := r.f.Feed(context.Background(), ops...); err != nil {
		t.Fatal(err)
	}
}

func (r *feedRig) stats() feed.TargetStats { return r.f.Stats()[0] }

// waitDrained waits until the outbox holds nothing for the target.
func (r *feedRig) waitDrained(t *testing.T, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for r.ob.Pending(r.target) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("feeding not done after %v: %+v", d, r.stats())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitLog waits until the feeder's log holds s.
func (r *feedRig) waitLog(t *testing.T, s string, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !strings.Contains(r.log.String(), s) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q in the log after %v", s, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// checkDocs checks that index idx holds the pages [0,n) but those in gone,
// each exactly once.
func checkDocs(t *testing.T, c *cluster, idx string, n int, gone map[int]bool) {
	t.Helper()
	got := c.docs(t, idx)
	bad := 0
	for i := 0; i < n; i++ {
		want := 1
		if gone[i] {
			want = 0
		}
		if got[pageURI(i)] != want {
			if bad++; bad <= 10 {
				t.Errorf("%s is in the index %d times, want %d", pageURI(i), got[pageURI(i)], want)
			}
		}
	}
	if want := n - len(gone); len(got) != want {
		t.Errorf("index %s holds %d URLs, want %d", idx, len(got), want)
	}
}

// TestFeedKillNode feeds 2,000 pages and then removes 200 of them while
// the data node n2 is killed with SIGKILL mid-feed and restarted: every
// operation arrives, none twice, and the removed pages are gone.
func TestFeedKillNode(t *testing.T) {
	c := clusterFor(t)
	const idx, n = "killed", 2000
	c.must(t, "PUT", "/"+idx, map[string]any{"settings": map[string]any{"number_of_shards": 2, "number_of_replicas": 1}}, nil)
	defer c.call(context.Background(), 0, "DELETE", "/"+idx, nil, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := c.waitGreen(ctx); err != nil {
		t.Fatal(err)
	}
	r := newFeedRig(t, c.url(idx))
	fed := make(chan struct{})
	go func() {
		defer close(fed)
		for i := 0; i < n; i += 50 {
			r.feedRange(t, feed.Add, i, i+50)
			time.Sleep(5 * time.Millisecond)
		}
	}()
	deadline := time.Now().Add(time.Minute)
	for r.stats().Acked < n/4 {
		if time.Now().After(deadline) {
			t.Fatalf("no progress: %+v", r.stats())
		}
		time.Sleep(5 * time.Millisecond)
	}
	n2 := c.nodes[1]
	acked := r.stats().Acked
	c.kill(n2)
	t.Logf("killed n2 after %d operations acknowledged", acked)
	<-fed
	gone := map[int]bool{}
	for i := 0; i < n; i += 10 {
		gone[i] = true
		op := addOp(i)
		op.Kind = feed.Remove
		if err := r.f.Feed(context.Background(), op); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(time.Second)
	if err := c.start(n2); err != nil {
		t.Fatal(err)
	}
	if err := c.waitNodes(ctx, 2); err != nil {
		t.Fatal(err)
	}
	r.waitDrained(t, time.Minute)
	if err := c.waitGreen(ctx); err != nil {
		t.Fatal(err)
	}
	checkDocs(t, c, idx, n, gone)
	t.Logf("feed stats %+v", r.stats())
}

// proxy is a loopback TCP proxy to a node that the tests switch off (the
// destination is unreachable: connection refused) and on.
type proxy struct {
	addr, to string
	mu       sync.Mutex
	ln       net.Listener
	conns    []net.Conn
}

func (p *proxy) up(t *testing.T) {
	t.Helper()
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", p.to)
			if err != nil {
				in.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, in, out)
			p.mu.Unlock()
			go func() { io.Copy(out, in); out.Close() }()
			go func() { io.Copy(in, out); in.Close() }()
		}
	}()
}

func (p *proxy) down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// TestFeedUnreachable feeds an OpenSearch that cannot be reached: the
// dials fail with a clear error, the operations wait in the outbox while
// more are fed (the crawl goes on), and once OpenSearch can be reached
// every operation arrives once.
func TestFeedUnreachable(t *testing.T) {
	c := clusterFor(t)
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{addr: fmt.Sprintf("127.0.0.1:%d", port), to: fmt.Sprintf("127.0.0.1:%d", c.nodes[0].http)}
	defer p.down()
	const idx = "unreachable"
	defer c.call(context.Background(), 0, "DELETE", "/"+idx, nil, nil)
	r := newFeedRig(t, fmt.Sprintf("opensearch://%s/%s", p.addr, idx))
	r.feedRange(t, feed.Add, 0, 50)
	r.waitLog(t, "connection refused", 10*time.Second)
	r.feedRange(t, feed.Add, 50, 100)
	time.Sleep(500 * time.Millisecond)
	if n := r.ob.Pending(r.target); n != 100 {
		t.Fatalf("%d operations wait in the outbox, want 100", n)
	}
	if st := r.stats(); st.Failures == 0 || st.Acked != 0 {
		t.Fatalf("stats while unreachable: %+v", st)
	}
	p.up(t)
	r.waitDrained(t, time.Minute)
	checkDocs(t, c, idx, 100, nil)
	t.Logf("feed stats %+v", r.stats())
}

// TestFeedMappingConflict feeds an index made by hand with a mapping that
// conflicts with trawl's (title an integer): the dial fails with
// OpenSearch's reason, the operations wait; once the index is deleted
// the feeder makes it anew and every operation arrives once.
func TestFeedMappingConflict(t *testing.T) {
	c := clusterFor(t)
	const idx = "conflict"
	c.must(t, "PUT", "/"+idx, map[string]any{"mappings": map[string]any{"properties": map[string]any{"title": map[string]any{"type": "integer"}}}}, nil)
	defer c.call(context.Background(), 0, "DELETE", "/"+idx, nil, nil)
	r := newFeedRig(t, c.url(idx))
	r.feedRange(t, feed.Add, 0, 30)
	r.waitLog(t, "mapper [title] cannot be changed from type [integer] to [text]", 20*time.Second)
	if !strings.Contains(r.log.String(), "mapping conflict") {
		t.Errorf("the log does not say mapping conflict:\n%s", tail([]byte(r.log.String()), 2000))
	}
	if n := r.ob.Pending(r.target); n != 30 {
		t.Fatalf("%d operations wait in the outbox, want 30", n)
	}
	c.must(t, "DELETE", "/"+idx, nil, nil)
	r.waitDrained(t, time.Minute)
	checkDocs(t, c, idx, 30, nil)
}

// TestFeedRefusedDocuments feeds an index with OpenSearch's flood-stage
// block (read_only_allow_delete, what a full disk sets): every document
// is refused with cluster_block_exception, logged, kept in the outbox and
// sent again; once the block is lifted every operation arrives once.
func TestFeedRefusedDocuments(t *testing.T) {
	c := clusterFor(t)
	const idx = "refused"
	r := newFeedRig(t, c.url(idx))
	defer c.call(context.Background(), 0, "DELETE", "/"+idx, nil, nil)
	// A first page makes the session (and the index); the block comes
	// while it is up, so the documents reach _bulk and are refused there
	// (later dials fail on the block too, when they put the mapping).
	r.feedRange(t, feed.Add, 0, 1)
	r.waitDrained(t, time.Minute)
	c.must(t, "PUT", "/"+idx+"/_settings", map[string]any{"index.blocks.read_only_allow_delete": true}, nil)
	r.feedRange(t, feed.Add, 1, 41)
	r.waitLog(t, "cluster_block_exception", 20*time.Second)
	time.Sleep(time.Second)
	if n := r.ob.Pending(r.target); n != 40 {
		t.Fatalf("%d operations wait in the outbox, want 40", n)
	}
	if st := r.stats(); st.Retried == 0 || st.Rejected != 0 || st.Acked != 1 {
		t.Fatalf("stats while blocked: %+v", st)
	}
	if !strings.Contains(r.log.String(), "refused: status 429: cluster_block_exception") {
		t.Errorf("no per-document refusal in the log:\n%s", tail([]byte(r.log.String()), 2000))
	}
	c.must(t, "PUT", "/"+idx+"/_settings", map[string]any{"index.blocks.read_only_allow_delete": nil}, nil)
	r.waitDrained(t, time.Minute)
	checkDocs(t, c, idx, 41, nil)
}
