package main

import (
	"os"
	"strings"
	"testing"

	"github.com/trawl/trawl/internal/clicks"
)

// TestWebanalyzerClicksCommand: trawl webanalyzer clicks runs the click
// build over the logs of a data directory and keeps the relevance table.
func TestWebanalyzerClicksCommand(t *testing.T) {
	// The table programs run in a trawl built without the race detector
	// (the one the distrib process tests build): a race-enabled binary
	// takes about a second to start, and the build is a chain of 17 of them.
	self := trawlBinary(t)
	data := t.TempDir()
	l, err := clicks.OpenLog(clicks.LogDir(data), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"http://a.test/", "http://a.test/", "http://b.test/"} {
		id, err := l.Query("Harvest village")
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Click(id, u, 1); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errOut := runTrawl(t, "", "webanalyzer", "clicks", "--data", data, "--trawl", self)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "done: 3 log files, 2 (query, URL) relevance records") {
		t.Errorf("output:\n%s", out)
	}
	b, err := os.ReadFile(clicks.RelevancePath(data))
	if err != nil {
		t.Fatal(err)
	}
	if want := "http://a.test/ 2 3 1 1 harvest+village\nhttp://b.test/ 1 3 2 1 harvest+village\n"; string(b) != want {
		t.Errorf("relevance:\n%s\nwant\n%s", b, want)
	}
	if code, _, errOut := runTrawl(t, "", "webanalyzer", "clicks", "--data", data, "--from", "yesterday"); code == 0 || !strings.Contains(errOut, "YYYY-MM-DD") {
		t.Errorf("bad --from: exit %d, %s", code, errOut)
	}
}
