package clustertest

import (
	"bufio"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/store"
	"github.com/trawl/trawl/internal/testenv/testproc"
	"github.com/trawl/trawl/internal/tlsconf/tlstest"
	"github.com/trawl/trawl/internal/webfarm"
)

// binary is the trawl binary every test runs, built once by TestMain
// (without -race: the processes under test are the heavy part, the test
// process itself may run with -race).
type trawlBinary struct{ path string }

var trawl trawlBinary

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "trawl-clustertest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if trawl.path, err = testproc.Build(dir, false); err != nil {
		fmt.Fprintf(os.Stderr, "clustertest: %v\n", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// proc is one trawl process. Its stderr is kept in memory and searched.
type proc struct {
	t    testing.TB
	name string
	args []string

	mu     sync.Mutex
	cmd    *exec.Cmd
	lines  []string
	notify chan struct{}
	done   chan struct{}
	runs   int
}

func startProc(t testing.TB, name string, args ...string) *proc {
	t.Helper()
	p := &proc{t: t, name: name, args: args}
	p.start()
	t.Cleanup(func() {
		p.kill9()
		if t.Failed() {
			p.dumpTail(60)
		}
	})
	return p
}

func (p *proc) start() {
	p.t.Helper()
	cmd := exec.Command(trawl.path, p.args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		p.t.Fatal(err)
	}
	cmd.Stdout = io.Discard
	if err := cmd.Start(); err != nil {
		p.t.Fatal(err)
	}
	done := make(chan struct{})
	p.mu.Lock()
	p.cmd, p.done = cmd, done
	p.runs++
	run := p.runs
	if p.notify == nil {
		p.notify = make(chan struct{})
	}
	p.lines = append(p.lines, fmt.Sprintf("==== %s run %d: trawl %s", p.name, run, strings.Join(p.args, " ")))
	p.mu.Unlock()
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			p.mu.Lock()
			p.lines = append(p.lines, sc.Text())
			close(p.notify)
			p.notify = make(chan struct{})
			p.mu.Unlock()
		}
		cmd.Wait()
		close(done)
		p.mu.Lock()
		close(p.notify)
		p.notify = make(chan struct{})
		p.mu.Unlock()
	}()
}

// waitLine waits for a line of the current or an earlier run matching re
// after line index from, and returns its submatches.
func (p *proc) waitLine(re *regexp.Regexp, from int, limit time.Duration) []string {
	p.t.Helper()
	deadline := time.Now().Add(limit)
	for {
		p.mu.Lock()
		for _, l := range p.lines[min(from, len(p.lines)):] {
			if m := re.FindStringSubmatch(l); m != nil {
				p.mu.Unlock()
				return m
			}
		}
		ch := p.notify
		p.mu.Unlock()
		left := time.Until(deadline)
		if left <= 0 {
			p.dumpTail(40)
			p.t.Fatalf("%s: no line matching %v within %v", p.name, re, limit)
		}
		select {
		case <-ch:
		case <-time.After(min(left, 500*time.Millisecond)):
		}
	}
}

// mark returns the index of the next line (for waitLine's from).
func (p *proc) mark() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.lines)
}

// has reports whether a line matching re was written since from.
func (p *proc) has(re *regexp.Regexp, from int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, l := range p.lines[min(from, len(p.lines)):] {
		if re.MatchString(l) {
			return true
		}
	}
	return false
}

func (p *proc) dumpTail(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	start := max(0, len(p.lines)-n)
	p.t.Logf("---- last %d lines of %s:\n%s", len(p.lines)-start, p.name, strings.Join(p.lines[start:], "\n"))
}

