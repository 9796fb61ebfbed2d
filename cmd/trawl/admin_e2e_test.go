package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/index"
	"github.com/trawl/trawl/internal/testenv"
	"github.com/trawl/trawl/internal/webfarm"
)

// crawlerUnderTest is a `trawl run` running in this process on a webfarm
// the test controls.
type crawlerUnderTest struct {
	farm    *webfarm.Farm
	data    string
	config  string
	addr    string // host:port of the HTTP interface
	stderr  *testenv.Buffer
	stdout  *testenv.Buffer
	cancel  context.CancelFunc
	done    chan int
	stopped bool
}

// startCrawler starts a farm and `trawl run` on it with extra flags.
func startCrawler(t *testing.T, hosts, pages int, extra ...string) *crawlerUnderTest {
	t.Helper()
	ctx, cancelFarm := context.WithCancel(context.Background())
	fc := webfarm.DefaultConfig(7, hosts, pages)
	fc.Port = 0
	farm, err := webfarm.New(fc)
	if err != nil {
		t.Fatal(err)
	}
	if err := farm.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancelFarm(); farm.Close() })
	dir := t.TempDir()
	hostsFile := filepath.Join(dir, "hosts")
	if err := os.WriteFile(hostsFile, farm.HostsFile(), 0o644); err != nil {
		t.Fatal(err)
	}
	var x bytes.Buffer
	if err := webfarm.WriteCrawlXML(&x, farm.DefaultCrawl(), webfarm.XMLOptions{Collection: "c1", FetchTimeout: 10}); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "crawl.xml")
	if err := os.WriteFile(cfg, x.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return startRun(t, farm, cfg, hostsFile, filepath.Join(dir, "data"), extra...)
}

// startRun starts `trawl run` in this process on farm with the crawl
// configuration cfg, and waits until it listens.
func startRun(t *testing.T, farm *webfarm.Farm, cfg, hostsFile, data string, extra ...string) *crawlerUnderTest {
	t.Helper()
	c := &crawlerUnderTest{farm: farm, data: data, config: cfg, stderr: &testenv.Buffer{}, stdout: &testenv.Buffer{}, done: make(chan int, 1)}
	rctx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	args := append([]string{"run", "--config", cfg, "--hosts-file", hostsFile, "--data", c.data,
		"--listen", "127.0.0.1:0", "--progress", "off", "--log-level", "warn"}, extra...)
	go func() {
		c.done <- runMain(rctx, &cmdEnv{stdin: strings.NewReader(""), stdout: c.stdout, stderr: c.stderr}, args)
	}()
	t.Cleanup(c.stop)
	re := regexp.MustCompile(`HTTP interface on http://([0-9.:]+)/`)
	deadline := time.Now().Add(20 * time.Second)
	for {
		if m := re.FindStringSubmatch(c.stderr.String()); m != nil {
			c.addr = m[1]
			break
		}
		select {
		case code := <-c.done:
			t.Fatalf("trawl run exited %d before listening:\n%s", code, c.stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("trawl run did not print its address:\n%s", c.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return c
}

// stop stops trawl run and waits for it.
func (c *crawlerUnderTest) stop() {
	if c.stopped {
		return
	}
	c.stopped = true
	c.cancel()
	select {
	case <-c.done:
	case <-time.After(30 * time.Second):
	}
}

// farmServer serves the farm's request log to the Python script:
// /count?url=U is how many times U was requested, /total every request.
func (c *crawlerUnderTest) farmServer(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := 0
		u := r.URL.Query().Get("url")
		for _, req := range c.farm.Requests() {
			if r.URL.Path == "/total" || req.URL == u {
				n++
			}
		}
		json.NewEncoder(w).Encode(n)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func python(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"python3", "/usr/bin/python3"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	testenv.Missing(t, "python3 is not installed on this machine")
	return ""
}

// TestAdminEveryMethodPython drives every MS-FSCADM method with Python's
// standard xmlrpc.client against a running `trawl run`, checking each
// answer's type and meaning and, through the farm's request log and the
// crawl store, that the crawl did what was asked.
func TestAdminEveryMethodPython(t *testing.T) {
	py := python(t)
	uriDir := t.TempDir()
	c := startCrawler(t, 4, 25, "--admin-token", "s3cret", "--admin-files", uriDir)
	farmURL := c.farmServer(t)
	hosts := c.farm.Hosts()
	site := func(i int) string { return fmt.Sprintf("%s:%d", hosts[i].Name, c.farm.Port()) }
	env := []string{
		"ADMIN=http://admin:s3cret@" + c.addr + "/RPC2",
		"ADMIN_NOAUTH=http://" + c.addr + "/RPC2",
		"FARM=" + farmURL,
		"URIDIR=" + uriDir,
		"OUTSIDE=" + c.config,
		"START=" + c.farm.StartURLs()[0],
		"SITE0=" + site(0), "SITE1=" + site(1), "SITE2=" + site(2), "SITE3=" + site(3),
	}
	cmd := exec.Command(py, "testdata/admin_every_method.py")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	t.Logf("python:\n%s", out)
	if err != nil {
		t.Fatalf("python xmlrpc.client script failed: %v\ntrawl stderr:\n%s", err, c.stderr.String())
	}
	if !strings.Contains(string(out), "ALL METHODS OK") {
		t.Fatalf("script did not finish")
	}
	// The deletions reach the index through the feed: wait until it has
	// fed everything before stopping the crawler and looking.
	waitFor(t, "the feed backlog drained", 60*time.Second, func() bool {
		return feedBacklog(t, "http://admin:s3cret@"+c.addr+"/metrics") == 0
	})
	c.stop()

	// The deleted site is gone from the store; the deleted URI too.
	code, list, errOut := runTrawl(t, "", "store", "list", "--data", filepath.Join(c.data, "node"), "--collection", "c1", "--site", site(3))
	if code != 0 || strings.TrimSpace(list) != "" {
		t.Errorf("site %s still in the store after CollectionDeleteSite (exit %d, %s):\n%s", site(3), code, errOut, list)
	}
	_, all, _ := runTrawl(t, "", "store", "list", "--data", filepath.Join(c.data, "node"), "--collection", "c1")
	if !strings.Contains(all, site(0)) {
		t.Errorf("store lost site %s, which was not deleted", site(0))
	}
	if deleted := "http://" + site(2) + "/\n"; strings.Contains(all, " "+deleted) {
		t.Errorf("%s still in the store after CollectionDeleteURIs", deleted)
	}

	// The deleted site is gone from the index too; the others are there.
	idx, err := index.Open(filepath.Join(c.data, "index"), index.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	found := map[string]int{}
	for _, r := range c.farm.Requests() {
		for _, s := range []string{site(0), site(3)} {
			if strings.HasPrefix(r.URL, "http://"+s+"/") {
				got, err := idx.Lookup(context.Background(), "c1", r.URL)
				if err != nil {
					t.Fatal(err)
				}
				if got.Found {
					found[s]++
				}
			}
		}
	}
	if found[site(3)] != 0 || found[site(0)] == 0 {
		t.Errorf("documents in the index: %d of the deleted site %s (want 0), %d of %s (want some)", found[site(3)], site(3), found[site(0)], site(0))
	}
}
