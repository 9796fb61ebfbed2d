package clustertest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"time"

	"github.com/trawl/trawl/internal/webanalyzer"
)

// checkAnalysis runs the web analyzer (`trawl webanalyzer run`: a dmake
// build with an embedded master and one local worker) over the link graph
// of node scheduler n0's (stopped) store twice, on two `trawl dmake worker`
// processes besides: once undisturbed, once with the second worker killed
// with SIGKILL while it runs a target and restarted on its directory and
// address. The master puts the killed worker's running targets back at
// once, redials it every second and finds its files again, so the build
// completes; its kept tables must equal the undisturbed run's byte for
// byte. It returns how long the disturbed build took.
func (c *cluster) checkAnalysis() time.Duration {
	c.t.Helper()
	// The dump reads DIR/node, the layout of trawl run's --data.
	crawl := filepath.Join(c.dir, "wa-crawl")
	if err := os.MkdirAll(crawl, 0o755); err != nil {
		c.t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(c.dir, "n0"), filepath.Join(crawl, "node")); err != nil {
		c.t.Fatal(err)
	}
	tables := filepath.Join(c.dir, "wa-tables")
	if out, err := exec.Command(trawl.path, "webanalyzer", "dump", "--data", crawl, "--out", tables,
		"--collection", collection).CombinedOutput(); err != nil {
		c.t.Fatalf("trawl webanalyzer dump: %v\n%s", err, out)
	}
	var workers []*proc
	var addrs []string
	for _, name := range []string{"w0", "w1"} {
		addr := freeAddr(c.t)
		p := startProc(c.t, "dmake worker "+name, append([]string{"dmake", "worker", "--listen", addr,
			"--data", filepath.Join(c.dir, "wa-"+name)}, c.tlsArgs...)...)
		c.waitDial(p.name, addr, 30*time.Second)
		workers = append(workers, p)
		addrs = append(addrs, addr)
	}
	run := func(data string) *proc {
		args := []string{"webanalyzer", "run", "--data", data, "--tables", tables, "--collection", collection,
			"--local-workers", "1", "--slots", "1", "--rounds", "10", "--log-level", "info"}
		for _, a := range addrs {
			args = append(args, "--worker", a)
		}
		return startProc(c.t, "webanalyzer "+filepath.Base(data), append(args, c.tlsArgs...)...)
	}
	finish := func(p *proc) {
		c.t.Helper()
		select {
		case <-p.done:
		case <-time.After(5 * time.Minute):
			p.dumpTail(40)
			c.t.Fatalf("%s: not done after 5 minutes", p.name)
		}
		if st := p.cmd.ProcessState; st == nil || !st.Success() {
			p.dumpTail(40)
			c.t.Fatalf("%s: %v", p.name, st)
		}
	}
	calm := filepath.Join(c.dir, "wa-calm")
	finish(run(calm))

	killed := false
	start := time.Now()
	disturbed := filepath.Join(c.dir, "wa-killed")
	p := run(disturbed)
	onW1 := regexp.MustCompile(`starting target.*worker=` + regexp.QuoteMeta(addrs[1]))
wait:
	for {
		if p.has(onW1, 0) {
			workers[1].kill9()
			workers[1].start()
			killed = true
			break
		}
		select {
		case <-p.done:
			break wait
		case <-time.After(20 * time.Millisecond):
		}
	}
	finish(p)
	took := time.Since(start)
	if !killed {
		c.t.Errorf("the web analyzer's build ended before a target ran on worker w1")
	}
	a, b := stateFiles(c, calm), stateFiles(c, disturbed)
	if len(a) == 0 {
		c.t.Fatal("the web analyzer kept no table")
	}
	var names []string
	for n := range a {
		names = append(names, n)
	}
	for n := range b {
		if _, ok := a[n]; !ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	differ := 0
	for _, n := range names {
		if n == webanalyzer.StampFile { // the run's time, not a result
			continue
		}
		if !bytes.Equal(a[n], b[n]) {
			differ++
			c.t.Errorf("webanalyzer state %s: %d bytes undisturbed, %d with worker w1 killed mid-build (contents differ)", n, len(a[n]), len(b[n]))
		}
	}
	lost := p.has(regexp.MustCompile(`lost the connection to a worker`), 0)
	c.t.Logf("web analyzer on dmake: %d kept tables, %d differ with worker w1 killed mid-build (master saw the loss: %v; that build took %v)",
		len(a), differ, lost, took.Round(time.Millisecond))
	return took
}

// stateFiles reads the files of a web analyzer run's state directory.
func stateFiles(c *cluster, data string) map[string][]byte {
	c.t.Helper()
	dir := filepath.Join(data, "webanalyzer", "state")
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		out[rel] = b
		return nil
	})
	if err != nil {
		c.t.Fatal(err)
	}
	return out
}
