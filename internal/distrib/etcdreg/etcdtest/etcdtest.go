// Package etcdtest starts Debian's etcd (package etcd-server) on loopback
// ports for tests.
package etcdtest

import (
	"context"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/testenv"
	"github.com/trawl/trawl/internal/tlsconf/tlstest"
)

// Start runs etcd on two free loopback ports with its data in a temporary
// directory and returns its client endpoint ("127.0.0.1:PORT"). Without
// the etcd binary the test is skipped, or fails when CI=true.
func Start(t testing.TB) string {
	t.Helper()
	return start(t, nil)
}

// StartTLS is Start with the client port on TLS: etcd serves with the
// certificate and key of f and requires client certificates that chain to
// f.CA (--client-cert-auth).
func StartTLS(t testing.TB, f tlstest.Files) string {
	t.Helper()
	return start(t, &f)
}

func start(t testing.TB, f *tlstest.Files) string {
	t.Helper()
	bin := testenv.Tool(t, "apt-get install etcd-server", "etcd")
	client, peer := freePort(t), freePort(t)
	scheme := "http://"
	if f != nil {
		scheme = "https://"
	}
	cu := scheme + "127.0.0.1:" + strconv.Itoa(client)
	pu := "http://127.0.0.1:" + strconv.Itoa(peer)
	args := []string{"--name", "t", "--data-dir", t.TempDir(),
		"--listen-client-urls", cu, "--advertise-client-urls", cu,
		"--listen-peer-urls", pu, "--initial-advertise-peer-urls", pu,
		"--initial-cluster", "t=" + pu, "--log-level", "error", "--logger", "zap"}
	if f != nil {
		args = append(args, "--cert-file", f.Cert, "--key-file", f.Key, "--trusted-ca-file", f.CA, "--client-cert-auth")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, args...)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = cmd.Wait() })
	addr := "127.0.0.1:" + strconv.Itoa(client)
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return addr
		}
		if time.Now().After(deadline) {
			t.Fatalf("etcd did not listen on %s: %s", addr, out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
