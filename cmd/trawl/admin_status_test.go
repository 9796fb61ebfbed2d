package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/admin"
	"github.com/trawl/trawl/internal/testenv"
)

// chromium returns the headless browser, or skips the test when the
// machine has none (test.sh installs it).
func chromium(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"chromium", "chromium-browser", "google-chrome", "/usr/bin/chromium"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	testenv.Missing(t, "no Chromium on this machine (/usr/bin/chromium; test.sh installs it)")
	return ""
}

// statusArtifactDir is where CI keeps the status page's screenshot:
// $TRAWL_ARTIFACTS, or ./artifacts, which ignores itself in git.
func statusArtifactDir(t *testing.T) string {
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

// TestStatusPageChromium loads the status page of a running `trawl run`
// in headless Chromium: the page's script must draw the collection, its
// sites, the rate charts and the error table, and a screenshot is kept as
// a CI artifact.
func TestStatusPageChromium(t *testing.T) {
	browser := chromium(t)
	c := startCrawler(t, 4, 40)
	base := "http://" + c.addr

	// Let the crawl run, the rate history fill and the farm's broken
	// pages give errors.
	deadline := time.Now().Add(60 * time.Second)
	var firstErr string
	for {
		resp, err := http.Get(base + "/status.json")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("status.json: %s %s", resp.Status, resp.Header.Get("Content-Type"))
		}
		var rep admin.StatusReport
		if err := json.Unmarshal(b, &rep); err != nil {
			t.Fatalf("status.json: %v", err)
		}
		if len(rep.Errors) > 0 {
			firstErr = rep.Errors[0].URI
		}
		// Three rate points at least (the charts draw a line from two); the
		// errors have "t" fields too, so count the rates themselves.
		if len(rep.Rates) >= 3 && strings.Contains(string(b), `"site":`) && firstErr != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("status.json never showed sites and rates:\n%s", b)
		}
		time.Sleep(200 * time.Millisecond)
	}
	for _, path := range []string{"/", "/status"} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
			t.Errorf("GET %s: %s %s", path, resp.Status, resp.Header.Get("Content-Type"))
		}
	}

	run := func(args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		profile := t.TempDir()
		all := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
			"--no-first-run", "--user-data-dir=" + profile, "--window-size=1280,1400", "--virtual-time-budget=4000"}, args...)
		out, err := exec.CommandContext(ctx, browser, all...).Output()
		if err != nil {
			t.Fatalf("chromium %v: %v", args, err)
		}
		return string(out)
	}
	dom := run("--dump-dom", base+"/status")
	for _, want := range []string{
		"<table", ">c1<", "crawling", // the collection and its state
		"site0000.farm.test", "site0003.farm.test", // the site table
		"<svg", "<path", "pages / s", "bytes / s", "errors / s", // the charts
		"Recent errors", firstErr, // the error table, with a URI that failed
		`class="bar"`, "%</span>", // the collection's progress
	} {
		if !strings.Contains(dom, want) {
			t.Errorf("rendered page lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("DOM:\n%s", dom)
	}
	shot, err := filepath.Abs(filepath.Join(statusArtifactDir(t), "status-page.png"))
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(shot)
	run("--screenshot="+shot, base+"/status")
	st, err := os.Stat(shot)
	if err != nil || st.Size() < 10_000 {
		t.Fatalf("screenshot %s: %v (%d bytes)", shot, err, st.Size())
	}
	t.Logf("screenshot: %s (%d bytes)", shot, st.Size())
}