// kill9 kills the process with SIGKILL (if it runs) and waits for it.
func (p *proc) kill9() {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	select {
	case <-done:
		return
	default:
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	<-done
}

// stop ends the process with SIGTERM and waits for a clean exit.
func (p *proc) stop() {
	p.t.Helper()
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	select {
	case <-done:
		return
	default:
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
		if st := cmd.ProcessState; st != nil && !st.Success() {
			p.dumpTail(30)
			p.t.Errorf("%s exited with %v after SIGTERM", p.name, st)
		}
	case <-time.After(60 * time.Second):
		p.dumpTail(30)
		p.t.Errorf("%s: no exit 60 s after SIGTERM", p.name)
		p.kill9()
	}
}

// freeAddr returns a loopback address with a port free right now (for a
// process that must come back on the same address after a restart).
func freeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// ---- the cluster ----

type clusterOpts struct {
	hosts, pages   int
	nodes          int
	delay          float64 // per-site delay, seconds
	dupservers     int     // duplicate servers (the first has a replica when replica is set)
	replica        bool
	failover       bool          // the replica has a failover listener, nodes know it
	keepalive      time.Duration // 0: the default
	workers        int
	proxyNode0     bool     // node 0 reaches the multinode scheduler through a proxy
	proxyReplica   bool     // the first duplicate server reaches its replica through a proxy (replicaProxy)
	proxyFailover0 bool     // node 0 reaches the replica's failover listener through a proxy (failoverProxy)
	maxSites       int      // max_sites of the collection (0: the default)
	tls            bool     // every process runs with mutual TLS (one test CA)
	dir            string   // where the processes' data lives ("": a temporary directory)
	diskArgs       []string // flags of the node schedulers and duplicate servers (--disk-low-water ...)
	node0Args      []string // more flags of node scheduler 0
	replica1       bool     // the second duplicate server has a replica too (replica1)
	chain          bool     // the node schedulers feed a chain of name server, distributors and indexers (chain_test.go)
}

type cluster struct {
	t     testing.TB
	o     clusterOpts
	dir   string
	farm  *webfarm.Farm
	mir   *mirrors
	crawl webfarm.Crawl
	want  []string
	xml   string
	hosts string

	ca      *tlstest.CA // with o.tls
	tlsArgs []string    // with o.tls: every process's TLS flags

	mnsAddr string
	mns     *proc
	proxy   *proxy

	nodes   []*proc
	nodeIPs []string
	gone    map[string]bool // addresses of node schedulers that died for good

	dsAddrs            []string
	ds                 []*proc
	replica            *proc
	replicaAddr        string
	replicaProxy       *proxy // between the first duplicate server and its replica (proxyReplica)
	failoverProxy      *proxy // between node 0 and the replica's failover listener (proxyFailover0)
	replicaFailover    string // where nodes fail over to
	primaryReplicaAddr string // where the old primary comes back as a replica
	replica1           *proc  // the second duplicate server's replica (replica1)

	chain *feedChain // with o.chain
}

const collection = "farm"

func newCluster(t testing.TB, o clusterOpts) *cluster {
	t.Helper()
	if o.workers == 0 {
		o.workers = 16
	}
	c := &cluster{t: t, o: o, dir: o.dir}
	if c.dir == "" {
		c.dir = t.TempDir()
	}
	cfg := webfarm.DefaultConfig(11, o.hosts, o.pages)
	cfg.Port = 0
	// No traps, slow or stalling hosts, and the lighter features only (the
	// 2-core CI runs every test with -race).
	cfg.HostFeatures = map[int]webfarm.Features{}
	cfg.Features = webfarm.FeatRobots | webfarm.FeatSitemap | webfarm.FeatCrossLinks | webfarm.FeatDuplicates | webfarm.FeatRedirects
	// Every site has an address of its own: a site sharing its IP with a
	// site of another node scheduler is refused the crawl-IP grant and
	// blocked for the spec's 30 minutes (MS-FSCMT 3.2.5.10).
	cfg.SharedIPHosts = 0
	farm, err := webfarm.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { cancel(); farm.Close() })
	if err := farm.Start(ctx); err != nil {
		t.Fatal(err)
	}
	c.farm = farm
	c.crawl = farm.DefaultCrawl()
	if c.want, err = farm.Expect(c.crawl); err != nil {
		t.Fatal(err)
	}
	c.mir = startMirrors(t, 12)
	c.want = append(c.want, c.mir.want()...)
	var b strings.Builder
	if err := webfarm.WriteCrawlXML(&b, c.crawl, webfarm.XMLOptions{Collection: collection, Delay: o.delay, FetchTimeout: 10}); err != nil {
		t.Fatal(err)
	}
	xml := b.String()
	var members strings.Builder
	for _, u := range c.mir.startURLs() {
		fmt.Fprintf(&members, "            <member> %s </member>\n", u)
	}
	startList := "<attrib name=\"start_uris\" type=\"list-string\">\n"
	if !strings.Contains(xml, startList) {
		t.Fatalf("no start_uris list in the farm's crawl XML:\n%s", xml)
	}
	xml = strings.Replace(xml, startList, startList+members.String(), 1)
	pp := "        <section name=\"pp\">\n            <attrib name=\"use_dupservers\" type=\"boolean\"> yes </attrib>\n        </section>\n"
	if o.dupservers == 0 {
		pp = ""
	}
	if o.maxSites > 0 {
		pp += fmt.Sprintf("        <attrib name=\"max_sites\" type=\"integer\"> %d </attrib>\n", o.maxSites)
	}
	xml = strings.Replace(xml, "    </DomainSpecification>", pp+"    </DomainSpecification>", 1)
	c.xml = filepath.Join(c.dir, "crawl.xml")
	if err := os.WriteFile(c.xml, []byte(xml), 0o644); err != nil {
		t.Fatal(err)
	}
	c.hosts = filepath.Join(c.dir, "hosts")
	if err := farm.WriteHostsFile(c.hosts); err != nil {
		t.Fatal(err)
	}
	if err := c.mir.addToHostsFile(c.hosts); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < o.nodes; i++ {
		c.nodeIPs = append(c.nodeIPs, "127.0.0."+strconv.Itoa(11+i))
	}
	if o.tls {
		c.ca = tlstest.NewCA(t, "trawl test CA")
		_, files := c.ca.Issue("peer")
		c.tlsArgs = files.Args()
	}
	return c
}

