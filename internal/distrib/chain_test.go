package distrib_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/distrib"
	"github.com/trawl/trawl/internal/distrib/indexer"
	"github.com/trawl/trawl/internal/distrib/nameserver"
	"github.com/trawl/trawl/internal/distrib/wire"
	"github.com/trawl/trawl/internal/feed"
	"github.com/trawl/trawl/internal/index"
	"github.com/trawl/trawl/internal/testenv"
)

type proc struct {
	cancel func()
	done   chan error
}

func (p *proc) stop(t testing.TB) {
	if p.cancel == nil {
		return
	}
	p.cancel()
	if err := <-p.done; err != nil {
		t.Error(err)
	}
	p.cancel = nil
}

// testLog logs to stderr with DISTRIB_LOG=1.
func testLog() *slog.Logger {
	if os.Getenv("DISTRIB_LOG") == "" {
		return nil
	}
	return slog.New(slog.NewTextHandler(os.Stderr, nil))
}

func run(r interface{ Run(context.Context) error }) *proc {
	ctx, cancel := context.WithCancel(context.Background())
	p := &proc{cancel: cancel, done: make(chan error, 1)}
	go func() { p.done <- r.Run(ctx) }()
	return p
}

type chain struct {
	t      testing.TB
	ns     string
	cds    map[int64]*proc
	cdSrv  map[int64]*distrib.Server
	cdBase map[int64]int
	ixs    []*proc
	ixDirs []string
	ixBase []int
	ping   time.Duration // the distributors' timers (300 ms if 0)
	batch  int           // operations per batch of the feeder (10 if 0)
}

func (c *chain) reg() nameserver.Registry {
	return nameserver.NewClient(c.ns, &wire.Client{Timeout: 3 * time.Second})
}

func (c *chain) startCD(id int64) {
	t := c.t
	if c.cdBase[id] == 0 {
		c.cdBase[id] = testenv.FreeBasePort(t, wire.PortInternal, wire.PortExternal)
	}
	ping := c.ping
	if ping == 0 {
		ping = 300 * time.Millisecond
	}
	s, err := distrib.NewServer(distrib.ServerConfig{
		Config: distrib.Config{NodeID: id, Host: "127.0.0.1", BasePort: c.cdBase[id], Collections: []string{"web"},
			CheckMaster: ping, PingMaster: ping},
		Listen: "127.0.0.1", Registry: c.reg(), Logger: testLog(),
	})
	if err != nil {
		t.Fatal(err)
	}
	c.cdSrv[id] = s
	c.cds[id] = run(s)
}

func (c *chain) startIndexer(i, n int) {
	t := c.t
	for len(c.ixs) <= i {
		c.ixs = append(c.ixs, nil)
		c.ixDirs = append(c.ixDirs, t.TempDir())
		c.ixBase = append(c.ixBase, testenv.FreeBasePort(t, indexer.PortOffset))
	}
	s, err := indexer.NewServer(indexer.ServerConfig{Listen: "127.0.0.1", Host: "127.0.0.1", BasePort: c.ixBase[i], Dir: c.ixDirs[i],
		Partition: i, Partitions: n, Registry: c.reg(), RebindInterval: 200 * time.Millisecond, Logger: testLog()})
	if err != nil {
		t.Fatal(err)
	}
	c.ixs[i] = run(s)
}

