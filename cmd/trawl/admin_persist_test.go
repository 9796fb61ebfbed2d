package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestAdminCollectionSurvivesRestart adds a collection over XML-RPC to a
// running `trawl run`, restarts it with the same --data and checks with
// Python's xmlrpc.client that the collection is listed and still crawls.
func TestAdminCollectionSurvivesRestart(t *testing.T) {
	py := python(t)
	fx := newFarmFixture(t, 5, 2, 10)
	dir, hostsFile, counts := fx.dir, fx.hostsFile, fx.counts
	c1, extra := fx.writeXML(t, "c1"), fx.writeXML(t, "extra")
	data := filepath.Join(dir, "data")
	run := func(mode string) {
		t.Helper()
		p, got := startRole(t, []string{"run", "--config", c1, "--hosts-file", hostsFile, "--data", data,
			"--listen", "127.0.0.1:0", "--progress", "off", "--log-level", "warn"},
			`trawl run: HTTP interface on http://([0-9.:]+)/`)
		cmd := exec.Command(py, "testdata/admin_restart.py")
		cmd.Env = append(os.Environ(), "MODE="+mode, "ADMIN=http://"+got[0]+"/RPC2", "FARM="+counts.URL, "XML="+extra,
			"SITE0="+fx.site0)
		out, err := cmd.CombinedOutput()
		t.Logf("python (%s):\n%s", mode, out)
		if err != nil {
			t.Fatalf("python xmlrpc.client script (%s) failed: %v\ntrawl stderr:\n%s", mode, err, p.stderr.String())
		}
		p.stop()
	}
	run("add")
	if _, err := os.Stat(filepath.Join(data, "collections", "extra.xml")); err != nil {
		t.Fatalf("extra was not saved: %v", err)
	}
	run("check")
}
