package multinode

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/testenv"
)

const processConfig = `<?xml version="1.0" encoding="utf-8"?>
<CrawlerConfig>
  <DomainSpecification name="farm">
    <attrib name="start_uris" type="list-string">
      <member>http://site1.farm.test/</member>
      <member>http://site2.farm.test/</member>
    </attrib>
    <attrib name="delay" type="real">0.5</attrib>
    <attrib name="domain_clustering" type="boolean">yes</attrib>
    <attrib name="max_sites" type="integer">64</attrib>
    <section name="link_extraction">
      <attrib name="a" type="boolean">yes</attrib>
      <attrib name="img" type="boolean">no</attrib>
    </section>
    <section name="crawlmode">
      <attrib name="mode" type="string">DEPTH:3</attrib>
    </section>
    <Node name="node-a">
      <attrib name="delay" type="real">2.0</attrib>
    </Node>
  </DomainSpecification>
</CrawlerConfig>
`

// buildTrawl builds the trawl binary into a temporary directory.
func buildTrawl(t *testing.T) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
		if _, err := os.Stat(goBin); err != nil {
			testenv.Missing(t, "go tool not found: %v", err)
		}
	}
	bin := filepath.Join(t.TempDir(), "trawl")
	out, err := exec.Command(goBin, "build", "-o", bin, "../../cmd/trawl").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// lineWatcher collects a process's stderr and finds lines in it.
type lineWatcher struct {
	mu     sync.Mutex
	lines  []string
	notify chan struct{}
	done   chan struct{}
}

func watchLines(r io.Reader) *lineWatcher {
	w := &lineWatcher{notify: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			w.mu.Lock()
			w.lines = append(w.lines, sc.Text())
			close(w.notify)
			w.notify = make(chan struct{})
			w.mu.Unlock()
		}
	}()
	return w
}

func (w *lineWatcher) find(t *testing.T, re *regexp.Regexp) []string {
	t.Helper()
	deadline := time.NewTimer(waitTimeout)
	defer deadline.Stop()
	for {
		w.mu.Lock()
		for _, l := range w.lines {
			if m := re.FindStringSubmatch(l); m != nil {
				w.mu.Unlock()
				return m
			}
		}
		ch := w.notify
		w.mu.Unlock()
		select {
		case <-ch:
		case <-w.done:
			w.mu.Lock()
			defer w.mu.Unlock()
			for _, l := range w.lines {
				if m := re.FindStringSubmatch(l); m != nil {
					return m
				}
			}
			t.Fatalf("process output ended without %v:\n%s", re, strings.Join(w.lines, "\n"))
		case <-deadline.C:
			t.Fatalf("no line matching %v:\n%s", re, strings.Join(w.lines, "\n"))
		}
	}
}

var listenLine = regexp.MustCompile(`listening for node schedulers" addr=(\S+)`)