func (c *cluster) kaArgs() []string {
	a := slices.Clone(c.tlsArgs)
	if c.o.keepalive > 0 {
		a = append(a, "--keepalive", c.o.keepalive.String())
	}
	return a
}

var dsListening = regexp.MustCompile(`listening" addr=(\S+)`)

// start starts every process: the duplicate servers and the replica, the
// multinode scheduler, then the node schedulers.
func (c *cluster) start() {
	c.t.Helper()
	if c.o.replica {
		c.replicaAddr = freeAddr(c.t)
		args := []string{"dupserver", "--replica-mode", "--listen", c.replicaAddr, "--data", filepath.Join(c.dir, "r0"), "--id", "r0"}
		if c.o.failover {
			c.replicaFailover = freeAddr(c.t)
			c.primaryReplicaAddr = freeAddr(c.t)
			args = append(args, "--failover-listen", c.replicaFailover, "--failover-replica", c.primaryReplicaAddr, "--promote-after", "1s")
		}
		c.replica = startProc(c.t, "replica r0", append(args, c.kaArgs()...)...)
		c.replica.waitLine(dsListening, 0, 30*time.Second)
	}
	replica1Addr := ""
	if c.o.replica1 {
		replica1Addr = freeAddr(c.t)
		c.replica1 = startProc(c.t, "replica r1", append([]string{"dupserver", "--replica-mode", "--listen", replica1Addr,
			"--data", filepath.Join(c.dir, "r1"), "--id", "r1"}, c.kaArgs()...)...)
		c.replica1.waitLine(dsListening, 0, 30*time.Second)
	}
	for i := 0; i < c.o.dupservers; i++ {
		addr := freeAddr(c.t)
		args := []string{"dupserver", "--listen", addr, "--data", filepath.Join(c.dir, "ds"+strconv.Itoa(i)), "--id", "ds" + strconv.Itoa(i)}
		if i == 0 && c.o.replica {
			to := c.replicaAddr
			if c.o.proxyReplica {
				c.replicaProxy = startProxy(c.t, c.replicaAddr)
				to = c.replicaProxy.addr()
			}
			args = append(args, "--replica", to)
		}
		args = append(args, c.o.diskArgs...)
		if i == 1 && c.o.replica1 {
			args = append(args, "--replica", replica1Addr)
		}
		p := startProc(c.t, "dupserver ds"+strconv.Itoa(i), append(args, c.kaArgs()...)...)
		p.waitLine(dsListening, 0, 30*time.Second)
		c.ds = append(c.ds, p)
		c.dsAddrs = append(c.dsAddrs, addr)
	}
	if c.o.chain {
		c.startChain()
	}
	c.mnsAddr = freeAddr(c.t)
	c.mns = startProc(c.t, "multinode", c.mnsArgs()...)
	c.mns.waitLine(regexp.MustCompile(`listening for node schedulers`), 0, 30*time.Second)
	nodeMNS := c.mnsAddr
	if c.o.proxyNode0 {
		c.proxy = startProxy(c.t, c.mnsAddr)
	}
	for i := 0; i < c.o.nodes; i++ {
		mns := nodeMNS
		if i == 0 && c.proxy != nil {
			mns = c.proxy.addr()
		}
		c.nodes = append(c.nodes, startProc(c.t, "node n"+strconv.Itoa(i), c.nodeArgs(i, mns)...))
	}
}

