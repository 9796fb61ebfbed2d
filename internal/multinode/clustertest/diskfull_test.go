package clustertest

import (
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/diskspace"
	"github.com/trawl/trawl/internal/diskspace/disktest"
)

// TestClusterFullDisk crawls with two node schedulers and a duplicate
// server, separate processes whose --data all live on one 512 MiB tmpfs,
// with --disk-low-water 64MiB --disk-high-water 96MiB. A third of the way
// into the crawl the test fills the file system to 40 MiB free: every
// node scheduler and the duplicate server log "disk full: paused", node 0's
// /metrics says trawl_disk_paused 1 and its status.json disk.paused, and
// the farm sees no request for three guard periods. Removing the filler
// resumes them by themselves; the crawl then completes with every
// expected URL fetched, and the stores, reopened, agree on every
// duplicate group (nothing lost, nothing corrupt).
func TestClusterFullDisk(t *testing.T) {
	dir := disktest.Mount(t, 512<<20)
	admin := freeAddr(t)
	c := newCluster(t, clusterOpts{hosts: 20, pages: farmPages, nodes: 2, dupservers: 1, delay: 0.3, dir: dir,
		diskArgs:  []string{"--disk-low-water", "64MiB", "--disk-high-water", "96MiB"},
		node0Args: []string{"--listen", admin}})
	c.start()
	c.waitProgress(0.3, 100*time.Second)

	freeMiB := func() uint64 {
		free, _, err := diskspace.Read(dir)
		if err != nil {
			t.Fatal(err)
		}
		return free >> 20
	}
	t.Logf("%d of %d expected URLs fetched, %d MiB free: filling to 40 MiB free", c.progress(), len(c.want), freeMiB())
	filler := disktest.Fill(t, dir, 40<<20)
	paused := regexp.MustCompile(`disk full: paused`)
	procs := append(append([]*proc{}, c.nodes...), c.ds...)
	for _, p := range procs {
		p.waitLine(paused, 0, 30*time.Second)
	}
	get := func(path string) string {
		t.Helper()
		resp, err := http.Get("http://" + admin + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if m := get("/metrics"); !strings.Contains(m, "trawl_disk_paused 1\n") {
		t.Errorf("node 0's /metrics while paused:\n%s", grepLines(m, "trawl_disk"))
	}
	var st struct {
		Disk *struct {
			Paused bool   `json:"paused"`
			Free   uint64 `json:"free_bytes"`
		} `json:"disk"`
	}
	if err := json.Unmarshal([]byte(get("/status.json")), &st); err != nil || st.Disk == nil || !st.Disk.Paused {
		t.Errorf("node 0's status.json while paused: %+v %v", st.Disk, err)
	}
	// The fetches in flight finish within a guard period or two; then
	// nothing moves for three more.
	time.Sleep(2 * time.Second)
	before, _ := c.farm.RequestCount()
	time.Sleep(3 * time.Second)
	if after, _ := c.farm.RequestCount(); after != before {
		t.Errorf("%d requests while the disk is full", after-before)
	}
	held := c.progress()
	if held == len(c.want) {
		t.Fatalf("the crawl completed before the disk was full: nothing to show")
	}
	t.Logf("paused at %d of %d expected URLs, %d MiB free", held, len(c.want), freeMiB())

	filler.Remove(t)
	resumed := regexp.MustCompile(`disk space back: resumed`)
	for _, p := range procs {
		p.waitLine(resumed, 0, 30*time.Second)
	}
	if m := get("/metrics"); !strings.Contains(m, "trawl_disk_paused 0\n") || !strings.Contains(m, "trawl_disk_pauses_total 1\n") {
		t.Errorf("node 0's /metrics after the resume:\n%s", grepLines(m, "trawl_disk"))
	}
	c.waitComplete(100*time.Second, 2*time.Second)
	c.stopAll()
	c.checkFetched()
	c.checkDuplicates(c.dsOwners())
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
