package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/trawl/trawl/internal/feed"
	"github.com/trawl/trawl/internal/index"
	"github.com/trawl/trawl/internal/store"
	"github.com/trawl/trawl/internal/testenv"
	"github.com/trawl/trawl/internal/webfarm"
)

// demoFarm rebuilds, without serving it, the synthetic web that
// `trawl run --demo` crawled into data, to ask what it served.
func demoFarm(t testing.TB, data string, hosts, pages int) *webfarm.Farm {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(data, "demo", "port"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := webfarm.DefaultConfig(1, hosts, pages)
	if cfg.Port, err = strconv.Atoi(strings.TrimSpace(string(b))); err != nil {
		t.Fatal(err)
	}
	farm, err := webfarm.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return farm
}

// indexableDocs returns what the index of a demo run must hold: the
// fetched documents of the crawl store that are not duplicates and that
// the synthetic web did not mark noindex.
func indexableDocs(t *testing.T, data string, farm *webfarm.Farm) (want []string, noindex, dups int) {
	t.Helper()
	st, err := store.Open(filepath.Join(data, "node"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	err = st.URIs("demo", "", func(r *store.URIRecord) error {
		switch r.Status {
		case store.StatusFetched, store.StatusNotModified:
		case store.StatusDuplicate:
			dups++
			return nil
		default:
			return nil
		}
		res, err := farm.Describe(r.URI, 0)
		if err != nil {
			return err
		}
		if res.NoIndex {
			noindex++
		} else {
			want = append(want, r.URI)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(want)
	return want, noindex, dups
}

// checkRunIndex checks that the index of data holds exactly want.
func checkRunIndex(t *testing.T, data string, want []string) {
	t.Helper()
	idx, err := index.Open(filepath.Join(data, "index"), index.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	n, err := idx.Count()
	if err != nil {
		t.Fatal(err)
	}
	if int(n) != len(want) {
		t.Errorf("index holds %d documents; the crawl store has %d indexable ones", n, len(want))
	}
	missing := 0
	for _, u := range want {
		got, err := idx.Lookup(context.Background(), "demo", u)
		if err != nil {
			t.Fatal(err)
		}
		if !got.Found {
			if missing++; missing <= 10 {
				t.Errorf("not in the index: %s", u)
			}
		}
	}
}

// TestRunIndexesCrawl runs `trawl run --demo` and checks that the index
// under --data holds exactly the fetched, non-duplicate, indexable
// documents, and that `trawl search` finds pages by their title phrase,
// those pages first.
func TestRunIndexesCrawl(t *testing.T) {
	data := t.TempDir()
	code, out, errOut := runTrawl(t, "", "run", "--demo", "--data", data, "--demo-hosts", "4", "--demo-pages", "30",
		"--progress", "off", "--listen", "off")
	if code != 0 {
		t.Fatalf("trawl run exit %d\n%s\n%s", code, out, errOut)
	}
	if !regexp.MustCompile(`indexed\s+\d+ documents in the index .*0 operations waiting`).MatchString(out) {
		t.Errorf("no indexing line in the summary:\n%s", out)
	}
	farm := demoFarm(t, data, 4, 30)
	want, noindex, dups := indexableDocs(t, data, farm)
	if len(want) < 50 || noindex == 0 || dups == 0 {
		t.Fatalf("%d indexable, %d noindex, %d duplicates: not a useful test", len(want), noindex, dups)
	}
	checkRunIndex(t, data, want)
	t.Logf("index holds the %d indexable documents (%d noindex and %d duplicates left out)", len(want), noindex, dups)

	// Search for the titles of a few pages, as quoted phrases.
	checked := 0
	for _, u := range want {
		if checked == 5 {
			break
		}
		res, err := farm.Describe(u, 0)
		if err != nil || res.Status != 200 {
			continue
		}
		title := feed.ExtractText(res.ContentType, res.Body).Title
		if len(strings.Fields(title)) < 3 {
			continue
		}
		checked++
		code, js, errOut := runTrawl(t, "", "search", "--data", data, "--json", "--size", "20", `"`+title+`"`)
		if code != 0 {
			t.Fatalf("trawl search: exit %d: %s", code, errOut)
		}
		var r index.Results
		if err := json.Unmarshal([]byte(js), &r); err != nil {
			t.Fatal(err)
		}
		// Every page with that title comes before any other.
		var with []string
		for _, u2 := range want {
			if d, err := farm.Describe(u2, 0); err == nil && d.Status == 200 && feed.ExtractText(d.ContentType, d.Body).Title == title {
				with = append(with, u2)
			}
		}
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
		if !contains(with, u) {
			t.Errorf("search %q: %s not among %v", title, u, with)
		}
	}
	if checked == 0 {
		t.Fatal("no page with a title of 3 words or more")
	}
}

func contains(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

// TestRunChild is the child process of TestRunKill9Feeding: it runs
// `trawl run` with the arguments in TRAWL_RUN_CHILD_ARGS, and does nothing
// otherwise.
func TestRunChild(t *testing.T) {
	args := os.Getenv("TRAWL_RUN_CHILD_ARGS")
	if args == "" {
		return
	}
	env := &cmdEnv{stdin: strings.NewReader(""), stdout: os.Stdout, stderr: os.Stderr}
	// As main: SIGINT and SIGTERM stop the run cleanly.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := runMain(ctx, env, strings.Split(args, "\x1f"))
	stop()
	os.Exit(code)
}

// TestRunKill9Feeding kills `trawl run` with SIGKILL three times while it
// crawls and feeds, then lets a last run finish: the index must again hold
// exactly the indexable documents of the crawl store.
func TestRunKill9Feeding(t *testing.T) {
	data := t.TempDir()
	// Each run is killed once it has fetched about 100 documents itself
	// (the progress line counts this run's fetches and comes every 250 ms,
	// so the kill lands somewhat later); the farm is large enough that
	// three such runs never finish the crawl.
	const hosts, pages = 10, 100
	args := []string{"run", "--demo", "--data", data, "--demo-hosts", strconv.Itoa(hosts), "--demo-pages", strconv.Itoa(pages),
		"--listen", "off", "--workers", "8"}
	fetched := regexp.MustCompile(`fetched (\d+)`)
	for i, at := range []int{100, 100, 100} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestRunChild$")
		cmd.Env = append(os.Environ(), "TRAWL_RUN_CHILD_ARGS="+strings.Join(append(args, "--progress", "on"), "\x1f"))
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		killed := make(chan int, 1)
		go func() {
			sc := bufio.NewScanner(stderr)
			sc.Split(splitCR)
			n := 0
			for sc.Scan() {
				if m := fetched.FindStringSubmatch(sc.Text()); m != nil {
					n, _ = strconv.Atoi(m[1])
					if n >= at {
						_ = cmd.Process.Signal(syscall.SIGKILL)
						break
					}
				}
			}
			_, _ = io.Copy(io.Discard, stderr)
			killed <- n
		}()
		timer := time.AfterFunc(120*time.Second, func() { _ = cmd.Process.Kill() })
		err = cmd.Wait()
		timer.Stop()
		n := <-killed
		if ee, ok := err.(*exec.ExitError); !ok || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Fatalf("run %d: not killed (%v) after %d fetches", i, err, n)
		}
		t.Logf("run %d killed after %d fetches", i, n)
	}
	code, out, errOut := runTrawl(t, "", append(args, "--progress", "off")...)
	if code != 0 {
		t.Fatalf("last run: exit %d\n%s\n%s", code, out, errOut)
	}
	t.Logf("last run:\n%s", out)
	want, _, _ := indexableDocs(t, data, demoFarm(t, data, hosts, pages))
	checkRunIndex(t, data, want)
}

// splitCR splits the progress output at \r and \n.
func splitCR(data []byte, atEOF bool) (int, []byte, error) {
	if i := bytes.IndexAny(data, "\r\n"); i >= 0 {
		return i + 1, data[:i], nil
	}
	if atEOF && len(data) > 0 {
		return len(data), data, nil
	}
	return 0, nil, nil
}

// searchArtifactDir is where CI keeps the search page's screenshot:
// $TRAWL_ARTIFACTS, or ./artifacts, which ignores itself in git.
func searchArtifactDir(t *testing.T) string {
	dir := os.Getenv("TRAWL_ARTIFACTS")
	if dir == "" {
		dir = "artifacts"
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("*\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestRunSearchPageInBrowser crawls a synthetic web with `trawl run` and
// uses its search page in headless Chromium over the DevTools protocol
// (chromedp): type a query, submit, see ten results, click Next, see the
// second page, and keep a screenshot of it.
func TestRunSearchPageInBrowser(t *testing.T) {
	var bin string
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			bin = p
			break
		}
	}
	if bin == "" {
		testenv.Missing(t, "chromium is not installed (apt-get install chromium)")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fc := webfarm.DefaultConfig(3, 3, 30)
	fc.StallMax = 0
	fc.Port = 0 // a port free on every address
	farm, err := webfarm.New(fc)
	if err != nil {
		t.Fatal(err)
	}
	if err := farm.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer farm.Close()
	dir := t.TempDir()
	hosts := filepath.Join(dir, "hosts")
	if err := os.WriteFile(hosts, farm.HostsFile(), 0o644); err != nil {
		t.Fatal(err)
	}
	var x bytes.Buffer
	if err := webfarm.WriteCrawlXML(&x, farm.DefaultCrawl(), webfarm.XMLOptions{Collection: "web", FetchTimeout: 10}); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "crawl.xml")
	if err := os.WriteFile(cfg, x.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan int, 1)
	var runOut, runErr bytes.Buffer
	go func() {
		env := &cmdEnv{stdin: strings.NewReader(""), stdout: &runOut, stderr: &runErr}
		done <- runMain(runCtx, env, []string{"run", "--config", cfg, "--hosts-file", hosts, "--data", filepath.Join(dir, "data"),
			"--listen", addr, "--progress", "off"})
	}()
	defer func() {
		stop()
		if code := <-done; code != 0 {
			t.Errorf("trawl run: exit %d\n%s", code, runErr.String())
		}
	}()

	// A word of the synthetic web's vocabulary that many pages have: the
	// first word of the home page's text.
	home, err := farm.Describe(farm.StartURLs()[0], 0)
	if err != nil {
		t.Fatal(err)
	}
	word := strings.ToLower(strings.Trim(strings.Fields(feed.ExtractText(home.ContentType, home.Body).Text)[0], ".,"))
	// Wait until the crawl has indexed enough to page through.
	deadline := time.Now().Add(90 * time.Second)
	for {
		var r index.Results
		resp, err := http.Get("http://" + addr + "/api/search?q=" + word)
		if err == nil {
			err = json.NewDecoder(resp.Body).Decode(&r)
			resp.Body.Close()
		}
		if err == nil && r.Total > 25 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("search API: %v, %d results for %q\n%s", err, r.Total, word, runErr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(bin), chromedp.NoSandbox,
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.UserDataDir(filepath.Join(dir, "profile")),
		chromedp.WindowSize(1024, 1200))
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	defer acancel()
	bctx, bcancel := chromedp.NewContext(actx)
	defer bcancel()
	bctx, tcancel := context.WithTimeout(bctx, 90*time.Second)
	defer tcancel()

	var hits1, hits2 int
	var start2, loc string
	var shot []byte
	var ok bool
	steps := []struct {
		name string
		act  chromedp.Action
	}{
		{"open the search page", chromedp.Navigate("http://" + addr + "/search")},
		{"see the query box", chromedp.WaitVisible(`input[name=q]`, chromedp.ByQuery)},
		{"type the query", chromedp.SendKeys(`input[name=q]`, word, chromedp.ByQuery)},
		{"submit", chromedp.Click(`button[type=submit]`, chromedp.ByQuery)},
		{"see results", chromedp.WaitVisible(`#results li.hit`, chromedp.ByQuery)},
		{"count results", chromedp.Evaluate(`document.querySelectorAll("#results li.hit").length`, &hits1)},
		{"click Next", chromedp.Click(`a[rel=next]`, chromedp.ByQuery)},
		{"see page 2", chromedp.WaitVisible(`a[rel=prev]`, chromedp.ByQuery)},
		{"count results", chromedp.Evaluate(`document.querySelectorAll("#results li.hit").length`, &hits2)},
		{"read the first number", chromedp.AttributeValue(`#results`, "start", &start2, &ok, chromedp.ByQuery)},
		{"read the location", chromedp.Location(&loc)},
		{"take a screenshot", chromedp.FullScreenshot(&shot, 100)},
	}
	for _, s := range steps {
		if err := chromedp.Run(bctx, s.act); err != nil {
			t.Fatalf("browser: %s: %v", s.name, err)
		}
	}
	if hits1 != 10 || hits2 == 0 || start2 != "11" || !strings.Contains(loc, "from=10") || !strings.Contains(loc, "q="+word) {
		t.Errorf("first page %d hits; after Next: %d hits starting at %q, location %s", hits1, hits2, start2, loc)
	}
	if len(shot) < 1000 {
		t.Fatalf("screenshot is %d bytes", len(shot))
	}
	path := filepath.Join(searchArtifactDir(t), "search-page-2.png")
	if err := os.WriteFile(path, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("query %q: %d + %d results shown; screenshot %s (%d bytes)", word, hits1, hits2, path, len(shot))
}