func (c *cluster) mnsArgs() []string {
	return append([]string{"multinode", "--listen", c.mnsAddr, "--data", filepath.Join(c.dir, "mns"), "--config", c.xml,
		"--hosts-file", c.hosts, "--wait-nodes", strconv.Itoa(c.o.nodes), "--wait-nodes-timeout", "60s", "--admin-listen", "off"}, append(c.chainMNSArgs(), c.kaArgs()...)...)
}

func (c *cluster) nodeArgs(i int, mns string) []string {
	args := []string{"node", "--id", "n" + strconv.Itoa(i), "--multinode", mns, "--data", filepath.Join(c.dir, "n"+strconv.Itoa(i)),
		"--source-ip", c.nodeIPs[i], "--workers", strconv.Itoa(c.o.workers), "--listen", "off",
		"--stats-interval", statsEvery.String()}
	args = append(args, c.o.diskArgs...)
	if i == 0 {
		args = append(args, c.o.node0Args...)
	}
	for j, a := range c.dsAddrs {
		args = append(args, "--dupserver", a)
		if j == 0 && c.o.failover {
			to := c.replicaFailover
			if i == 0 && c.o.proxyFailover0 {
				if c.failoverProxy == nil {
					c.failoverProxy = startProxy(c.t, c.replicaFailover)
				}
				to = c.failoverProxy.addr()
			}
			args = append(args, "--dupserver-failover", a+"="+to)
		}
	}
	args = append(args, c.chainNodeArgs(i)...)
	return append(args, c.kaArgs()...)
}

// requests lists every request the farm and the mirrors served: URL and
// client address.
func (c *cluster) requests() []mirrorReq {
	fr := c.farm.Requests()
	out := make([]mirrorReq, 0, len(fr))
	for _, r := range fr {
		out = append(out, mirrorReq{url: r.URL, remote: r.Remote})
	}
	return append(out, c.mir.requests()...)
}

// fetched returns the set of URLs requested from the farm and the mirrors.
func (c *cluster) fetched() map[string]bool {
	set := map[string]bool{}
	for _, r := range c.requests() {
		set[r.url] = true
	}
	return set
}

// progress returns how many expected URLs have been fetched.
func (c *cluster) progress() int {
	got := c.fetched()
	n := 0
	for _, u := range c.want {
		if got[u] {
			n++
		}
	}
	return n
}

// waitProgress waits until at least frac of the expected URLs are fetched.
func (c *cluster) waitProgress(frac float64, limit time.Duration) {
	c.t.Helper()
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if float64(c.progress()) >= frac*float64(len(c.want)) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	c.t.Fatalf("crawl below %.0f%% after %v: %d of %d", frac*100, limit, c.progress(), len(c.want))
}

