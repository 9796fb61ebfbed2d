package main

import (
	"bufio"
	"bytes"
	"context"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/testenv"
	"github.com/trawl/trawl/internal/webanalyzer"
)

// igraphPython returns a python3 that imports igraph (Debian's
// python3-igraph lives in /usr/bin/python3 even when another python3
// comes first in PATH); the test fails without one when CI=true.
func igraphPython(t *testing.T) string {
	for _, p := range []string{"python3", "/usr/bin/python3"} {
		if exec.Command(p, "-c", "import igraph").Run() == nil {
			return p
		}
	}
	testenv.Missing(t, "no python3 with igraph (apt-get install python3-igraph; test.sh does)")
	return ""
}

// crawlDemo crawls the demo web into a fresh data directory (a page lost
// to a timeout under the race detector does not matter here).
func crawlDemo(t *testing.T) string {
	t.Helper()
	data := t.TempDir()
	code, out, errOut := runTrawl(t, "", "run", "--demo", "--data", data, "--demo-hosts", "4", "--demo-pages", "50",
		"--progress", "off", "--listen", "off", "--index=false")
	if code != 0 {
		t.Fatalf("crawl: exit %d\n%s\n%s", code, out, errOut)
	}
	return data
}

// rankTable reads rank.final: URLHASH -> rank.
func rankTable(t *testing.T, state string) map[string]float64 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(state, webanalyzer.OutRank))
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]float64{}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(l)
		v, err := strconv.ParseFloat(f[1], 64)
		if err != nil {
			t.Fatalf("rank record %q: %v", l, err)
		}
		m[f[0]] = v
	}
	return m
}

// igraphRanks computes PageRank with python-igraph over the analysed
// graph: every node of rank.final, every (multi-)edge of links.final.
func igraphRanks(t *testing.T, py, state string, damping float64) map[string]float64 {
	t.Helper()
	script := `
import sys, igraph
state, d = sys.argv[1], float(sys.argv[2])
ids = {}
for line in open(state + "/rank.final"):
    ids.setdefault(line.split(" ")[0], len(ids))
edges = []
for line in open(state + "/links.final"):
    f = line.split(" ")
    edges.append((ids[f[0]], ids[f[1]]))
g = igraph.Graph(n=len(ids), edges=edges, directed=True)
pr = g.pagerank(damping=d, directed=True)
names = sorted(ids, key=ids.get)
for n, v in zip(names, pr):
    print(n, repr(v))
`
	out, err := exec.Command(py, "-c", script, state, strconv.FormatFloat(damping, 'g', -1, 64)).CombinedOutput()
	if err != nil {
		t.Fatalf("igraph: %v\n%s", err, out)
	}
	m := map[string]float64{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		v, _ := strconv.ParseFloat(f[1], 64)
		m[f[0]] = v
	}
	return m
}

// fractionalRanks gives each value its rank, ties the mean of their ranks.
func fractionalRanks(v []float64) []float64 {
	idx := make([]int, len(v))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return v[idx[a]] < v[idx[b]] })
	r := make([]float64, len(v))
	for i := 0; i < len(idx); {
		j := i
		for j < len(idx) && v[idx[j]] == v[idx[i]] {
			j++
		}
		for k := i; k < j; k++ {
			r[idx[k]] = float64(i+j-1)/2 + 1
		}
		i = j
	}
	return r
}

// spearman is Pearson's correlation of the fractional ranks.
func spearman(a, b []float64) float64 {
	ra, rb := fractionalRanks(a), fractionalRanks(b)
	var ma, mb float64
	for i := range ra {
		ma += ra[i]
		mb += rb[i]
	}
	ma /= float64(len(ra))
	mb /= float64(len(rb))
	var c, va, vb float64
	for i := range ra {
		c += (ra[i] - ma) * (rb[i] - mb)
		va += (ra[i] - ma) * (ra[i] - ma)
		vb += (rb[i] - mb) * (rb[i] - mb)
	}
	return c / math.Sqrt(va*vb)
}