func newChain(t testing.TB, cds, ixs int) *chain {
	ns, err := nameserver.NewServer(nameserver.ServerConfig{Listen: "127.0.0.1:0", Dir: t.TempDir(), PingInterval: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	nsp := run(ns)
	c := &chain{t: t, ns: ns.Addr(), cds: map[int64]*proc{}, cdSrv: map[int64]*distrib.Server{}, cdBase: map[int64]int{}}
	for i := 0; i < ixs; i++ {
		c.startIndexer(i, ixs)
	}
	for id := int64(1); id <= int64(cds); id++ {
		c.startCD(id)
	}
	t.Cleanup(func() {
		for _, p := range c.cds {
			p.stop(t)
		}
		for _, p := range c.ixs {
			p.stop(t)
		}
		nsp.stop(t)
	})
	return c
}

func (c *chain) master() (int64, bool) {
	var m int64 = -1
	for id, s := range c.cdSrv {
		if c.cds[id].cancel == nil {
			continue
		}
		st, err := s.Status(context.Background())
		if err != nil {
			c.t.Fatal(err)
		}
		if st.Role == distrib.Master {
			if m >= 0 {
				return 0, false
			}
			m = id
		}
	}
	return m, m >= 0
}

func waitFor(t testing.TB, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// checkIndexers stops the indexers and checks that together they hold
// exactly want, each document in one partition only.
func (c *chain) checkIndexers(want []string) {
	t := c.t
	for _, p := range c.ixs {
		p.stop(t)
	}
	where := map[string]int{}
	total := uint64(0)
	for i, dir := range c.ixDirs {
		ix, err := index.Open(filepath.Join(dir, "index"), index.Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		n, _ := ix.Count()
		total += n
		for _, u := range want {
			got, err := ix.Lookup(context.Background(), "web", u)
			if err != nil {
				t.Fatal(err)
			}
			if got.Found {
				where[u]++
				if p := distrib.Partition(u, len(c.ixDirs)); p != i {
					t.Errorf("%s in partition %d, its hash says %d", u, i, p)
				}
			}
		}
		ix.Close()
	}
	if total != uint64(len(want)) {
		t.Errorf("the indexers hold %d documents, want %d", total, len(want))
	}
	for _, u := range want {
		if where[u] != 1 {
			t.Errorf("%s is in %d partitions", u, where[u])
		}
	}
}

// filler makes a document's text about 1 KiB.
var filler = strings.Repeat(" harbour lantern meadow copper violin orchard", 22)

func feedDocs(t testing.TB, c *chain, n int, during func(acked int)) []string {
	ob, err := feed.OpenOutbox(t.TempDir(), feed.OutboxOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ob.Close()
	cl := distrib.NewClient(c.reg(), testLog())
	defer cl.Close()
	target := feed.Target{Name: "default:web", Collection: "web", Primary: true}
	acked := make(chan feed.Result, n)
	batch := c.batch
	if batch == 0 {
		batch = 10
	}
	f, err := feed.NewFeeder(ob, []feed.Target{target}, cl.Dial, feed.FeederOptions{BatchOps: batch, Window: 4,
		Logger: testLog(), MinBackoff: 50 * time.Millisecond, MaxBackoff: 300 * time.Millisecond, OnResult: func(r feed.Result) { acked <- r }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	defer func() { cancel(); <-done }()
	var want []string
	for i := 0; i < n; i++ {
		u := fmt.Sprintf("http://site%d.example/page%d", i%7, i)
		want = append(want, u)
		op := feed.Operation{Kind: feed.Add, Destination: target.Name, Collection: "web", URI: u, MIME: "text/html",
			Title: "page " + strconv.Itoa(i), Text: "words of page " + strconv.Itoa(i) + filler}
		if err := f.Feed(ctx, op); err != nil {
			t.Fatal(err)
		}
	}
	got := 0
	timeout := time.After(60*time.Second + time.Duration(n)*20*time.Millisecond)
	for got < n {
		select {
		case r := <-acked:
			if r.Err != nil {
				t.Fatalf("operation %s rejected: %v", r.URI, r.Err)
			}
			got++
			if during != nil {
				during(got)
			}
		case <-timeout:
			t.Fatalf("only %d of %d operations acknowledged", got, n)
		}
	}
	waitFor(t, "the outbox to empty", 10*time.Second, func() bool { return ob.Pending(target.Name) == 0 && ob.Claimed() == 0 })
	return want
}

// TestChain: a name server, three distributors and two indexer partitions
// in one process over loopback TCP; a feeder with the distrib client as
// its dialer: every operation acknowledged, the two partitions together
// hold every document exactly once, in the partition of its URI hash;
// the indexer.Searcher of the search page merges both: the total, hits
// from both partitions best first, a later page scoring as that part of a
// longer one, facets adding up.
func TestChain(t *testing.T) {
	c := newChain(t, 3, 2)
	waitFor(t, "a master", 10*time.Second, func() bool { _, ok := c.master(); return ok })
	want := feedDocs(t, c, 150, nil)

	s := indexer.Searcher{Registry: c.reg(), Client: &wire.Client{}}
	ctx := context.Background()
	all, err := s.Search(ctx, "words", index.SearchOptions{Collection: "web", Size: 100, Facets: true})
	if err != nil || all.Total != 150 || len(all.Hits) != 100 {
		t.Fatalf("Searcher: %v, %+v", err, all)
	}
	inPart := [2]int{}
	for i, h := range all.Hits {
		inPart[distrib.Partition(h.URL, 2)]++
		if i > 0 && h.Score > all.Hits[i-1].Score {
			t.Errorf("hit %d (%s, %v) scores above hit %d (%v)", i, h.URL, h.Score, i-1, all.Hits[i-1].Score)
		}
	}
	if inPart[0] == 0 || inPart[1] == 0 {
		t.Errorf("hits by partition %v: want both", inPart)
	}
	sum := 0
	for _, f := range all.Types {
		sum += f.Count
	}
	if sum != 150 {
		t.Errorf("type facets %+v add up to %d, want 150", all.Types, sum)
	}
	page, err := s.Search(ctx, "words", index.SearchOptions{Collection: "web", From: 40, Size: 20})
	if err != nil || page.Total != 150 || len(page.Hits) != 20 {
		t.Fatalf("page 40-60: %v, %+v", err, page)
	}
	// Documents of equal score may come in another order from one query
	// to the next (bleve's segments merge meanwhile): the scores agree.
	for i, h := range page.Hits {
		if h.Score != all.Hits[40+i].Score {
			t.Errorf("page hit %d scores %v, hit %d of the long page %v", i, h.Score, 40+i, all.Hits[40+i].Score)
		}
	}
	c.checkIndexers(want)
}

// TestChainMasterDies: the master distributor stops in the middle of the
// feed; a backup takes over, the client's sessions are recreated through
// it and what had no callback is sent again; the index still ends with
// every document exactly once. An indexer is stopped and restarted in the
// middle too.
func TestChainMasterDies(t *testing.T) {
	c := newChain(t, 3, 2)
	waitFor(t, "a master", 10*time.Second, func() bool { _, ok := c.master(); return ok })
	first, _ := c.master()
	want := feedDocs(t, c, 300, func(acked int) {
		switch acked {
		case 60:
			c.cds[first].stop(t)
		case 150:
			c.ixs[1].stop(t)
			go func() {
				time.Sleep(300 * time.Millisecond)
				c.startIndexer(1, 2)
			}()
		}
	})
	// The feed can end before the takeover (sessions placed on the
	// backups go on without a master): wait for it.
	waitFor(t, "a backup to take over from the stopped master", 30*time.Second, func() bool {
		m, ok := c.master()
		return ok && m != first
	})
	c.checkIndexers(want)
}
