package opensearch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/testenv"
)

// The two-node OpenSearch cluster of the package's tests: two JVMs of
// testdata/opensearch's launcher (built by Maven from Maven Central
// artifacts), on loopback ports. n1 is cluster-manager-eligible and holds
// data; n2 holds data only (so that killing n2 leaves the cluster a
// manager). It starts at the first test that asks (clusterFor) and stops
// when TestMain ends.

var (
	clusterOnce sync.Once
	theCluster  *cluster
	clusterErr  error
	trawlOnce   sync.Once
	trawlBin    string
	trawlErr    error
	tmpRoot     string
)

func TestMain(m *testing.M) {
	var err error
	if tmpRoot, err = os.MkdirTemp("", "trawl-opensearch-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	if theCluster != nil {
		theCluster.stop()
	}
	if code == 0 {
		os.RemoveAll(tmpRoot)
	} else {
		fmt.Fprintf(os.Stderr, "opensearch tests: node logs kept in %s\n", tmpRoot)
	}
	os.Exit(code)
}

// moduleRoot is the directory of go.mod above the working directory.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// missing skips the test outside CI and fails it under CI=true.
func missing(t *testing.T, err error) {
	t.Helper()
	testenv.Missing(t, "OpenSearch test cluster unavailable: %v", err)
}

// clusterFor returns the running two-node cluster, starting it once.
func clusterFor(t *testing.T) *cluster {
	t.Helper()
	clusterOnce.Do(func() { theCluster, clusterErr = startCluster() })
	if clusterErr != nil {
		missing(t, clusterErr)
	}
	return theCluster
}

// trawlFor returns the path of a trawl binary built for the tests.
func trawlFor(t *testing.T) string {
	t.Helper()
	trawlOnce.Do(func() {
		root, err := moduleRoot()
		if err != nil {
			trawlErr = err
			return
		}
		trawlBin = filepath.Join(tmpRoot, "trawl")
		args := append([]string{"build"}, raceFlag...)
		cmd := exec.Command("go", append(args, "-o", trawlBin, "./cmd/trawl")...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			trawlErr = fmt.Errorf("go build ./cmd/trawl: %v\n%s", err, out)
		}
	})
	if trawlErr != nil {
		t.Fatal(trawlErr)
	}
	return trawlBin
}

type node struct {
	name            string
	http, transport int
	dir             string
	args            []string
	cmd             *exec.Cmd
	exited          chan struct{}
}

type cluster struct {
	java  []string // java and the class path arguments
	nodes []*node
}

// buildLauncher builds testdata/opensearch with Maven (offline first: test.sh
// fetched the artifacts; online when they are missing) and returns the
// java command line prefix that runs it.
func buildLauncher() ([]string, error) {
	root, err := moduleRoot()
	if err != nil {
		return nil, err
	}
	java, err := exec.LookPath("java")
	if err != nil {
		return nil, fmt.Errorf("no java on PATH (Debian: openjdk-17-jre-headless): %w", err)
	}
	mvn, err := exec.LookPath("mvn")
	if err != nil {
		return nil, fmt.Errorf("no mvn on PATH (Debian: maven): %w", err)
	}
	dir := filepath.Join(root, "testdata", "opensearch")
	cpFile := filepath.Join(dir, "target", "classpath.txt")
	build := func(offline bool) ([]byte, error) {
		args := []string{"-q", "-B", "-f", filepath.Join(dir, "pom.xml"), "compile", "dependency:build-classpath", "-Dmdep.outputFile=" + cpFile}
		if offline {
			args = append([]string{"-o"}, args...)
		}
		return exec.Command(mvn, args...).CombinedOutput()
	}
	if !upToDate(cpFile, filepath.Join(dir, "pom.xml"), filepath.Join(dir, "src", "main", "java", "trawl", "opensearch", "TestNode.java")) {
		if err := buildWith(build); err != nil {
			return nil, err
		}
	}
	cp, err := os.ReadFile(cpFile)
	if err != nil {
		return nil, err
	}
	return []string{java, "-Xms512m", "-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xss1m", "-XX:-UsePerfData",
		"-cp", filepath.Join(dir, "target", "classes") + string(os.PathListSeparator) + strings.TrimSpace(string(cp)),
		"trawl.opensearch.TestNode"}, nil
}

// upToDate reports whether out is newer than every input.
func upToDate(out string, inputs ...string) bool {
	o, err := os.Stat(out)
	if err != nil {
		return false
	}
	for _, in := range inputs {
		i, err := os.Stat(in)
		if err != nil || !i.ModTime().Before(o.ModTime()) {
			return false
		}
	}
	return true
}