// TestWebanalyzerPageRankMatchesIgraph crawls the demo web, runs the web
// analyzer (one local worker), and checks that the static rank over all
// analysed pages agrees with python-igraph's PageRank of the same graph
// and damping (Spearman >= 0.99, and each value within 1% once both are
// normalized, 5% under the race detector); that the site ranks sum to 1;
// that the dump writes every table; and that three dmake workers in
// separate processes (beside the embedded one) give byte-identical kept
// tables.
func TestWebanalyzerPageRankMatchesIgraph(t *testing.T) {
	py := igraphPython(t)
	// The table programs are short processes: no 1 s sleep at their exit
	// under the race detector (GORACE atexit_sleep_ms).
	t.Setenv("GORACE", "atexit_sleep_ms=0")
	self, err := exec.LookPath("trawl")
	if err != nil {
		t.Fatal(err)
	}
	data := crawlDemo(t)
	const damping = 0.85
	// 40 rounds leave an error of at most 0.85^40 = 0.15%; under the race
	// detector 20 rounds in one partition (3.9%).
	rounds, parts, tolerance := "40", "3", 0.01
	if raceEnabled {
		rounds, parts, tolerance = "20", "1", 0.05
	}
	code, out, errOut := runTrawl(t, "", "webanalyzer", "run", "--data", data, "--trawl", self, "--rounds", rounds,
		"--partitions", parts, "--damping", strconv.FormatFloat(damping, 'g', -1, 64))
	if code != 0 {
		t.Fatalf("webanalyzer run: exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "targets done") {
		t.Errorf("no progress shown:\n%s", out)
	}
	state := webanalyzer.StateDir(data)
	ours, theirs := rankTable(t, state), igraphRanks(t, py, state, damping)
	if len(ours) < 500 || len(ours) != len(theirs) {
		t.Fatalf("%d analysed pages, igraph %d", len(ours), len(theirs))
	}
	var sum float64
	for _, v := range ours {
		sum += v
	}
	var a, b []float64
	for h, v := range ours {
		w, ok := theirs[h]
		if !ok {
			t.Fatalf("igraph lacks %s", h)
		}
		if math.Abs(v/sum-w) > tolerance*w {
			t.Errorf("%s: static rank %g, igraph %g", h, v/sum, w)
		}
		a, b = append(a, v), append(b, w)
	}
	rho := spearman(a, b)
	t.Logf("%d pages, Spearman %.6f", len(a), rho)
	if rho < 0.99 {
		t.Errorf("Spearman correlation with igraph %.4f < 0.99", rho)
	}

	code, out, errOut = runTrawl(t, "", "webanalyzer", "ranks", "--data", data)
	if code != 0 {
		t.Fatalf("ranks: exit %d\n%s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != len(ours) {
		t.Errorf("ranks printed %d lines, want %d", len(lines), len(ours))
	}
	sites := map[string]float64{}
	for _, l := range lines {
		f := strings.Split(l, "\t")
		if len(f) != 3 || !strings.HasPrefix(f[0], "http") {
			t.Fatalf("ranks line %q is not URL<TAB>rank<TAB>siterank", l)
		}
		u := f[0][:strings.Index(f[0][8:], "/")+8]
		sites[u], _ = strconv.ParseFloat(f[2], 64)
	}
	var siteSum float64
	for _, v := range sites {
		siteSum += v
	}
	if math.Abs(siteSum-1) > 1e-3 {
		t.Errorf("site ranks of %d sites sum to %g, want 1", len(sites), siteSum)
	}

	// The dump alone: every input table, links with the intra-site flag.
	dump := t.TempDir()
	code, out, errOut = runTrawl(t, "", "webanalyzer", "dump", "--data", data, "--out", dump)
	if code != 0 || !strings.Contains(out, " links, ") {
		t.Fatalf("dump: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, f := range webanalyzer.InputTables {
		b, err := os.ReadFile(filepath.Join(dump, f))
		if err != nil || (len(b) == 0 && f != webanalyzer.TableDelete) {
			t.Errorf("dump table %s: %d bytes, %v", f, len(b), err)
		}
	}
	links, _ := os.ReadFile(filepath.Join(dump, webanalyzer.TableLinks))
	if !bytes.Contains(links, []byte(" 0 ")) || !bytes.Contains(links, []byte(" 1 ")) {
		t.Errorf("the links lack intra-site (1) or inter-site (0) ones")
	}

	// The same build over three worker processes besides the embedded one.
	one := readState(t, state)
	var addrs []string
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for i := 0; i < 3; i++ {
		cmd := exec.CommandContext(ctx, self, "dmake", "worker", "--listen", "127.0.0.1:0", "--data", filepath.Join(t.TempDir(), "w"), "--log-level", "warn")
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cancel(); cmd.Wait() })
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if err != nil || !strings.HasPrefix(line, "listening ") {
			t.Fatalf("worker %d: %q %v", i, line, err)
		}
		addrs = append(addrs, strings.TrimSpace(strings.TrimPrefix(line, "listening ")))
	}
	args := []string{"webanalyzer", "run", "--data", data, "--trawl", self, "--rounds", rounds, "--partitions", parts, "--full", "--slots", "1"}
	for _, a := range addrs {
		args = append(args, "--worker", a)
	}
	start := time.Now()
	code, out, errOut = runTrawl(t, "", args...)
	if code != 0 {
		t.Fatalf("webanalyzer run on 4 workers: exit %d\n%s\n%s", code, out, errOut)
	}
	t.Logf("4 workers: %v", time.Since(start))
	four := readState(t, state)
	for name, b := range one {
		if !bytes.Equal(b, four[name]) {
			t.Errorf("%s differs between one worker and four", name)
		}
	}
}

func readState(t *testing.T, state string) map[string][]byte {
	t.Helper()
	m := map[string][]byte{}
	for _, f := range webanalyzer.Kept() {
		b, err := os.ReadFile(filepath.Join(state, f))
		if err != nil {
			t.Fatal(err)
		}
		m[f] = b
	}
	return m
}
