package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/testenv"
)

// roleProcess is a trawl role (`trawl multinode`, `trawl node`, ...)
// running in this process (runMain, real TCP on 127.0.0.1).
type roleProcess struct {
	stderr *testenv.Buffer
	stdout *testenv.Buffer
	cancel context.CancelFunc
	done   chan int
}

// startRole runs trawl with args and waits until its stderr (or its
// stdout) matches every pattern; it returns the first submatch of each.
func startRole(t *testing.T, args []string, patterns ...string) (*roleProcess, []string) {
	t.Helper()
	p := &roleProcess{stderr: &testenv.Buffer{}, stdout: &testenv.Buffer{}, done: make(chan int, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	p.cancel = cancel
	go func() {
		p.done <- runMain(ctx, &cmdEnv{stdin: strings.NewReader(""), stdout: p.stdout, stderr: p.stderr}, args)
	}()
	t.Cleanup(p.stop)
	out := make([]string, len(patterns))
	deadline := time.Now().Add(20 * time.Second)
	for i, pat := range patterns {
		re := regexp.MustCompile(pat)
		for {
			if m := re.FindStringSubmatch(p.stderr.String()); m != nil {
				out[i] = m[1]
				break
			}
			if m := re.FindStringSubmatch(p.stdout.String()); m != nil {
				out[i] = m[1]
				break
			}
			select {
			case code := <-p.done:
				p.done <- code
				t.Fatalf("trawl %s exited %d before printing %q:\n%s", args[0], code, pat, p.stderr.String())
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("trawl %s did not print %q:\n%s", args[0], pat, p.stderr.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return p, out
}

func (p *roleProcess) stop() {
	p.cancel()
	select {
	case code := <-p.done:
		p.done <- code
	case <-time.After(30 * time.Second):
	}
}

// TestAdminMultinodePython drives the MS-FSCADM methods of a running
// `trawl multinode` and `trawl node` with Python's xmlrpc.client, then
// restarts both with the same --data and checks that the collection added
// over the API is back and crawls.
func TestAdminMultinodePython(t *testing.T) {
	py := python(t)
	fx := newFarmFixture(t, 11, 3, 20)
	dir, hostsFile, counts := fx.dir, fx.hostsFile, fx.counts
	mcXML, keepXML := fx.writeXML(t, "mc"), fx.writeXML(t, "keep")
	mnsData, nodeData := filepath.Join(dir, "mns"), filepath.Join(dir, "node")

	start := func() (mns, node *roleProcess, mnsAdmin, nodeAdmin string) {
		mns, got := startRole(t, []string{"multinode", "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0",
			"--data", mnsData, "--hosts-file", hostsFile, "--log-level", "info"},
			`trawl multinode: HTTP interface on http://([0-9.:]+)/`,
			`listening for node schedulers" addr=([0-9.:]+)`)
		node, ngot := startRole(t, []string{"node", "--id", "n1", "--multinode", got[1], "--data", nodeData,
			"--listen", "127.0.0.1:0", "--log-level", "info", "--workers", "8"},
			`trawl node: HTTP interface on http://([0-9.:]+)/`)
		return mns, node, got[0], ngot[0]
	}
	script := func(mode, mnsAdmin, nodeAdmin string, procs ...*roleProcess) {
		t.Helper()
		_, port, _ := strings.Cut(nodeAdmin, ":")
		cmd := exec.Command(py, "testdata/admin_multinode.py")
		cmd.Env = append(os.Environ(), "MODE="+mode, "MNS=http://"+mnsAdmin+"/RPC2", "NODE=http://"+nodeAdmin+"/RPC2",
			"FARM="+counts.URL, "XML="+mcXML, "KEEPXML="+keepXML, "NODEPORT="+port,
			"SITE0="+fx.site0)
		out, err := cmd.CombinedOutput()
		t.Logf("python (%s):\n%s", mode, out)
		if err != nil {
			for _, p := range procs {
				t.Logf("stderr:\n%s", p.stderr.String())
			}
			t.Fatalf("python xmlrpc.client script (%s) failed: %v", mode, err)
		}
	}

	mns, node, mnsAdmin, nodeAdmin := start()
	script("main", mnsAdmin, nodeAdmin, mns, node)
	node.stop()
	mns.stop()
	if _, err := os.Stat(filepath.Join(mnsData, "collections", "keep.xml")); err != nil {
		t.Errorf("the collection added over the API was not saved: %v", err)
	}
	if _, err := os.Stat(filepath.Join(mnsData, "collections", "mc.xml")); !os.IsNotExist(err) {
		t.Errorf("the deleted collection's saved copy is still there (%v)", err)
	}

	mns, node, mnsAdmin, nodeAdmin = start()
	script("restart", mnsAdmin, nodeAdmin, mns, node)
}
