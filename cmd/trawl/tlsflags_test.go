package main

import (
	"strings"
	"testing"
)

// TestTLSFlagsEveryRole: every role's --help shows the mutual-TLS flags,
// and a partial set of them is refused at start (exit 2) before anything
// listens or dials.
func TestTLSFlagsEveryRole(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ cmd, args []string }{
		{[]string{"multinode"}, []string{"--data", dir, "--admin-listen", "off"}},
		{[]string{"node"}, []string{"--id", "n", "--multinode", "127.0.0.1:1", "--data", dir, "--listen", "off"}},
		{[]string{"dupserver"}, []string{"--data", dir}},
		{[]string{"nameserver"}, []string{"--data", dir}},
		{[]string{"distributor"}, []string{"--id", "0", "--nameserver", "127.0.0.1:1"}},
		{[]string{"distributors"}, []string{"--nameserver", "127.0.0.1:1"}},
		{[]string{"indexer"}, []string{"--nameserver", "127.0.0.1:1", "--data", dir}},
		{[]string{"dmake", "worker"}, []string{"--data", dir}},
		{[]string{"dmake", "run"}, []string{"--worker", "127.0.0.1:1", "build.txt"}},
		{[]string{"search"}, []string{"--nameserver", "127.0.0.1:1", "q"}},
		{[]string{"run"}, []string{"--data", dir}},
	} {
		name := strings.Join(tc.cmd, " ")
		if code, _, errOut := runTrawl(t, "", append(tc.cmd, "--help")...); code != 0 || !strings.Contains(errOut, "-tls-ca") {
			t.Errorf("%s --help: exit %d, no --tls-ca in it", name, code)
		}
		args := append(append(append([]string{}, tc.cmd...), "--tls-cert", "x.pem"), tc.args...)
		if code, _, errOut := runTrawl(t, "", args...); code != 2 || !strings.Contains(errOut, "go together") {
			t.Errorf("%s with --tls-cert only: exit %d, %q", name, code, errOut)
		}
	}
}
