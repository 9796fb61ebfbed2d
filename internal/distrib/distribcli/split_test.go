package distribcli_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/distrib"
	"github.com/trawl/trawl/internal/distrib/indexer"
	"github.com/trawl/trawl/internal/distrib/nameserver"
	"github.com/trawl/trawl/internal/distrib/wire"
	"github.com/trawl/trawl/internal/feed"
	"github.com/trawl/trawl/internal/index"
	"github.com/trawl/trawl/internal/testenv"
	"github.com/trawl/trawl/internal/testenv/testproc"
)

// The split test runs the real thing: a trawl binary built once, a name
// server, an indexer and three distributors as separate processes over
// loopback TCP, the first distributor reaching the name server through a
// proxy the test cuts.

// trawl is the binary the split test runs, built on first use.
var trawl = &testproc.Binary{Race: raceEnabled, Prefix: "distrib-trawl-"}

func TestMain(m *testing.M) {
	code := m.Run()
	trawl.Remove()
	os.Exit(code)
}

// startRole starts a trawl process, stopped (SIGTERM, then SIGKILL after
// 20 s) when the test ends.
func startRole(t *testing.T, args ...string) *testproc.Proc {
	t.Helper()
	return testproc.Start(t, trawl.Path(t), 20*time.Second, args...)
}

// waitLine waits for a line of r's output matching re and returns its
// first group.
func waitLine(r *testproc.Proc, re *regexp.Regexp) string {
	return r.WaitLine(re, 60*time.Second)[1]
}

// cutProxy forwards TCP to target until cut: then it closes every link
// and closes new ones at once, until healed.
type cutProxy struct {
	l      net.Listener
	target string
	mu     sync.Mutex
	cut    bool
	conns  map[net.Conn]bool
	wg     sync.WaitGroup
}

func newCutProxy(t *testing.T, target string) *cutProxy {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{l: l, target: target, conns: map[net.Conn]bool{}}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(func() {
		l.Close()
		p.setCut(true)
		p.wg.Wait()
	})
	return p
}

func (p *cutProxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.cut {
			p.mu.Unlock()
			c.Close()
			continue
		}
		up, err := net.DialTimeout("tcp", p.target, 5*time.Second)
		if err != nil {
			p.mu.Unlock()
			c.Close()
			continue
		}
		p.conns[c], p.conns[up] = true, true
		p.wg.Add(2)
		p.mu.Unlock()
		pipe := func(dst, src net.Conn) {
			defer p.wg.Done()
			_, _ = io.Copy(dst, src)
			dst.Close()
			src.Close()
			p.mu.Lock()
			delete(p.conns, dst)
			delete(p.conns, src)
			p.mu.Unlock()
		}
		go pipe(up, c)
		go pipe(c, up)
	}
}

func (p *cutProxy) setCut(cut bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = cut
	if cut {
		for c := range p.conns {
			c.Close()
		}
	}
}

// startListening starts a role with a fresh base port until it prints
// its listening line: another process (a helper's test) may take a port
// between the check and the listen.
func startListening(t *testing.T, re *regexp.Regexp, args func(base int) []string, offsets ...int) (*testproc.Proc, int) {
	t.Helper()
	for range 5 {
		base := testenv.FreeBasePort(t, offsets...)
		r := startRole(t, args(base)...)
		deadline := time.Now().Add(60 * time.Second)
		for time.Now().Before(deadline) {
			if re.MatchString(r.Log()) {
				return r, base
			}
			select {
			case <-r.Done():
				if !strings.Contains(r.Log(), "address already in use") {
					t.Fatalf("%v exited:\n%s", r.Args, r.Log())
				}
				deadline = time.Time{}
			case <-time.After(20 * time.Millisecond):
			}
		}
		if !deadline.IsZero() {
			t.Fatalf("%v did not listen:\n%s", r.Args, r.Log())
		}
	}
	t.Fatal("no base port could be listened on")
	return nil, 0
}