// buildWith runs build offline, then online if the offline build failed.
func buildWith(build func(offline bool) ([]byte, error)) error {
	if out, err := build(true); err != nil {
		if out2, err2 := build(false); err2 != nil {
			return fmt.Errorf("mvn (offline: %v\n%s) (online: %v\n%s)", err, out, err2, out2)
		}
	}
	return nil
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func startCluster() (*cluster, error) {
	java, err := buildLauncher()
	if err != nil {
		return nil, err
	}
	c := &cluster{java: java}
	for _, name := range []string{"n1", "n2"} {
		n := &node{name: name, dir: filepath.Join(tmpRoot, name)}
		if n.http, err = freePort(); err != nil {
			return nil, err
		}
		if n.transport, err = freePort(); err != nil {
			return nil, err
		}
		c.nodes = append(c.nodes, n)
	}
	seeds := fmt.Sprintf("127.0.0.1:%d,127.0.0.1:%d", c.nodes[0].transport, c.nodes[1].transport)
	for i, n := range c.nodes {
		n.args = []string{
			"path.home=" + n.dir, "path.data=" + filepath.Join(n.dir, "data"), "path.logs=" + filepath.Join(n.dir, "logs"),
			"cluster.name=trawl-test", "node.name=" + n.name,
			"network.host=127.0.0.1", "http.port=" + strconv.Itoa(n.http), "transport.port=" + strconv.Itoa(n.transport),
			"discovery.seed_hosts=" + seeds, "cluster.initial_cluster_manager_nodes=n1",
			"node.processors=1", "cluster.routing.allocation.disk.threshold_enabled=false",
			"action.auto_create_index=false",
		}
		if i == 1 {
			n.args = append(n.args, "node.roles=data,ingest")
		}
		if err := c.start(n); err != nil {
			c.stop()
			return nil, err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := c.waitNodes(ctx, 2); err != nil {
		c.stop()
		return nil, err
	}
	return c, nil
}

// start starts n's JVM; its output goes to DIR/out.log.
func (c *cluster) start(n *node) error {
	if err := os.MkdirAll(n.dir, 0o755); err != nil {
		return err
	}
	out, err := os.OpenFile(filepath.Join(n.dir, "out.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(c.java[0], append(append([]string(nil), c.java[1:]...), n.args...)...)
	cmd.Stdout, cmd.Stderr = out, out
	// The JVM dies with the test binary.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		out.Close()
		return err
	}
	n.cmd, n.exited = cmd, make(chan struct{})
	go func() {
		cmd.Wait()
		out.Close()
		close(n.exited)
	}()
	return nil
}

// kill kills n with SIGKILL and waits for it to exit.
func (c *cluster) kill(n *node) {
	if n.cmd == nil {
		return
	}
	n.cmd.Process.Kill()
	<-n.exited
	n.cmd = nil
}

// stop stops every node: SIGTERM (the launcher closes the node), SIGKILL
// after 20 s.
func (c *cluster) stop() {
	for _, n := range c.nodes {
		if n.cmd != nil {
			n.cmd.Process.Signal(syscall.SIGTERM)
		}
	}
	for _, n := range c.nodes {
		if n.cmd == nil {
			continue
		}
		select {
		case <-n.exited:
		case <-time.After(20 * time.Second):
			n.cmd.Process.Kill()
			<-n.exited
		}
		n.cmd = nil
	}
}

// base is node i's HTTP base URL.
func (c *cluster) base(i int) string {
	return "http://127.0.0.1:" + strconv.Itoa(c.nodes[i].http)
}

// url is the feeding address of index idx on both nodes.
func (c *cluster) url(idx string) string {
	return fmt.Sprintf("opensearch://127.0.0.1:%d,127.0.0.1:%d/%s", c.nodes[0].http, c.nodes[1].http, idx)
}

// waitNodes waits until the cluster has n nodes and is at least yellow.
func (c *cluster) waitNodes(ctx context.Context, n int) error {
	var last error
	for {
		var h struct {
			Status string `json:"status"`
			Nodes  int    `json:"number_of_nodes"`
		}
		last = c.call(ctx, 0, "GET", "/_cluster/health?wait_for_status=yellow&wait_for_nodes="+strconv.Itoa(n)+"&timeout=2s", nil, &h)
		if last == nil && h.Nodes == n && h.Status != "red" {
			return nil
		}
		for _, nd := range c.nodes {
			if nd.cmd != nil {
				select {
				case <-nd.exited:
					b, _ := os.ReadFile(filepath.Join(nd.dir, "out.log"))
					return fmt.Errorf("node %s exited:\n%s", nd.name, tail(b, 3000))
				default:
				}
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("cluster of %d nodes not up: %v (health %+v)", n, last, h)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// waitGreen waits until every shard of the cluster is assigned.
func (c *cluster) waitGreen(ctx context.Context) error {
	for {
		var h struct {
			Status string `json:"status"`
		}
		err := c.call(ctx, 0, "GET", "/_cluster/health?wait_for_status=green&timeout=2s", nil, &h)
		if err == nil && h.Status == "green" {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("cluster not green: %v %s", err, h.Status)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// call sends a JSON request to node i and decodes the answer into out.
func (c *cluster) call(ctx context.Context, i int, method, path string, body any, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base(i)+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		return fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, tail(b, 500))
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}

// must is call that fails the test on an error.
func (c *cluster) must(t *testing.T, method, path string, body any, out any) {
	t.Helper()
	if err := c.call(context.Background(), 0, method, path, body, out); err != nil {
		t.Fatal(err)
	}
}

// docs returns every document of index idx by URL, with how many times
// each URL is there (after a refresh).
func (c *cluster) docs(t *testing.T, idx string) map[string]int {
	t.Helper()
	c.must(t, "POST", "/"+idx+"/_refresh", nil, nil)
	var r struct {
		Hits struct {
			Hits []struct {
				Source struct {
					URL string `json:"url"`
				} `json:"_source"`
			} `json:"hits"`
		} `json:"hits"`
	}
	c.must(t, "POST", "/"+idx+"/_search", map[string]any{"size": 10000, "_source": []string{"url"}, "query": map[string]any{"match_all": map[string]any{}}}, &r)
	out := map[string]int{}
	for _, h := range r.Hits.Hits {
		out[h.Source.URL]++
	}
	return out
}