// startProcess runs `trawl multinode` and returns the address it listens
// on.
func startProcess(t *testing.T, bin string, args ...string) (addr string, cmd *exec.Cmd, w *lineWatcher) {
	t.Helper()
	cmd = exec.Command(bin, append([]string{"multinode", "--listen", "127.0.0.1:0"}, args...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	w = watchLines(stderr)
	return w.find(t, listenLine)[1], cmd, w
}

// TestProcess runs the trawl binary as a real process.
func TestProcess(t *testing.T) {
	bin := buildTrawl(t)
	t.Run("serves CONF_ADD and stops on SIGTERM", func(t *testing.T) { testProcessServesConfAdd(t, bin) })
	t.Run("bad usage", func(t *testing.T) { testProcessBadUsage(t, bin) })
}

func testProcessServesConfAdd(t *testing.T, bin string) {
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "crawl.xml")
	if err := os.WriteFile(cfgPath, []byte(processConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	hosts := writeHosts(t, dir, 3)
	addr, cmd, w := startProcess(t, bin, "--data", filepath.Join(dir, "data"), "--config", cfgPath, "--hosts-file", hosts, "--log-level", "debug")

	n := dialFakeNode(t, addr, "node-a", nil)
	add := n.wait("CONF_ADD", isConfAdd("farm")).(*cmt.AdmConfAdd)
	if add.Epoch != 1 || len(add.Config.Collections) != 1 {
		t.Fatalf("CONF_ADD = %+v", add)
	}
	got := add.Config.Collections[0]
	want := cmt.Collection{
		Name: "farm",
		Params: cmt.Params{
			Attribs: []cmt.Attrib{
				cmt.ListAttrib("start_uris", "http://site1.farm.test/", "http://site2.farm.test/"),
				cmt.RealAttrib("delay", 0.5),
				// A boolean travels as an integer and decodes as one.
				cmt.IntAttrib("domain_clustering", 1),
				cmt.IntAttrib("max_sites", 64),
			},
			Sections: []cmt.Section{
				{Name: "link_extraction", Params: cmt.Params{Attribs: []cmt.Attrib{cmt.IntAttrib("a", 1), cmt.IntAttrib("img", 0)}}},
				{Name: "crawlmode", Params: cmt.Params{Attribs: []cmt.Attrib{cmt.StrAttrib("mode", "DEPTH:3")}}},
			},
		},
		Nodes: []cmt.Named{{Name: "node-a", Params: cmt.Params{Attribs: []cmt.Attrib{cmt.RealAttrib("delay", 2.0)}}}},
	}
	sortAttribs := cmp.Transformer("sortAttribs", func(in []cmt.Attrib) map[string]cmt.Attrib {
		out := map[string]cmt.Attrib{}
		for _, a := range in {
			out[a.Name] = a
		}
		return out
	})
	if diff := cmp.Diff(want, got, sortAttribs); diff != "" {
		t.Errorf("crawl configuration (-want +got):\n%s", diff)
	}
	// The start URIs come next (the node answered ASK_ROUTE).
	n.wait("start URI", isURI("http://site1.farm.test/"))
	r := n.wait("route", isRoute("site2.farm.test")).(*cmt.UMAddRoute)
	if r.RouteAttr != "farm.test" || r.NodeID != "node-a" || len(r.Addrs) != 1 || r.Addrs[0].IP != "127.1.0.2" {
		t.Errorf("route = %+v", r)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	// Wait closes the stderr pipe: read it to the end first (os/exec), or
	// the last lines ("multinode: stopped") may be lost.
	go func() { <-w.done; done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v", err)
		}
	case <-time.After(waitTimeout):
		t.Fatal("no exit after SIGTERM")
	}
	w.find(t, regexp.MustCompile(`multinode: stopped`))
	if _, err := os.Stat(filepath.Join(dir, "data", "routes")); err != nil {
		t.Errorf("no routing database: %v", err)
	}
}

func testProcessBadUsage(t *testing.T, bin string) {
	for _, args := range [][]string{{"--log-level", "loud"}, {"extra"}, {"--config", "/nonexistent/crawl.xml"}} {
		cmd := exec.Command(bin, append([]string{"multinode", "--listen", "127.0.0.1:0"}, args...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() == 0 {
			t.Errorf("%v: err %v, want a failing exit", args, err)
		}
		if stderr.Len() == 0 {
			t.Errorf("%v: nothing on stderr", args)
		}
	}
}

// pythonNode is a node scheduler written in Python: stdlib marshal with
// version 2, keys as bytes (Python 2 str), as pyfastmarshal.md B.6 says.
const pythonNode = `
import json, marshal, socket, struct, sys
host, port = sys.argv[1], int(sys.argv[2])
s = socket.create_connection((host, port), timeout=15)
body = marshal.dumps(({b'cm': 24, b'mi': b'py-node', b'xp': (b'localhost', 10000)}, 1), 2)
s.sendall(struct.pack('>I', len(body)) + body)
buf = b''
def read_exact(n):
    global buf
    while len(buf) < n:
        chunk = s.recv(65536)
        if not chunk:
            raise SystemExit('connection closed')
        buf += chunk
    out, buf = buf[:n], buf[n:]
    return out
def text(v):
    return v.decode() if isinstance(v, bytes) else v
while True:
    n = struct.unpack('>I', read_exact(4))[0]
    msg, prio = marshal.loads(read_exact(n))
    if msg[b'cm'] == 1:
        ds = msg[b'ds']
        coll = ds[msg[b'dn']]
        print(json.dumps({
            'priority': prio,
            'dn': text(msg[b'dn']),
            'ds_keys': sorted(text(k) for k in ds),
            'start_uris': [text(u) for u in coll[b'start_uris']],
            'delay': coll[b'delay'],
            'domain_clustering': coll[b'domain_clustering'],
            'link_extraction': {str(k): v for k, v in coll[b'link_extraction'].items()},
            'nodes': sorted(text(k) for k in coll[b'nodes']),
            'epoch': msg.get(b'ep'),
        }, sort_keys=True))
        break
`

func TestPythonNodeScheduler(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		testenv.Missing(t, "python3 not found on this machine")
	}
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "crawl.xml")
	if err := os.WriteFile(cfgPath, []byte(processConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	specs, err := SpecsFromFiles([]string{cfgPath})
	if err != nil {
		t.Fatal(err)
	}
	srv, _ := newTestServer(t, filepath.Join(dir, "data"), writeHosts(t, dir, 3), specs...)
	host, port, _ := net.SplitHostPort(srv.Addr().String())
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, "-c", pythonNode, host, port)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python: %v\n%s", err, stderr.String())
	}
	var got map[string]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("python output %q: %v", out, err)
	}
	want := map[string]any{
		"priority":          float64(0),
		"dn":                "farm",
		"ds_keys":           []any{"farm"},
		"start_uris":        []any{"http://site1.farm.test/", "http://site2.farm.test/"},
		"delay":             0.5,
		"domain_clustering": float64(1),
		"link_extraction":   map[string]any{"1": float64(1), "128": float64(0)},
		"nodes":             []any{"node-a"},
		"epoch":             float64(1),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("what python read (-want +got):\n%s", diff)
	}
}