// TestSplitMasterFromNameServer: three trawl distributor processes, the
// first one (the master) reaching the name server through a proxy. The
// proxy is cut for a while as a feed goes on: within its lease the cut
// master stops answering its session_factory (it places nothing), a backup
// takes over under a newer epoch, and at no sample after the cut do two
// distributors answer as master; healed, the old master becomes a backup
// of the new one. Every document fed (before, during and after the split)
// is in the index exactly once.
func TestSplitMasterFromNameServer(t *testing.T) {
	const ping = 400 * time.Millisecond
	lease := 2 * ping
	ns := startRole(t, "nameserver", "--listen", "127.0.0.1:0", "--data", t.TempDir(), "--ping-interval", "300ms")
	nsAddr := waitLine(ns, regexp.MustCompile(`nameserver listening on (\S+)`))
	proxy := newCutProxy(t, nsAddr)

	ixDir := t.TempDir()
	ix, _ := startListening(t, regexp.MustCompile(`indexer partition \d+ of \d+ listening on`), func(base int) []string {
		return []string{"indexer", "--partition", "0", "--partitions", "1", "--base-port", strconv.Itoa(base),
			"--host", "127.0.0.1", "--listen", "127.0.0.1", "--data", ixDir, "--rebind", "300ms", "--nameserver", nsAddr}
	}, indexer.PortOffset)

	addrs := map[int]string{}
	cds := map[int]*testproc.Proc{}
	startCD := func(id int, nsVia string) {
		r, base := startListening(t, regexp.MustCompile(`distributor \d+ listening on`), func(base int) []string {
			return []string{"distributor", "--id", strconv.Itoa(id), "--base-port", strconv.Itoa(base),
				"--host", "127.0.0.1", "--listen", "127.0.0.1", "--ping-master", ping.String(), "--check-master", ping.String(),
				"--lease", lease.String(), "--collection", "web", "--nameserver", nsVia}
		}, wire.PortInternal, wire.PortExternal)
		cds[id] = r
		addrs[id] = "127.0.0.1:" + strconv.Itoa(base+wire.PortInternal)
	}
	cl := &wire.Client{Timeout: 2 * time.Second}
	defer cl.Close()
	masters := func() []int {
		var out []int
		for id := 1; id <= 3; id++ {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			_, err := cl.Call(ctx, addrs[id], wire.IfaceSessionFactory, wire.MethodPing)
			cancel()
			if err == nil {
				out = append(out, id)
			}
		}
		return out
	}
	startCD(1, proxy.l.Addr().String())
	waitLine(cds[1], regexp.MustCompile(`(I am the master)`))
	startCD(2, nsAddr)
	startCD(3, nsAddr)
	for _, id := range []int{2, 3} {
		waitLine(cds[id], regexp.MustCompile(`(I am a backup)`))
	}

	reg := nameserver.NewClient(nsAddr, &wire.Client{Timeout: 3 * time.Second})
	ob, err := feed.OpenOutbox(t.TempDir(), feed.OutboxOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ob.Close()
	dc := distrib.NewClient(reg, nil)
	defer dc.Close()
	target := feed.Target{Name: "default:web", Collection: "web", Primary: true}
	acked := make(chan feed.Result, 1024)
	f, err := feed.NewFeeder(ob, []feed.Target{target}, dc.Dial, feed.FeederOptions{BatchOps: 5, Window: 2,
		MinBackoff: 50 * time.Millisecond, MaxBackoff: 300 * time.Millisecond, OnResult: func(r feed.Result) { acked <- r }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	fdone := make(chan error, 1)
	go func() { fdone <- f.Run(ctx) }()
	defer func() { cancel(); <-fdone }()
	var want []string
	feedSome := func(n int) {
		for range n {
			u := fmt.Sprintf("http://site.example/page%d", len(want))
			want = append(want, u)
			op := feed.Operation{Kind: feed.Add, Destination: target.Name, Collection: "web", URI: u, MIME: "text/html",
				Title: u, Text: "words of " + u}
			if err := f.Feed(ctx, op); err != nil {
				t.Fatal(err)
			}
		}
	}
	got := 0
	waitAcked := func() {
		timeout := time.After(90 * time.Second)
		for got < len(want) {
			select {
			case r := <-acked:
				if r.Err != nil {
					t.Fatalf("operation %s rejected: %v", r.URI, r.Err)
				}
				got++
			case <-timeout:
				t.Fatalf("only %d of %d operations acknowledged", got, len(want))
			}
		}
	}

	feedSome(50)
	waitAcked()
	if ms := masters(); len(ms) != 1 || ms[0] != 1 {
		t.Fatalf("masters before the split: %v, want [1]", ms)
	}

	// The split: distributor 1 cannot reach the name server; the other
	// two can, and can reach distributor 1.
	cut := time.Now()
	proxy.setCut(true)
	feedSome(100)
	newMaster := 0
	deadline := time.Now().Add(60 * time.Second)
	for newMaster == 0 {
		ms := masters()
		if len(ms) > 1 {
			t.Fatalf("%v after the split: two distributors answer as master", time.Since(cut))
		}
		if len(ms) == 1 && ms[0] != 1 {
			newMaster = ms[0]
		}
		if len(ms) == 1 && ms[0] == 1 && time.Since(cut) > lease+2*time.Second {
			t.Fatalf("distributor 1 still master %v after it was cut from the name server (lease %v)", time.Since(cut), lease)
		}
		if time.Now().After(deadline) {
			t.Fatalf("no new master 60 s after the split:\n%s", cds[2].Log())
		}
		time.Sleep(50 * time.Millisecond)
	}
	took := time.Since(cut)
	if !strings.Contains(cds[1].Log(), "stepping down") {
		t.Errorf("distributor 1 did not step down:\n%s", cds[1].Log())
	}
	// The split lasts a few seconds more: still one master.
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if ms := masters(); len(ms) != 1 || ms[0] != newMaster {
			t.Fatalf("masters during the split: %v, want [%d]", ms, newMaster)
		}
	}
	proxy.setCut(false)
	deadline = time.Now().Add(60 * time.Second)
	for !regexp.MustCompile(`I am a backup" node=1 master=` + regexp.QuoteMeta(addrs[newMaster])).MatchString(cds[1].Log()) {
		if time.Now().After(deadline) {
			t.Fatalf("distributor 1 did not become a backup of %d after the heal:\n%s", newMaster, cds[1].Log())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if ms := masters(); len(ms) != 1 || ms[0] != newMaster {
		t.Fatalf("masters after the heal: %v, want [%d]", ms, newMaster)
	}
	feedSome(50)
	waitAcked()
	t.Logf("new master %d answered %v after the cut (lease %v)", newMaster, took.Round(time.Millisecond), lease)

	// Every document once.
	cancel()
	<-fdone
	fdone <- nil
	for _, r := range cds {
		r.Stop(20 * time.Second)
	}
	ix.Stop(20 * time.Second)
	idx, err := index.Open(filepath.Join(ixDir, "indexer", "index"), index.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	n, _ := idx.Count()
	if n != uint64(len(want)) {
		t.Errorf("the index holds %d documents, want %d", n, len(want))
	}
	for _, u := range want {
		if r, err := idx.Lookup(context.Background(), "web", u); err != nil || !r.Found {
			t.Errorf("%s not in the index: %v", u, err)
		}
	}
}
