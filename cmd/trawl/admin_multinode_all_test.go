package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/trawl/trawl/internal/webfarm"
)

// TestAdminMultinodeEveryMethod calls every MS-FSCADM method on a running
// `trawl multinode` with two `trawl node` processes (real TCP, each node
// fetching from its own source address) from Python's xmlrpc.client, and
// checks each call's effect on the crawl: the farm's request log (which
// node fetched a site, what was fetched, not fetched or fetched again),
// the statistics of the multinode scheduler and of each node scheduler,
// and the index the nodes feed through a name server, a content
// distributor and an indexer (the search API of `trawl search
// --nameserver`).
// The script, testdata/admin_multinode_all.py, lists what it checks; at
// its end it has node 2 stopped and its sites rerouted to node 1.
func TestAdminMultinodeEveryMethod(t *testing.T) {
	py := python(t)
	// Six plain sites (none of the slow, stalling or trap sites of the
	// default farm), so that the crawl settles in seconds.
	fc := webfarm.DefaultConfig(37, 6, 10)
	fc.HostFeatures = map[int]webfarm.Features{}
	fx := newFarmFixtureConfig(t, fc)
	dir := fx.dir
	files := filepath.Join(dir, "urifiles")
	if err := os.MkdirAll(files, 0o755); err != nil {
		t.Fatal(err)
	}
	// --wait-nodes 2: the sites are spread over both nodes.
	// mc is crawled with a delay between requests to one site, so that a
	// site with work queued is crawled for a while (PreemptSite).
	mcXML := fx.writeXMLOpts(t, webfarm.XMLOptions{Collection: "mc", FetchTimeout: 10, Delay: 0.25})
	ccXML := fx.writeXML(t, "cc")
	mns, got := startRole(t, []string{"multinode", "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0",
		"--data", filepath.Join(dir, "mns"), "--hosts-file", fx.hostsFile, "--config", mcXML,
		"--admin-files", files, "--wait-nodes", "2", "--log-level", "info"},
		`trawl multinode: HTTP interface on http://([0-9.:]+)/`,
		`listening for node schedulers" addr=([0-9.:]+)`)
	env := []string{"MNS=http://" + got[0] + "/RPC2", "FARM=" + fx.counts.URL, "MCXML=" + mcXML, "CCXML=" + ccXML,
		"FILES=" + files}
	procs := []*roleProcess{mns}
	// The nodes feed a feeding chain (name server, content distributor,
	// indexer, on ports the system chooses), and the script checks the
	// index through the search API of `trawl search --nameserver`.
	ns, nsGot := startRole(t, []string{"nameserver", "--listen", "127.0.0.1:0", "--data", filepath.Join(dir, "ns"),
		"--ping-interval", "1s"}, `nameserver listening on (\S+)`)
	cd, _ := startRole(t, []string{"distributor", "--id", "0", "--nameserver", nsGot[0], "--base-port", "0",
		"--host", "127.0.0.1", "--listen", "127.0.0.1", "--check-master", "1s", "--ping-master", "1s"},
		`distributor 0 listening on (\S+)`)
	ix, _ := startRole(t, []string{"indexer", "--nameserver", nsGot[0], "--base-port", "0", "--host", "127.0.0.1",
		"--listen", "127.0.0.1", "--data", filepath.Join(dir, "ix")}, `indexer partition 0 of 1 listening on (\S+)`)
	search, sGot := startRole(t, []string{"search", "--nameserver", nsGot[0], "--serve", "127.0.0.1:0"},
		`serving search on (http://\S+)/search`)
	procs = append(procs, ns, cd, ix, search)
	env = append(env, "SEARCH="+sGot[0])
	var sites []string
	for _, h := range fx.farm.Hosts() {
		sites = append(sites, h.Name+":"+strconv.Itoa(fx.farm.Port()))
	}
	env = append(env, "SITES="+strings.Join(sites, ","))
	var node2 *roleProcess
	for i, id := range []string{"n1", "n2"} {
		ip := "127.0.0." + strconv.Itoa(i+2)
		node, ngot := startRole(t, []string{"node", "--id", id, "--multinode", got[1], "--data", filepath.Join(dir, id),
			"--listen", "127.0.0.1:0", "--source-ip", ip, "--log-level", "info", "--workers", "8",
			"--stats-interval", "2s", // the statistics check waits for a CMD_UM_STAT
			"--nameserver", nsGot[0]},
			`trawl node: HTTP interface on http://([0-9.:]+)/`)
		_, port, _ := strings.Cut(ngot[0], ":")
		n := strconv.Itoa(i + 1)
		env = append(env, "NODE"+n+"=http://"+ngot[0]+"/RPC2", "NODE"+n+"PORT="+port, "NODE"+n+"IP="+ip)
		procs = append(procs, node)
		if id == "n2" {
			node2 = node
		}
	}
	cmd := exec.Command(py, "testdata/admin_multinode_all.py")
	cmd.Env = append(os.Environ(), env...)
	// "STOP NODE2": node 2 stops for good (RerouteNodeScheduler).
	out := &stopWatcher{on: map[string]func(){"STOP NODE2": node2.stop}}
	cmd.Stdout, cmd.Stderr = out, out
	err := cmd.Run()
	t.Logf("python:\n%s", out.String())
	if err != nil {
		for _, p := range procs {
			t.Logf("stderr:\n%s%s", p.stdout.String(), p.stderr.String())
		}
		t.Fatalf("python xmlrpc.client script failed: %v", err)
	}
}

// stopWatcher collects a process's output and runs a function, once, when
// a line equal to one of its keys appears.
type stopWatcher struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	line []byte
	on   map[string]func()
}

func (w *stopWatcher) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(b)
	for _, c := range b {
		if c != '\n' {
			w.line = append(w.line, c)
			continue
		}
		if f := w.on[string(w.line)]; f != nil {
			delete(w.on, string(w.line))
			go f()
		}
		w.line = w.line[:0]
	}
	return len(b), nil
}

func (w *stopWatcher) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}
