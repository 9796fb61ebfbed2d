package webanalyzer

import (
	"bufio"
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
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/testenv"
	"github.com/trawl/trawl/internal/webfarm"
)

// buildTrawl builds the trawl binary into dir.
func buildTrawl(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "trawl")
	args := []string{"build", "-o", bin}
	if raceEnabled {
		args = append(args, "-race")
	}
	out, err := exec.Command("go", append(args, "github.com/trawl/trawl/cmd/trawl")...).CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestTrawlRunAnalysesEachCycle: trawl run on a small farm with a 6 s
// refresh runs the web analyzer when a refresh cycle ends (its progress in
// the log), the status page and status.json show the last run (start,
// duration, pages ranked, links, errors, and the ranks applied to the
// index: every ranked page's, through the feeding chain), and trawl
// webanalyzer ranks prints the ranks afterwards.
func TestTrawlRunAnalysesEachCycle(t *testing.T) {
	dir := t.TempDir()
	bin := buildTrawl(t, dir)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Under the race detector every table program is a slow process: a
	// smaller web and two rounds of the rank iteration.
	hosts, pages, rounds := 3, 15, "10"
	if raceEnabled {
		hosts, pages, rounds = 2, 12, "2"
	}
	d, err := webfarm.StartDemo(ctx, filepath.Join(dir, "farm"), webfarm.DefaultConfig(3, hosts, pages))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Farm.Close()
	var x bytes.Buffer
	err = webfarm.WriteCrawlXML(&x, d.Farm.DefaultCrawl(), webfarm.XMLOptions{Collection: "farm", FetchTimeout: 10,
		Extra: "<attrib name=\"refresh\" type=\"real\">0.1</attrib>\n"})
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "crawl.xml")
	if err := os.WriteFile(cfg, x.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	cmd := exec.Command(bin, "run", "--config", cfg, "--hosts-file", d.HostsFile, "--data", data,
		"--listen", "127.0.0.1:0", "--log-level", "info", "--progress", "off", "--webanalyzer-rounds", rounds)
	cmd.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0")
	log := &testenv.Buffer{}
	cmd.Stderr = log
	cmd.Stdout = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() {
		cmd.Process.Kill()
		if t.Failed() {
			s := log.String()
			if len(s) > 8000 {
				s = s[len(s)-8000:]
			}
			t.Logf("trawl run's log:\n%s", s)
		}
	}()
	addrRE := regexp.MustCompile(`HTTP interface on http://([0-9.:]+)/`)
	var addr string
	for deadline := time.Now().Add(2 * time.Minute); addr == "" && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if m := addrRE.FindStringSubmatch(log.String()); m != nil {
			addr = m[1]
		}
	}
	if addr == "" {
		t.Fatal("trawl run did not announce its HTTP interface")
	}
	type analysis struct {
		Name          string  `json:"name"`
		Runs          int     `json:"runs"`
		Failed        int     `json:"failed"`
		Started       float64 `json:"started"`
		Seconds       float64 `json:"seconds"`
		Ranked        int     `json:"ranked"`
		Links         int     `json:"links"`
		Error         string  `json:"error"`
		Running       bool    `json:"running"`
		ChangedLinks  int     `json:"changed_links"`
		IncrementalOK bool    `json:"incremental"`
		RanksQueued   int     `json:"ranks_queued"`
		RanksApplied  int     `json:"ranks_applied"`
	}
	var last analysis
	deadline := time.Now().Add(3 * time.Minute)
	for last.Runs < 1 || last.RanksQueued == 0 || last.RanksApplied < last.RanksQueued {
		if time.Now().After(deadline) {
			t.Fatalf("no web analyzer run with its ranks applied after 3 minutes: %+v", last)
		}
		select {
		case err := <-done:
			t.Fatalf("trawl run exited: %v", err)
		case <-time.After(500 * time.Millisecond):
		}
		resp, err := http.Get("http://" + addr + "/status.json")
		if err != nil {
			continue
		}
		var rep struct {
			Analyses []analysis `json:"analyses"`
		}
		err = json.NewDecoder(resp.Body).Decode(&rep)
		resp.Body.Close()
		if err != nil || len(rep.Analyses) != 1 {
			t.Fatalf("status.json: %v, analyses %+v", err, rep.Analyses)
		}
		last = rep.Analyses[0]
	}
	if last.Name != "webanalyzer" || last.Failed != 0 || last.Error != "" || last.Started == 0 || last.Seconds <= 0 ||
		last.Ranked < hosts*pages/2 || last.Links < hosts*pages/2 || last.RanksQueued != last.Ranked {
		t.Errorf("last run on the status page: %+v", last)
	}
	for _, want := range []string{"a refresh cycle ended; running the analysis", "webanalyzer: build:", "targets done", "webanalyzer: run done"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("the log lacks %q", want)
		}
	}
	resp, err := http.Get("http://" + addr + "/status")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{"Link analysis", "ranks applied", `"analyses"`, fmt.Sprintf(`"ranked":%d`, last.Ranked)} {
		if !bytes.Contains(page, []byte(want)) {
			t.Errorf("the status page lacks %q", want)
		}
	}
	// A clean stop, then the ranks of the last run.
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("trawl run did not stop")
	}
	out, err := exec.Command(bin, "webanalyzer", "ranks", "--data", data).Output()
	if err != nil {
		t.Fatalf("webanalyzer ranks: %v", err)
	}
	n := 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) != 3 || !strings.HasPrefix(f[0], "http://") {
			t.Fatalf("ranks line %q", sc.Text())
		}
		n++
	}
	if n < last.Ranked {
		t.Errorf("ranks printed %d URLs, the status page said %d ranked", n, last.Ranked)
	}
}
