package main

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/admin"
	"github.com/trawl/trawl/internal/tlsconf/tlstest"
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

// TestNodeAdminClientTLS: the multinode scheduler's client of a node
// scheduler's admin API (nodeAdminClient) reaches an HTTP interface served
// with mutual TLS (serveAdmin's wrapping); a client without the
// certificate does not.
func TestNodeAdminClientTLS(t *testing.T) {
	ca := tlstest.NewCA(t, "trawl test CA")
	srv, cli := ca.Config("node"), ca.Config("multinode")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- admin.Serve(ctx, srv.Listener(ln, nil), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, `<?xml version="1.0"?><methodResponse><params><param><value><int>3</int></value></param></params></methodResponse>`)
		}))
	}()
	defer func() { cancel(); <-done }()
	hp := admin.HostPort{Host: "127.0.0.1", Port: ln.Addr().(*net.TCPAddr).Port}
	if lvl, err := nodeAdminClient(cli)(hp).GetLogLevel(ctx); err != nil || lvl != 3 {
		t.Errorf("GetLogLevel over mutual TLS: %d, %v", lvl, err)
	}
	noCert := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool()}}}
	if _, err := admin.NewClient("https://"+hp.String()+admin.Path, noCert).GetLogLevel(ctx); err == nil {
		t.Error("a client without a certificate was served")
	}
	if nodeAdminClient(nil) != nil {
		t.Error("without TLS, nodeAdminClient is not mnsadmin's default")
	}
}