// waitComplete waits until every expected URL was fetched and the farm has
// seen no request for quiet.
func (c *cluster) waitComplete(limit, quiet time.Duration) {
	c.t.Helper()
	deadline := time.Now().Add(limit)
	lastN, lastChange := -1, time.Now()
	for time.Now().Before(deadline) {
		total, _ := c.farm.RequestCount()
		total += int64(len(c.mir.requests()))
		if int(total) != lastN {
			lastN, lastChange = int(total), time.Now()
		}
		if time.Since(lastChange) >= quiet && c.progress() == len(c.want) {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	got := c.fetched()
	var missing []string
	for _, u := range c.want {
		if !got[u] {
			missing = append(missing, u)
		}
	}
	c.t.Fatalf("crawl not complete after %v: %d of %d fetched; missing %v", limit, len(c.want)-len(missing), len(c.want), head(missing, 20))
}

func head(s []string, n int) []string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// stopAll stops every process with SIGTERM.
func (c *cluster) stopAll() {
	for _, p := range c.nodes {
		p.stop()
	}
	c.mns.stop()
	for _, p := range c.ds {
		p.stop()
	}
	if c.replica != nil {
		c.replica.stop()
	}
	if c.replica1 != nil {
		c.replica1.stop()
	}
	c.stopChain()
}

// checkFetched: the union of the fetched URLs equals Expect, and every
// site was fetched from one node scheduler's address only.
func (c *cluster) checkFetched() {
	c.t.Helper()
	got := c.fetched()
	want := map[string]bool{}
	var missing, extra []string
	for _, u := range c.want {
		want[u] = true
		if !got[u] {
			missing = append(missing, u)
		}
	}
	for u := range got {
		if !want[u] {
			extra = append(extra, u)
		}
	}
	sort.Strings(extra)
	if len(missing)+len(extra) > 0 {
		c.t.Errorf("fetched set differs from Expect (%d URLs): missing %d %v, extra %d %v", len(c.want), len(missing), head(missing, 20), len(extra), head(extra, 20))
	}
	bySite := map[string]map[string]bool{}
	perNode := map[string]int{}
	for _, r := range c.requests() {
		u, err := url.Parse(r.url)
		if err != nil {
			continue
		}
		host, _, _ := net.SplitHostPort(r.remote)
		if bySite[u.Host] == nil {
			bySite[u.Host] = map[string]bool{}
		}
		bySite[u.Host][host] = true
		perNode[host]++
	}
	known := map[string]bool{}
	for _, ip := range c.nodeIPs {
		known[ip] = true
	}
	shared := 0
	for site, ips := range bySite {
		for ip := range ips {
			if !known[ip] {
				c.t.Errorf("site %s fetched from %s, no node scheduler's address", site, ip)
			}
		}
		live := 0
		for ip := range ips {
			if !c.gone[ip] {
				live++
			}
		}
		if live > 1 || len(ips) == 0 {
			shared++
			if shared <= 10 {
				c.t.Errorf("site %s fetched by %d node schedulers: %v", site, len(ips), ips)
			}
		}
	}
	c.t.Logf("%d sites, %d URLs fetched; requests per node scheduler address: %v", len(bySite), len(got), perNode)
}

// record is a stored document of one node scheduler.
type record struct {
	node, uri, owner string
	dup              bool
}

// nodeRecords reads the stores of the (stopped) node schedulers: the
// documents with a checksum, by checksum.
func (c *cluster) nodeRecords() map[string][]record {
	c.t.Helper()
	out := map[string][]record{}
	for i := range c.nodes {
		dir := filepath.Join(c.dir, "n"+strconv.Itoa(i))
		st, err := store.Open(dir, store.Options{})
		if err != nil {
			c.t.Fatalf("node n%d store: %v", i, err)
		}
		err = st.URIs(collection, "", func(r *store.URIRecord) error {
			if !r.HasChecksum || (r.Status != store.StatusFetched && r.Status != store.StatusDuplicate) {
				return nil
			}
			cs := hex.EncodeToString(r.Checksum[:])
			out[cs] = append(out[cs], record{node: "n" + strconv.Itoa(i), uri: r.URI, owner: r.Owner, dup: r.Status == store.StatusDuplicate})
			return nil
		})
		st.Close()
		if err != nil {
			c.t.Fatal(err)
		}
	}
	return out
}

// dump reads a stopped duplicate server's checksum store: checksum ->
// owner URI.
func (c *cluster) dump(dataDir string, replicaMode bool) map[string]string {
	c.t.Helper()
	args := []string{"dupserver", "--dump", "--data", dataDir}
	if replicaMode {
		args = append(args, "--replica-mode")
	}
	out, err := exec.Command(trawl.path, args...).Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		c.t.Fatalf("trawl %v: %v\n%s", args, err, stderr)
	}
	m := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "\t")
		if len(f) == 4 && f[0] == collection {
			m[f[1]] = f[2]
		}
	}
	return m
}

