package main

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/distrib"
	"github.com/trawl/trawl/internal/distrib/etcdreg"
	"github.com/trawl/trawl/internal/distrib/etcdreg/etcdtest"
	"github.com/trawl/trawl/internal/distrib/indexer"
	"github.com/trawl/trawl/internal/distrib/nameserver"
	"github.com/trawl/trawl/internal/distrib/wire"
	"github.com/trawl/trawl/internal/feed"
	"github.com/trawl/trawl/internal/index"
	"github.com/trawl/trawl/internal/testenv"
	"github.com/trawl/trawl/internal/testenv/testproc"
)

// distribBinary is the trawl binary the process tests run, built once
// without the race detector (the distributors' code runs under it in
// internal/distrib's own tests): a crawl under the detector is about six
// times slower.
var distribBinary = &testproc.Binary{Prefix: "trawl-bin-"}

func trawlBinary(t *testing.T) string {
	t.Helper()
	return distribBinary.Path(t)
}

// startDistribRole starts one trawl role as a separate process, so that
// it can be killed with SIGKILL (as it is when the test ends).
func startDistribRole(t *testing.T, args ...string) *testproc.Proc {
	t.Helper()
	return testproc.Start(t, trawlBinary(t), 0, args...)
}

// waitRoleLine waits for a line of p's output matching re and returns its
// first group.
func waitRoleLine(p *testproc.Proc, re *regexp.Regexp) string {
	return p.WaitLine(re, 30*time.Second)[1]
}

// distribChain is a name server, distributors and indexers, each its own
// process, with short timers.
type distribChain struct {
	t        *testing.T
	ns       string
	registry []string // --nameserver ADDR or --registry URL
	nsProc   *testproc.Proc
	cds      map[int]*testproc.Proc
	cdBase   map[int]int
	ixs      []*testproc.Proc
	ixBase   []int
	ixData   []string
	cl       *wire.Client
}

const distribPing = "300ms"

func newDistribChain(t *testing.T, etcdURL string) *distribChain {
	c := &distribChain{t: t, cds: map[int]*testproc.Proc{}, cdBase: map[int]int{}, cl: &wire.Client{Timeout: 3 * time.Second}}
	t.Cleanup(func() { c.cl.Close() })
	if etcdURL != "" {
		c.registry = []string{"--registry", etcdURL}
		return c
	}
	c.nsProc = startDistribRole(t, "nameserver", "--listen", "127.0.0.1:0", "--data", t.TempDir(), "--ping-interval", distribPing)
	c.ns = waitRoleLine(c.nsProc, regexp.MustCompile(`nameserver listening on (\S+)`))
	c.registry = []string{"--nameserver", c.ns}
	return c
}

func (c *distribChain) startCD(id int) *testproc.Proc {
	if c.cdBase[id] == 0 {
		c.cdBase[id] = testenv.FreeBasePort(c.t, wire.PortInternal, wire.PortExternal)
	}
	p := startDistribRole(c.t, append([]string{"distributor", "--id", strconv.Itoa(id), "--base-port", strconv.Itoa(c.cdBase[id]),
		"--host", "127.0.0.1", "--listen", "127.0.0.1", "--ping-master", distribPing, "--check-master", distribPing,
		"--collection", "demo", "--log-level", "info"}, c.registry...)...)
	c.cds[id] = p
	return p
}

func (c *distribChain) startIndexer(i, n int) *testproc.Proc {
	for len(c.ixs) <= i {
		c.ixs = append(c.ixs, nil)
		c.ixBase = append(c.ixBase, testenv.FreeBasePort(c.t, indexer.PortOffset))
		c.ixData = append(c.ixData, c.t.TempDir())
	}
	p := startDistribRole(c.t, append([]string{"indexer", "--partition", strconv.Itoa(i), "--partitions", strconv.Itoa(n),
		"--base-port", strconv.Itoa(c.ixBase[i]), "--host", "127.0.0.1", "--listen", "127.0.0.1", "--data", c.ixData[i],
		"--rebind", distribPing}, c.registry...)...)
	waitRoleLine(p, regexp.MustCompile(`indexer partition \d+ of \d+ listening on (\S+)`))
	c.ixs[i] = p
	return p
}

