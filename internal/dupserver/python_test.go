package dupserver

import (
	"net"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/trawl/trawl/internal/testenv"
)

// TestPythonPeer runs a node scheduler written in Python with the standard
// library's marshal module against a duplicate server over TCP.
func TestPythonPeer(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		testenv.Missing(t, "python3 is not installed on this machine")
	}
	addr, stop := start(t, &Server{Listener: listen(t), NodeID: "ds-1"})
	defer stop()
	host, port, _ := net.SplitHostPort(addr)
	out, err := exec.CommandContext(t.Context(), py, "testdata/ppdup_client.py", host, port).CombinedOutput()
	if err != nil {
		t.Fatalf("python client: %v\n%s", err, out)
	}
	want := []string{
		"ack 60 7 1",
		"addok 50 pycoll py-1 http://py.example/a http://py.example/a 0",
		"addok 50 pycoll py-2 http://py.example/b http://py.example/a 0",
	}
	if diff := cmp.Diff(want, strings.Split(strings.TrimSpace(string(out)), "\n")); diff != "" {
		t.Fatalf("python client output (-want +got):\n%s", diff)
	}
}