// checkDuplicates: in every group of equal documents, over all node
// schedulers, one document owns the checksum and the others are its
// duplicates, and the duplicate servers agree on the owner.
func (c *cluster) checkDuplicates(dsOwners map[string]string) {
	c.t.Helper()
	groups := c.nodeRecords()
	multi, crossNode, bad := 0, 0, 0
	for cs, recs := range groups {
		var owners []string
		nodes := map[string]bool{}
		for _, r := range recs {
			nodes[r.node] = true
			if !r.dup {
				owners = append(owners, r.uri)
			}
		}
		if len(recs) > 1 {
			multi++
		}
		if len(nodes) > 1 {
			crossNode++
		}
		if len(owners) != 1 {
			bad++
			if bad <= 10 {
				c.t.Errorf("checksum %s: %d owners %v among %+v (the duplicate servers say %q)", cs, len(owners), owners, recs, dsOwners[cs])
			}
			continue
		}
		for _, r := range recs {
			if r.dup && r.owner != owners[0] {
				bad++
				if bad <= 10 {
					c.t.Errorf("checksum %s: %s is a duplicate of %s, the owner is %s", cs, r.uri, r.owner, owners[0])
				}
			}
		}
		if dsOwners != nil {
			if o, ok := dsOwners[cs]; !ok {
				bad++
				if bad <= 10 {
					c.t.Errorf("checksum %s (owner %s) unknown to the duplicate servers", cs, owners[0])
				}
			} else if o != owners[0] {
				bad++
				if bad <= 10 {
					c.t.Errorf("checksum %s: the duplicate server says %s owns it, the node schedulers %s", cs, o, owners[0])
				}
			}
		}
	}
	c.t.Logf("%d distinct documents, %d duplicate groups, %d spanning node schedulers", len(groups), multi, crossNode)
	if multi == 0 || crossNode == 0 {
		c.t.Errorf("%d duplicate groups, %d spanning node schedulers: the farm and the mirrors should give both", multi, crossNode)
	}
}

// dsOwners merges the dumps of the (stopped) duplicate servers.
func (c *cluster) dsOwners() map[string]string {
	all := map[string]string{}
	for i := range c.ds {
		for cs, o := range c.dump(filepath.Join(c.dir, "ds"+strconv.Itoa(i)), false) {
			all[cs] = o
		}
	}
	return all
}

// ---- a TCP proxy that can sever its connections ----

type proxy struct {
	t      testing.TB
	ln     net.Listener
	target string
	mu     sync.Mutex
	conns  []net.Conn
	n      int
	cut    bool // connections are refused (closed at once)
}

func startProxy(t testing.TB, target string) *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{t: t, ln: ln, target: target}
	t.Cleanup(func() { ln.Close(); p.sever() })
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			p.mu.Lock()
			cut := p.cut
			p.mu.Unlock()
			if cut {
				in.Close()
				continue
			}
			out, err := net.Dial("tcp", target)
			if err != nil {
				in.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, in, out)
			p.n++
			p.mu.Unlock()
			go func() { io.Copy(out, in); out.Close(); in.Close() }()
			go func() { io.Copy(in, out); in.Close(); out.Close() }()
		}
	}()
	return p
}

func (p *proxy) addr() string { return p.ln.Addr().String() }

// sever closes every connection through the proxy (new ones are accepted).
func (p *proxy) sever() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	n := len(p.conns) / 2
	p.conns = nil
	return n
}

// setCut cuts the link (every connection closed, new ones closed at once:
// a network that rejects) or heals it.
func (p *proxy) setCut(cut bool) {
	p.mu.Lock()
	p.cut = cut
	p.mu.Unlock()
	if cut {
		p.sever()
	}
}

// accepted is how many connections the proxy accepted.
func (p *proxy) accepted() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n
}