func (c *distribChain) cdAddr(id int) string {
	return "127.0.0.1:" + strconv.Itoa(c.cdBase[id]+wire.PortInternal)
}

// masters returns the distributors whose session_factory answers __ping:
// only a master's does.
func (c *distribChain) masters() []int {
	var out []int
	for id, p := range c.cds {
		select {
		case <-p.Done():
			continue
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, err := c.cl.Call(ctx, c.cdAddr(id), wire.IfaceSessionFactory, wire.MethodPing)
		cancel()
		if err == nil {
			out = append(out, id)
		}
	}
	return out
}

// waitMaster waits until exactly one distributor is master and it is the
// one the registry names; it returns its id.
func (c *distribChain) waitMaster(reg nameserver.Registry, not int) int {
	c.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		ms := c.masters()
		if len(ms) == 1 && ms[0] != not {
			a, err := reg.Resolve(context.Background(), wire.NameDispatcher, wire.IfaceSessionFactory, wire.VersionSessionFactory)
			if err == nil && a.Addr() == c.cdAddr(ms[0]) {
				return ms[0]
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	var logs strings.Builder
	for id, p := range c.cds {
		fmt.Fprintf(&logs, "--- distributor %d\n%s", id, p.Log())
	}
	c.t.Fatalf("no single master (other than %d): %v\n%s", not, c.masters(), logs.String())
	return 0
}

func (c *distribChain) reg() nameserver.Registry { return nameserver.NewClient(c.ns, c.cl) }

// indexerDocs stops the indexers and returns, per URI of collection coll
// found among want, how many partitions hold it, and the total count.
func (c *distribChain) indexerDocs(coll string, want []string) (map[string]int, uint64) {
	t := c.t
	for _, p := range c.ixs {
		p.Stop(20 * time.Second)
	}
	where := map[string]int{}
	var total uint64
	for i, dir := range c.ixData {
		ix, err := index.Open(filepath.Join(dir, "indexer", "index"), index.Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		n, _ := ix.Count()
		total += n
		for _, u := range want {
			got, err := ix.Lookup(context.Background(), coll, u)
			if err != nil {
				t.Fatal(err)
			}
			if got.Found {
				where[u]++
				if p := distrib.Partition(u, len(c.ixData)); p != i {
					t.Errorf("%s is in partition %d, its hash says %d", u, i, p)
				}
			}
		}
		ix.Close()
	}
	return where, total
}

func (c *distribChain) checkExactlyOnce(coll string, want []string) {
	t := c.t
	where, total := c.indexerDocs(coll, want)
	if total != uint64(len(want)) {
		t.Errorf("the indexers hold %d documents together; want %d", total, len(want))
	}
	bad := 0
	for _, u := range want {
		if where[u] != 1 {
			if bad++; bad <= 10 {
				t.Errorf("%s is held by %d partitions", u, where[u])
			}
		}
	}
}

func (c *distribChain) indexerCount(i int) int64 {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	f, err := c.cl.Call(ctx, "127.0.0.1:"+strconv.Itoa(c.ixBase[i]+indexer.PortOffset), indexer.Object, "count")
	if err != nil {
		return -1
	}
	return f.Arg(0).I
}

// startCDs starts distributors 1..n at the same instant.
func (c *distribChain) startCDs(n int) {
	for id := 1; id <= n; id++ {
		c.cdBase[id] = testenv.FreeBasePort(c.t, wire.PortInternal, wire.PortExternal)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	for id := 1; id <= n; id++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := startDistribRole(c.t, append([]string{"distributor", "--id", strconv.Itoa(id), "--base-port", strconv.Itoa(c.cdBase[id]),
				"--host", "127.0.0.1", "--listen", "127.0.0.1", "--ping-master", distribPing, "--check-master", distribPing,
				"--collection", "demo", "--log-level", "info"}, c.registry...)...)
			mu.Lock()
			c.cds[id] = p
			mu.Unlock()
		}()
	}
	wg.Wait()
}

// TestDistribCrawlKillMaster: a name server, three distributors (started
// at the same instant: exactly one becomes master) and two indexer
// partitions, each a separate process, fed by `trawl run --demo
// --nameserver` crawling a synthetic web of 50 sites. The master is killed
// with SIGKILL mid-feed: a backup takes over after its missed pings, the
// crawl's sessions are recreated through it, and at the end the two
// indexers together hold exactly the crawl store's indexable documents,
// each once, in the partition of its URI hash. The old master, restarted,
// becomes a backup.
func TestDistribCrawlKillMaster(t *testing.T) {
	c := newDistribChain(t, "")
	c.startIndexer(0, 2)
	c.startIndexer(1, 2)
	c.startCDs(3)
	reg := c.reg()
	first := c.waitMaster(reg, 0)
	data := t.TempDir()
	const hosts, pages = 50, 4
	crawl := startDistribRole(t, "run", "--demo", "--data", data, "--demo-hosts", strconv.Itoa(hosts), "--demo-pages", strconv.Itoa(pages),
		"--nameserver", c.ns, "--listen", "off", "--progress", "off", "--workers", "16")
	deadline := time.Now().Add(120 * time.Second)
	for c.indexerCount(0)+c.indexerCount(1) < 20 {
		if time.Now().After(deadline) {
			t.Fatalf("no documents reached the indexers:\n%s", crawl.Log())
		}
		time.Sleep(20 * time.Millisecond)
	}
	killed := time.Now()
	c.cds[first].Kill()
	second := c.waitMaster(reg, first)
	t.Logf("master %d killed; %d took over after %v", first, second, time.Since(killed).Round(time.Millisecond))
	select {
	case <-crawl.Done():
	case <-time.After(240 * time.Second):
		t.Fatalf("the crawl did not end:\n%s", crawl.Log())
	}
	if crawl.Err() != nil || !strings.Contains(crawl.Log(), " 0 operations waiting") {
		t.Fatalf("trawl run: %v\n%s", crawl.Err(), crawl.Log())
	}
	// The old master comes back: a backup of the new one.
	c.startCD(first)
	time.Sleep(1500 * time.Millisecond)
	if m := c.waitMaster(reg, 0); m != second {
		t.Errorf("after the old master %d came back, the master is %d, want %d", first, m, second)
	}
	if !strings.Contains(c.cds[first].Log(), "I am a backup") {
		t.Errorf("the restarted old master did not become a backup:\n%s", c.cds[first].Log())
	}
	want, _, _ := indexableDocs(t, data, demoFarm(t, data, hosts, pages))
	if len(want) < 200 {
		t.Fatalf("only %d indexable documents", len(want))
	}
	c.checkExactlyOnce("demo", want)
}

// waitRegistered waits until master's log shows every running distributor
// registered with it (register_dispatcher, 3.1.4.1), so that the sessions
// created next can be placed on backups too.
func (c *distribChain) waitRegistered(master int) {
	c.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		missing := []int{}
		for id := range c.cds {
			re := regexp.MustCompile(fmt.Sprintf(`dispatcher registered" node=%d registrant=%d `, master, id))
			if !re.MatchString(c.cds[master].Log()) {
				missing = append(missing, id)
			}
		}
		if len(missing) == 0 {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("distributors %v did not register with the master %d:\n%s", missing, master, c.cds[master].Log())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// sessionsOn returns the session ids distributor id holds.
func (c *distribChain) sessionsOn(id int) int {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	f, err := c.cl.Call(ctx, c.cdAddr(id), wire.IfaceDispatcherNode, "get_sessions")
	if err != nil {
		return -1
	}
	return len(f.Arg(0).L)
}

// TestDistribFaults: three content sessions (three feeding targets) spread
// over three distributor processes, two indexer processes. A backup
// holding a session is killed with SIGKILL, then an indexer, which is
// restarted; the feeder keeps every operation until its callback, so the
// indexers end with every document exactly once.
func TestDistribFaults(t *testing.T) {
	c := newDistribChain(t, "")
	c.startIndexer(0, 2)
	c.startIndexer(1, 2)
	c.startCDs(3)
	reg := c.reg()
	master := c.waitMaster(reg, 0)
	c.waitRegistered(master) // else every session may go to the master

	ob, err := feed.OpenOutbox(t.TempDir(), feed.OutboxOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ob.Close()
	cl := distrib.NewClient(reg, nil)
	defer cl.Close()
	targets := []feed.Target{{Name: "a", Collection: "demo", Primary: true}, {Name: "b", Collection: "demo", Primary: true}, {Name: "c", Collection: "demo", Primary: true}}
	// The feeder sends every operation to each of the three targets (three
	// sessions): 3*n callbacks.
	const n = 300
	const calls = 3 * n
	acked := make(chan feed.Result, calls)
	f, err := feed.NewFeeder(ob, targets, cl.Dial, feed.FeederOptions{BatchOps: 10, Window: 2,
		MinBackoff: 50 * time.Millisecond, MaxBackoff: 500 * time.Millisecond, OnResult: func(r feed.Result) { acked <- r }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	defer func() { cancel(); <-done }()
	var want []string
	for i := 0; i < n; i++ {
		u := fmt.Sprintf("http://site%02d.example/doc%d", i%50, i)
		want = append(want, u)
		op := feed.Operation{Kind: feed.Add, Collection: "demo", URI: u, MIME: "text/html",
			Title: "document " + strconv.Itoa(i), Text: "text of document " + strconv.Itoa(i)}
		if err := f.Feed(ctx, op); err != nil {
			t.Fatal(err)
		}
	}
	got := 0
	timeout := time.After(180 * time.Second)
	backupKilled, indexerKilled := false, false
	restarted := make(chan struct{})
	for got < calls {
		select {
		case r := <-acked:
			if r.Err != nil {
				t.Fatalf("%s rejected: %v", r.URI, r.Err)
			}
			got++
		case <-timeout:
			t.Fatalf("only %d of %d callbacks", got, calls)
		}
		if !backupKilled && got >= calls/5 {
			for id := range c.cds {
				if id != master && c.sessionsOn(id) > 0 {
					t.Logf("killing backup %d holding sessions after %d callbacks", id, got)
					c.cds[id].Kill()
					backupKilled = true
					break
				}
			}
		}
		if backupKilled && !indexerKilled && got >= calls/2 {
			t.Logf("killing indexer 1 after %d callbacks", got)
			c.ixs[1].Kill()
			indexerKilled = true
			go func() { c.startIndexer(1, 2); close(restarted) }()
		}
	}
	if !backupKilled || !indexerKilled {
		t.Fatalf("the faults did not happen (backup killed %v, indexer killed %v)", backupKilled, indexerKilled)
	}
	<-restarted // the restarted indexer is in c.ixs before the chain is read
	if m := c.waitMaster(reg, 0); m != master {
		t.Errorf("the master changed from %d to %d", master, m)
	}
	c.checkExactlyOnce("demo", want)
}

// TestDistribBadInput: garbage on every listener (name server,
// distributor base+390 and base+391, indexer) closes that connection and
// the process keeps serving; a session for an unknown collection raises
// processing::unknown_collection and a non-zero feeding priority
// core::unsupported_guarantee_set, from the master's session factory as
// from a dispatcher_node.
func TestDistribBadInput(t *testing.T) {
	c := newDistribChain(t, "")
	c.startIndexer(0, 1)
	c.startCDs(1)
	reg := c.reg()
	m := c.waitMaster(reg, 0)
	listeners := []string{c.ns, c.cdAddr(m), "127.0.0.1:" + strconv.Itoa(c.cdBase[m]+wire.PortExternal), "127.0.0.1:" + strconv.Itoa(c.ixBase[0]+indexer.PortOffset)}
	for _, addr := range listeners {
		for _, junk := range []string{"GET / HTTP/1.0\r\n\r\n", "DF\x01\x01\xff\xff\xff\xff", "DF\x01\x01\x00\x00\x00\x03\x01\x00\xff"} {
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			conn.Write([]byte(junk))
			conn.SetReadDeadline(time.Now().Add(5 * time.Second))
			if n, err := conn.Read(make([]byte, 64)); err == nil {
				t.Errorf("%s answered garbage %q with %d bytes", addr, junk, n)
			}
			conn.Close()
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		if _, err := c.cl.Call(ctx, addr, "anything", wire.MethodPing); err != nil && !wire.IsException(err, wire.ExcBadRequest) {
			t.Errorf("%s after garbage: %v", addr, err)
		}
		cancel()
	}
	ctx := context.Background()
	sf := c.cdAddr(m)
	if _, err := c.cl.Call(ctx, sf, wire.IfaceSessionFactory, "create", wire.Str("nope"), wire.GuaranteeSet(0), wire.I64(0)); !wire.IsException(err, wire.ExcUnknownCollection) {
		t.Errorf("unknown collection at the master: %v", err)
	}
	if _, err := c.cl.Call(ctx, sf, wire.IfaceSessionFactory, "create", wire.Str("demo"), wire.GuaranteeSet(5), wire.I64(0)); !wire.IsException(err, wire.ExcUnsupportedGuarantees) {
		t.Errorf("feeding priority 5 at the master: %v", err)
	}
	if _, err := c.cl.Call(ctx, sf, wire.IfaceDispatcherNode, "create", wire.I64(1), wire.Str("demo"), wire.GuaranteeSet(0), wire.I64(1), wire.Bln(true)); !wire.IsException(err, wire.ExcUnsupportedGuarantees) {
		t.Errorf("priority 1 at the dispatcher_node: %v", err)
	}
	// Still serving: a real session.
	f, err := c.cl.Call(ctx, sf, wire.IfaceSessionFactory, "create", wire.Str("demo"), wire.GuaranteeSet(0), wire.I64(0))
	if err != nil {
		t.Fatalf("create after the bad input: %v", err)
	}
	if a, err := wire.ParseAOR(f.Arg(0)); err != nil || a.Port != c.cdBase[m]+wire.PortExternal {
		t.Errorf("session %v %v", a, err)
	}
	// trawl distributors shows the master, its session and the indexer.
	code, out, errOut := runTrawl(t, "", "distributors", "--nameserver", c.ns)
	if code != 0 || !strings.Contains(out, "master "+c.cdAddr(m)) ||
		!regexp.MustCompile(`distributor \d+ \S+ master sessions 1 operations-in-flight 0 load 1`).MatchString(out) ||
		!strings.Contains(out, "indexer partition 0 of 1") {
		t.Errorf("trawl distributors: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, p := range []*testproc.Proc{c.nsProc, c.cds[m], c.ixs[0]} {
		select {
		case <-p.Done():
			t.Errorf("trawl %s exited: %v\n%s", p.Args[0], p.Err(), p.Log())
		default:
		}
	}
}

// TestDistribEtcdTakeover: three distributor processes with etcd (Debian's
// etcd-server, started on loopback) as the registry: one master; killed
// with SIGKILL, a backup takes over after its missed pings; restarted, the
// old master becomes a backup.
func TestDistribEtcdTakeover(t *testing.T) {
	ep := etcdtest.Start(t)
	c := newDistribChain(t, "etcd://"+ep)
	c.startCDs(3)
	reg, err := etcdreg.New([]string{"http://" + ep}, etcdreg.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	first := c.waitMaster(reg, 0)
	killed := time.Now()
	c.cds[first].Kill()
	second := c.waitMaster(reg, first)
	t.Logf("master %d killed; %d took over after %v", first, second, time.Since(killed).Round(time.Millisecond))
	c.startCD(first)
	time.Sleep(1500 * time.Millisecond)
	if m := c.waitMaster(reg, 0); m != second {
		t.Errorf("after the old master %d came back, the master is %d, want %d", first, m, second)
	}
	if !strings.Contains(c.cds[first].Log(), "I am a backup") {
		t.Errorf("the restarted old master did not become a backup:\n%s", c.cds[first].Log())
	}
}
