package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestRunDemo runs the README's main job on a small synthetic web: every
// role in one process over in-memory MS-FSCMT connections. The crawl must
// fetch exactly the URLs a correct crawl fetches, and a second run on the
// same data directory must find the crawl already complete.
func TestRunDemo(t *testing.T) {
	data := t.TempDir()
	args := []string{"run", "--demo", "--data", data, "--demo-hosts", "4", "--demo-pages", "30", "--progress", "off"}
	code, out, errOut := runTrawl(t, "", args...)
	if code != 0 {
		t.Fatalf("trawl run exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	m := regexp.MustCompile(`completeness\s+(\d+) of (\d+) expected URLs fetched \((\d+) missing\), (\d+) distinct URLs requested`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no completeness line in summary:\n%s", out)
	}
	if m[1] != m[2] || m[3] != "0" || m[4] != m[2] {
		t.Errorf("crawl is not exact: %s", m[0])
	}
	for _, f := range []string{"demo/crawl.xml", "demo/hosts", "node", "multinode", "dupserver"} {
		if _, err := os.Stat(filepath.Join(data, f)); err != nil {
			t.Errorf("state %s missing: %v", f, err)
		}
	}

	// A second run on the same data continues the same crawl: it is
	// complete, so nothing but robots.txt is fetched again.
	code, out2, errOut := runTrawl(t, "", args...)
	if code != 0 {
		t.Fatalf("second run: exit %d\n%s\n%s", code, out2, errOut)
	}
	if m := regexp.MustCompile(`documents stored\s+(\d+)`).FindStringSubmatch(out2); m == nil || m[1] != "0" {
		t.Errorf("second run stored documents again:\n%s", out2)
	}

	// The store holds what was crawled.
	code, list, errOut := runTrawl(t, "", "store", "list", "--data", filepath.Join(data, "node"))
	if code != 0 || strings.Count(list, "\n") < 50 {
		t.Errorf("store list: exit %d, %d lines, stderr %s", code, strings.Count(list, "\n"), errOut)
	}
}

func TestRunUsage(t *testing.T) {
	if code, _, errOut := runTrawl(t, "", "run", "--demo", "--config", "x.xml"); code != 2 || !strings.Contains(errOut, "exclude each other") {
		t.Errorf("--demo with --config: exit %d, %q", code, errOut)
	}
	if code, _, _ := runTrawl(t, "", "run", "--log-level", "loud"); code != 2 {
		t.Errorf("bad log level: exit %d", code)
	}
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.xml")
	os.WriteFile(bad, []byte(`<CrawlerConfig><DomainSpecification name="c"><attrib name="dealy" type="real">1</attrib></DomainSpecification></CrawlerConfig>`), 0o644)
	code, _, errOut := runTrawl(t, "", "run", "--config", bad, "--data", dir)
	if code != 1 || !strings.Contains(errOut, `bad.xml:1: collection c: parameter dealy: unknown parameter (did you mean "delay"?)`) {
		t.Errorf("bad config: exit %d, %q", code, errOut)
	}
	if code, _, errOut := runTrawl(t, "", "run", "--demo", "--data", dir, "--key-file", filepath.Join(dir, "nokey")); code != 1 || !strings.Contains(errOut, "key file") {
		t.Errorf("missing key file: exit %d, %q", code, errOut)
	}
	if code, _, errOut := runTrawl(t, "", "run", "--help"); code != 0 || !strings.Contains(errOut, "--once") {
		t.Errorf("--help: exit %d", code)
	}
}

// TestRunCrawlOnly: --index=false crawls without an index, and
// --cpuprofile writes a profile.
func TestRunCrawlOnly(t *testing.T) {
	data := t.TempDir()
	prof := filepath.Join(data, "cpu.prof")
	code, out, errOut := runTrawl(t, "", "run", "--demo", "--data", data, "--demo-hosts", "2", "--demo-pages", "10",
		"--progress", "off", "--listen", "off", "--index=false", "--cpuprofile", prof)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "(0 missing)") {
		t.Errorf("crawl incomplete:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(data, "index")); err == nil {
		t.Errorf("--index=false created an index")
	}
	if fi, err := os.Stat(prof); err != nil || fi.Size() == 0 {
		t.Errorf("no CPU profile: %v", err)
	}
}
