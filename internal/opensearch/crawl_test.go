package opensearch

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/feed"
	"github.com/trawl/trawl/internal/index"
	"github.com/trawl/trawl/internal/store"
	"github.com/trawl/trawl/internal/webfarm"
)

// crawlFarm starts a small synthetic web and writes its hosts file and a
// crawl configuration (collection "demo") into dir.
func crawlFarm(t *testing.T, dir string) (farm *webfarm.Farm, cfg, hosts string) {
	t.Helper()
	fc := webfarm.DefaultConfig(5, 4, 30)
	fc.Port, fc.StallMax = 0, 2*time.Second
	farm, err := webfarm.New(fc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := farm.Start(ctx); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); farm.Close() })
	hosts = filepath.Join(dir, "hosts")
	if err := os.WriteFile(hosts, farm.HostsFile(), 0o644); err != nil {
		t.Fatal(err)
	}
	var x bytes.Buffer
	if err := webfarm.WriteCrawlXML(&x, farm.DefaultCrawl(), webfarm.XMLOptions{Collection: "demo", FetchTimeout: 10}); err != nil {
		t.Fatal(err)
	}
	cfg = filepath.Join(dir, "demo.xml")
	if err := os.WriteFile(cfg, x.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return farm, cfg, hosts
}

// indexable returns the URIs the index must hold after cycle: the fetched
// documents of the crawl store that are not duplicates and that the farm
// did not mark noindex.
func indexable(t *testing.T, data string, farm *webfarm.Farm, cycle int) []string {
	t.Helper()
	st, err := store.Open(filepath.Join(data, "node"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var want []string
	err = st.URIs("demo", "", func(r *store.URIRecord) error {
		if r.Status != store.StatusFetched && r.Status != store.StatusNotModified {
			return nil
		}
		res, err := farm.Describe(r.URI, cycle)
		if err != nil {
			return err
		}
		if !res.NoIndex {
			want = append(want, r.URI)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(want)
	return want
}

// checkIndexed checks that index idx holds exactly want, each once.
func checkIndexed(t *testing.T, c *cluster, idx string, want []string) {
	t.Helper()
	got := c.docs(t, idx)
	bad := 0
	for _, u := range want {
		if got[u] != 1 {
			if bad++; bad <= 10 {
				t.Errorf("%s is in OpenSearch %d times, want once", u, got[u])
			}
		}
	}
	if len(got) != len(want) {
		t.Errorf("OpenSearch index %s holds %d URLs; the crawl store has %d indexable documents", idx, len(got), len(want))
	}
}

// TestCrawlIntoOpenSearch runs `trawl run --once --index opensearch://...`
// over a synthetic web: the OpenSearch index then holds every indexable
// document of the crawl store exactly once, and `trawl search --index
// opensearch://...` finds pages by their title phrase, those pages first.
// Then the web moves on two cycles and a refetch runs (`trawl run` again,
// `trawl admin refetch`): the pages that left the crawl are gone from the
// index, which again holds exactly the indexable documents.
func TestCrawlIntoOpenSearch(t *testing.T) {
	c := clusterFor(t)
	trawl := trawlFor(t)
	dir := t.TempDir()
	farm, cfg, hosts := crawlFarm(t, dir)
	data := filepath.Join(dir, "data")
	const idx = "crawl"
	url := c.url(idx)
	defer c.call(context.Background(), 0, "DELETE", "/"+idx, nil, nil)

	start := time.Now()
	out, err := exec.Command(trawl, "run", "--config", cfg, "--hosts-file", hosts, "--data", data, "--once",
		"--progress", "off", "--listen", "off", "--index", url).CombinedOutput()
	if err != nil {
		t.Fatalf("trawl run: %v\n%s", err, out)
	}
	if !regexp.MustCompile(`fed\s+into OpenSearch index crawl at .* 0 operations waiting`).Match(out) {
		t.Errorf("no feeding line in the summary:\n%s", out)
	}
	want0 := indexable(t, data, farm, 0)
	if len(want0) < 50 {
		t.Fatalf("%d indexable documents: not a useful test", len(want0))
	}
	checkIndexed(t, c, idx, want0)
	t.Logf("cycle 0: %d documents in OpenSearch, as in the crawl store (%v)", len(want0), time.Since(start))

	checkPhrases(t, trawl, url, farm, want0)

	// Cycle 2 (pages die in cycles 1 and 2): pages change and some go; a
	// refetch of the collection.
	farm.SetCycle(2)
	start = time.Now()
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	run := exec.Command(trawl, "run", "--config", cfg, "--hosts-file", hosts, "--data", data,
		"--progress", "off", "--listen", addr, "--index", url)
	var runOut bytes.Buffer
	run.Stdout, run.Stderr = &runOut, &runOut
	run.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	defer run.Process.Kill()
	// The refetch is asked again until the farm sees requests of cycle 2
	// (one asked before the collection is running may find nothing to do).
	refetch := func() {
		if out, err := exec.Command(trawl, "admin", "-C", addr, "refetch", "demo").CombinedOutput(); err != nil {
			t.Logf("trawl admin refetch: %v: %s", err, bytes.TrimSpace(out))
		}
	}
	waitQuiet(t, farm, "http://"+addr+"/metrics", refetch, 3*time.Minute)
	t.Logf("cycle 2 crawled and fed (%v)", time.Since(start))
	run.Process.Signal(syscall.SIGTERM)
	if err := run.Wait(); err != nil {
		t.Fatalf("trawl run (cycle 2): %v\n%s", err, runOut.String())
	}
	want1 := indexable(t, data, farm, 2)
	checkIndexed(t, c, idx, want1)
	in1 := map[string]bool{}
	for _, u := range want1 {
		in1[u] = true
	}
	got := c.docs(t, idx)
	gone := 0
	for _, u := range want0 {
		if !in1[u] {
			gone++
			if got[u] != 0 {
				t.Errorf("%s left the crawl in cycle 2 but is still in OpenSearch", u)
			}
		}
	}
	if gone == 0 {
		t.Errorf("no page left the crawl in cycle 2: not a useful test")
	}
	t.Logf("cycle 2 (%v): %d documents in OpenSearch, %d removed", time.Since(start), len(want1), gone)
}

// waitQuiet waits until the farm has answered requests of its current
// cycle, none for 3 s, and the feeding backlog of metrics is 0; while the
// farm has seen no request of the cycle it calls kick every 5 s.
func waitQuiet(t *testing.T, farm *webfarm.Farm, metrics string, kick func(), d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	last, since := -1, time.Now()
	var kicked time.Time
	for time.Now().Before(deadline) {
		if last <= 0 && time.Since(kicked) > 5*time.Second {
			kick()
			kicked = time.Now()
			t.Logf("refetch asked, %d requests of cycle %d so far", max(last, 0), farm.Cycle())
		}
		n := 0
		for _, r := range farm.Requests() {
			if r.Cycle == farm.Cycle() {
				n++
			}
		}
		if n != last {
			last, since = n, time.Now()
		}
		if n > 0 && time.Since(since) > 3*time.Second && backlog(metrics) == 0 {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("the crawl did not settle in %v (%d requests of cycle %d, backlog %v)", d, last, farm.Cycle(), backlog(metrics))
}

// backlog is trawl_feed_backlog of a running trawl run (-1 when unknown).
func backlog(metrics string) float64 {
	resp, err := http.Get(metrics)
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	m := regexp.MustCompile(`(?m)^trawl_feed_backlog (\S+)$`).FindSubmatch(b)
	if m == nil {
		return -1
	}
	var v float64
	fmt.Sscan(string(m[1]), &v)
	return v
}

// checkPhrases searches for the titles of a few pages as quoted phrases
// through `trawl search --index URL`: every page with that title comes
// before any other.
func checkPhrases(t *testing.T, trawl, url string, farm *webfarm.Farm, want []string) {
	t.Helper()
	titles := map[string][]string{}
	for _, u := range want {
		if d, err := farm.Describe(u, 0); err == nil && d.Status == 200 {
			if title := feed.ExtractText(d.ContentType, d.Body).Title; title != "" {
				titles[title] = append(titles[title], u)
			}
		}
	}
	checked := 0
	for _, u := range want {
		if checked == 5 {
			break
		}
		d, err := farm.Describe(u, 0)
		if err != nil || d.Status != 200 {
			continue
		}
		title := feed.ExtractText(d.ContentType, d.Body).Title
		if len(strings.Fields(title)) < 3 {
			continue
		}
		checked++
		out, err := exec.Command(trawl, "search", "--index", url, "--json", "--size", "20", `"`+title+`"`).Output()
		if err != nil {
			t.Fatalf("trawl search: %v", err)
		}
		var r index.Results
		if err := json.Unmarshal(out, &r); err != nil {
			t.Fatal(err)
		}
		with := titles[title]
		sort.Strings(with)
		if len(r.Hits) < len(with) {
			t.Errorf("search %q: %d hits, %d pages have that title", title, len(r.Hits), len(with))
			continue
		}
		var top []string
		for _, h := range r.Hits[:len(with)] {
			top = append(top, h.URL)
		}
		sort.Strings(top)
		if strings.Join(top, " ") != strings.Join(with, " ") {
			t.Errorf("search %q: first hits %v, pages with that title %v", title, top, with)
		}
		if !strings.Contains(r.Hits[0].TitleHTML, "<mark>") {
			t.Errorf("search %q: title not highlighted: %q", title, r.Hits[0].TitleHTML)
		}
	}
	if checked == 0 {
		t.Fatal("no page with a title of 3 words or more")
	}
}
