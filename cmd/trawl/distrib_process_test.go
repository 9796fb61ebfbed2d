package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/distrib"
	"github.com/trawl/trawl/internal/distrib/indexer"
	"github.com/trawl/trawl/internal/distrib/nameserver"
	"github.com/trawl/trawl/internal/distrib/wire"
	"github.com/trawl/trawl/internal/index"
)

// distribBinary is the trawl binary the process tests run, built once
// without the race detector (the distributors' code runs under it in
// internal/distrib's own tests): a crawl under the detector is about six
// times slower.
var distribBinary struct {
	once sync.Once
	path string
	err  error
}

func trawlBinary(t *testing.T) string {
	t.Helper()
	distribBinary.once.Do(func() {
		dir, err := os.MkdirTemp("", "trawl-bin-")
		if err != nil {
			distribBinary.err = err
			return
		}
		distribBinary.path = filepath.Join(dir, "trawl")
		out, err := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", distribBinary.path, ".").CombinedOutput()
		if err != nil {
			distribBinary.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if distribBinary.err != nil {
		t.Fatal(distribBinary.err)
	}
	return distribBinary.path
}

// roleProc is one trawl role running as a separate process, so that it
// can be killed with SIGKILL.
type roleProc struct {
	t    *testing.T
	args []string
	cmd  *exec.Cmd
	mu   sync.Mutex
	out  strings.Builder
	done chan struct{}
	err  error
}

func startDistribRole(t *testing.T, args ...string) *roleProc {
	t.Helper()
	p := &roleProc{t: t, args: args, done: make(chan struct{})}
	p.cmd = exec.Command(trawlBinary(t), args...)
	pr, pw := io.Pipe()
	p.cmd.Stdout, p.cmd.Stderr = pw, pw
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			p.mu.Lock()
			p.out.WriteString(sc.Text() + "\n")
			p.mu.Unlock()
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	go func() {
		p.err = p.cmd.Wait()
		pw.Close()
		close(p.done)
	}()
	t.Cleanup(func() { p.kill() })
	return p
}

func (p *roleProc) log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// waitLine waits for a line of output matching re and returns its first
// group.
func (p *roleProc) waitLine(re *regexp.Regexp) string {
	p.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if m := re.FindStringSubmatch(p.log()); m != nil {
			return m[1]
		}
		select {
		case <-p.done:
			p.t.Fatalf("trawl %s exited (%v):\n%s", p.args[0], p.err, p.log())
		case <-time.After(20 * time.Millisecond):
		}
	}
	p.t.Fatalf("trawl %s: no line matching %s:\n%s", p.args[0], re, p.log())
	return ""
}

// kill sends SIGKILL and waits for the process to end.
func (p *roleProc) kill() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// term stops the process cleanly.
func (p *roleProc) term() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		p.kill()
	}
}

func freeBasePort(t *testing.T, offsets ...int) int {
	t.Helper()
	for range 200 {
		base := 20000 + rand.IntN(30000)
		ok := true
		for _, off := range offsets {
			l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(base+off)))
			if err != nil {
				ok = false
				break
			}
			l.Close()
		}
		if ok {
			return base
		}
	}
	t.Fatal("no free base port")
	return 0
}

// distribChain is a name server, distributors and indexers, each its own
// process, with short timers.
type distribChain struct {
	t        *testing.T
	ns       string
	registry []string // --nameserver ADDR or --registry URL
	nsProc   *roleProc
	cds      map[int]*roleProc
	cdBase   map[int]int
	ixs      []*roleProc
	ixBase   []int
	ixData   []string
	cl       *wire.Client
}

const distribPing = "300ms"

func newDistribChain(t *testing.T, etcdURL string) *distribChain {
	c := &distribChain{t: t, cds: map[int]*roleProc{}, cdBase: map[int]int{}, cl: &wire.Client{Timeout: 3 * time.Second}}
	t.Cleanup(func() { c.cl.Close() })
	if etcdURL != "" {
		c.registry = []string{"--registry", etcdURL}
		return c
	}
	c.nsProc = startDistribRole(t, "nameserver", "--listen", "127.0.0.1:0", "--data", t.TempDir(), "--ping-interval", distribPing)
	c.ns = c.nsProc.waitLine(regexp.MustCompile(`nameserver listening on (\S+)`))
	c.registry = []string{"--nameserver", c.ns}
	return c
}

func (c *distribChain) startCD(id int) *roleProc {
	if c.cdBase[id] == 0 {
		c.cdBase[id] = freeBasePort(c.t, wire.PortInternal, wire.PortExternal)
	}
	p := startDistribRole(c.t, append([]string{"distributor", "--id", strconv.Itoa(id), "--base-port", strconv.Itoa(c.cdBase[id]),
		"--host", "127.0.0.1", "--listen", "127.0.0.1", "--ping-master", distribPing, "--check-master", distribPing,
		"--collection", "demo", "--log-level", "info"}, c.registry...)...)
	c.cds[id] = p
	return p
}

func (c *distribChain) startIndexer(i, n int) *roleProc {
	for len(c.ixs) <= i {
		c.ixs = append(c.ixs, nil)
		c.ixBase = append(c.ixBase, freeBasePort(c.t, indexer.PortOffset))
		c.ixData = append(c.ixData, c.t.TempDir())
	}
	p := startDistribRole(c.t, append([]string{"indexer", "--partition", strconv.Itoa(i), "--partitions", strconv.Itoa(n),
		"--base-port", strconv.Itoa(c.ixBase[i]), "--host", "127.0.0.1", "--listen", "127.0.0.1", "--data", c.ixData[i],
		"--rebind", distribPing}, c.registry...)...)
	p.waitLine(regexp.MustCompile(`indexer partition \d+ of \d+ listening on (\S+)`))
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
		case <-p.done:
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
		fmt.Fprintf(&logs, "--- distributor %d\n%s", id, p.log())
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
		p.term()
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
		c.cdBase[id] = freeBasePort(c.t, wire.PortInternal, wire.PortExternal)
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
			t.Fatalf("no documents reached the indexers:\n%s", crawl.log())
		}
		time.Sleep(20 * time.Millisecond)
	}
	killed := time.Now()
	c.cds[first].kill()
	second := c.waitMaster(reg, first)
	t.Logf("master %d killed; %d took over after %v", first, second, time.Since(killed).Round(time.Millisecond))
	select {
	case <-crawl.done:
	case <-time.After(240 * time.Second):
		t.Fatalf("the crawl did not end:\n%s", crawl.log())
	}
	if crawl.err != nil || !strings.Contains(crawl.log(), " 0 operations waiting") {
		t.Fatalf("trawl run: %v\n%s", crawl.err, crawl.log())
	}
	// The old master comes back: a backup of the new one.
	c.startCD(first)
	time.Sleep(1500 * time.Millisecond)
	if m := c.waitMaster(reg, 0); m != second {
		t.Errorf("after the old master %d came back, the master is %d, want %d", first, m, second)
	}
	if !strings.Contains(c.cds[first].log(), "I am a backup") {
		t.Errorf("the restarted old master did not become a backup:\n%s", c.cds[first].log())
	}
	want, _, _ := indexableDocs(t, data, demoFarm(t, data, hosts, pages))
	if len(want) < 200 {
		t.Fatalf("only %d indexable documents", len(want))
	}
	c.checkExactlyOnce("demo", want)
}
