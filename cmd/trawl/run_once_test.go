package main

import (
	"bytes"
	"context"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/webfarm"
)

// TestRunOnceWithoutQuietPeriod: --once ends when nothing is queued or in
// flight (internal/crawldone), not after a quiet period: with the
// fallback set to ten minutes the run still ends, every expected URL
// fetched and every stored document indexed, and the gap between the
// farm's last answer and the end is logged.
func TestRunOnceWithoutQuietPeriod(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := t.TempDir()
	// Two hosts: none of the slow, stalled and large pages (hosts 3, 4).
	d, err := webfarm.StartDemo(ctx, filepath.Join(dir, "farm"), webfarm.DefaultConfig(1, 2, 10))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Farm.Close()
	// The fallback cannot end this run: it would need ten minutes idle,
	// and the context ends it after five (an incomplete crawl, failed
	// below).
	rctx, rcancel := context.WithTimeout(ctx, 5*time.Minute)
	defer rcancel()
	var out, errb bytes.Buffer
	env := &cmdEnv{stdin: strings.NewReader(""), stdout: &out, stderr: &errb}
	code := runMain(rctx, env, []string{"run", "--config", d.ConfigFile, "--hosts-file", d.HostsFile, "--once",
		"--idle-settle", "10m", "--data", filepath.Join(dir, "data"), "--listen", "off", "--progress", "off"})
	end := time.Now()
	if rctx.Err() != nil {
		t.Fatalf("the run did not find the crawl complete in 5 minutes\nstdout:\n%s\nstderr:\n%s", out.String(), errb.String())
	}
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errb.String())
	}
	if strings.Contains(errb.String(), "unaccounted") {
		t.Errorf("completion came from the fallback:\n%s", errb.String())
	}
	requested := map[string]bool{}
	var last time.Time
	for _, r := range d.Farm.Requests() {
		requested[r.URL] = true
		if e := r.Time.Add(r.Duration); e.After(last) {
			last = e
		}
	}
	for _, u := range d.Expect {
		if !requested[u] {
			t.Errorf("expected URL not fetched: %s", u)
		}
	}
	num := func(re string) int {
		m := regexp.MustCompile(re).FindStringSubmatch(out.String())
		if m == nil {
			t.Fatalf("no %q in the summary:\n%s", re, out.String())
		}
		n, _ := strconv.Atoi(m[1])
		return n
	}
	stored, deleted, dups := num(`documents stored\s+(\d+)`), num(`deleted\s+(\d+)`), num(`duplicates\s+(\d+)`)
	indexed := num(`indexed\s+(\d+) documents in the index`)
	// Every stored document but the deleted and the duplicates is fed (a
	// noindex page is stored and not fed: at least, not exactly).
	if waiting := num(`(\d+) operations waiting`); waiting != 0 || indexed < stored-deleted-dups {
		t.Errorf("indexed %d documents with %d operations waiting, want at least %d (stored %d, deleted %d, duplicates %d) and none waiting",
			indexed, waiting, stored-deleted-dups, stored, deleted, dups)
	}
	t.Logf("%d URLs expected, %d documents indexed; the run ended %v after the farm's last answer",
		len(d.Expect), indexed, end.Sub(last).Round(time.Millisecond))
}
