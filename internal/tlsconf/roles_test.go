package tlsconf_test

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/admin"
	"github.com/trawl/trawl/internal/distrib"
	"github.com/trawl/trawl/internal/distrib/indexer"
	"github.com/trawl/trawl/internal/distrib/nameserver"
	"github.com/trawl/trawl/internal/distrib/wire"
	"github.com/trawl/trawl/internal/dmake"
	"github.com/trawl/trawl/internal/dupserver"
	"github.com/trawl/trawl/internal/multinode"
	"github.com/trawl/trawl/internal/tlsconf"
	"github.com/trawl/trawl/internal/tlsconf/tlstest"
)

// role starts one listener kind in this process with cfg and returns the
// address to probe.
type role struct {
	name  string
	start func(t *testing.T, cfg *tlsconf.Config, ns string) string
}

func loopback(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// freeBase returns a base port whose base+off are free for every off.
func freeBase(t *testing.T, offs ...int) int {
	t.Helper()
	for range 50 {
		ln := loopback(t)
		base := ln.Addr().(*net.TCPAddr).Port - offs[0]
		ln.Close()
		ok := base > 0
		for _, off := range offs {
			if !ok || base+off > 65535 {
				ok = false
				break
			}
			l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(base+off)))
			if err != nil {
				ok = false
				break
			}
			l.Close()
		}
		if ok {
			return base
		}
	}
	t.Fatal("no free base port")
	return 0
}

// run runs f in a goroutine until the test ends: then its context is
// cancelled and f must return within 10 s.
func run(t *testing.T, f func(ctx context.Context) error) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("a role did not stop within 10 s")
		}
	})
}

func registry(ns string, cfg *tlsconf.Config) nameserver.Registry {
	return nameserver.NewClient(ns, &wire.Client{Dialer: cfg.Dialer(nil), Timeout: 5 * time.Second})
}

// roles lists the listener kinds.
func roles() []role {
	return []role{
		{"multinode scheduler (MS-FSCMT)", func(t *testing.T, cfg *tlsconf.Config, _ string) string {
			ln := loopback(t)
			s := &multinode.Server{Listener: ln, TLS: cfg}
			run(t, s.Run)
			return ln.Addr().String()
		}},
		{"duplicate server (MS-FSCMT)", func(t *testing.T, cfg *tlsconf.Config, _ string) string {
			ln := loopback(t)
			s := &dupserver.Server{Listener: ln, TLS: cfg}
			run(t, s.Run)
			return ln.Addr().String()
		}},
		{"duplicate server replica", func(t *testing.T, cfg *tlsconf.Config, _ string) string {
			ln := loopback(t)
			s := &dupserver.Server{Listener: ln, ReplicaMode: true, TLS: cfg}
			run(t, s.Run)
			return ln.Addr().String()
		}},
		{"name server", func(t *testing.T, cfg *tlsconf.Config, ns string) string {
			return ns
		}},
		{"indexer", func(t *testing.T, cfg *tlsconf.Config, ns string) string {
			base := freeBase(t, indexer.PortOffset)
			s, err := indexer.NewServer(indexer.ServerConfig{Listen: "127.0.0.1", Host: "127.0.0.1", BasePort: base, Dir: t.TempDir(),
				Partition: 0, Partitions: 1, Registry: registry(ns, cfg), TLS: cfg})
			if err != nil {
				t.Fatal(err)
			}
			run(t, s.Run)
			return s.Addr()
		}},
		{"content distributor", func(t *testing.T, cfg *tlsconf.Config, ns string) string {
			base := freeBase(t, wire.PortInternal, wire.PortExternal)
			s, err := distrib.NewServer(distrib.ServerConfig{Config: distrib.Config{NodeID: 1, Host: "127.0.0.1", BasePort: base},
				Listen: "127.0.0.1", Registry: registry(ns, cfg), TLS: cfg})
			if err != nil {
				t.Fatal(err)
			}
			run(t, s.Run)
			return s.Addr()
		}},
		{"dmake worker", func(t *testing.T, cfg *tlsconf.Config, _ string) string {
			ln := loopback(t)
			run(t, func(ctx context.Context) error {
				return dmake.RunWorker(ctx, dmake.WorkerOptions{Listener: ln, Dir: t.TempDir(), TLS: cfg})
			})
			return ln.Addr().String()
		}},
		{"HTTP interface", func(t *testing.T, cfg *tlsconf.Config, _ string) string {
			ln := loopback(t)
			run(t, func(ctx context.Context) error {
				return admin.Serve(ctx, cfg.Listener(ln, nil), http.NotFoundHandler())
			})
			return ln.Addr().String()
		}},
	}
}

// TestMutualTLSEveryListener starts every kind of listener with mutual TLS
// and probes it: a peer without a certificate, one with a certificate of
// another authority and one speaking plain TCP are refused; one with a
// certificate of the authority is served (the indexer and the distributor
// also bind themselves in the name server over mutual TLS on the way).
func TestMutualTLSEveryListener(t *testing.T) {
	ca := tlstest.NewCA(t, "trawl test CA")
	cfg := ca.Config("server")
	good := ca.Config("client")
	stranger, _ := tlstest.NewCA(t, "another CA").Issue("stranger")
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	nsrv, err := nameserver.NewServer(nameserver.ServerConfig{Listen: "127.0.0.1:0", Dir: t.TempDir(), PingInterval: time.Second, TLS: cfg})
	if err != nil {
		t.Fatal(err)
	}
	run(t, nsrv.Run)
	for _, r := range roles() {
		t.Run(r.name, func(t *testing.T) {
			addr := r.start(t, cfg, nsrv.Addr())
			waitListening(t, addr)
			for _, p := range []struct {
				peer string
				cfg  *tls.Config
				ok   bool
			}{
				{"no certificate", &tls.Config{RootCAs: ca.Pool(), ServerName: "127.0.0.1"}, false},
				{"another CA's certificate", &tls.Config{RootCAs: ca.Pool(), ServerName: "127.0.0.1", Certificates: []tls.Certificate{stranger}}, false},
				{"the CA's certificate", good.Client(addr), true},
			} {
				err := tlstest.Probe(ctx, addr, p.cfg)
				switch {
				case p.ok && err != nil:
					t.Errorf("%s: refused: %v", p.peer, err)
				case !p.ok && err == nil:
					t.Errorf("%s: served", p.peer)
				}
			}
			if err := tlstest.ProbePlain(ctx, addr); err == nil {
				t.Error("plain TCP: served")
			}
		})
	}
}

// TestMutualTLSAllowListStays: a peer with a valid certificate from an
// address not on the allow-list is still refused (the allow-list is
// checked before the handshake).
func TestMutualTLSAllowListStays(t *testing.T) {
	ca := tlstest.NewCA(t, "trawl test CA")
	cfg := ca.Config("server")
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	ln := loopback(t)
	run(t, func(ctx context.Context) error {
		return dmake.RunWorker(ctx, dmake.WorkerOptions{Listener: ln, Dir: t.TempDir(), Allow: []string{"10.0.0.0/8"}, TLS: cfg})
	})
	addr := ln.Addr().String()
	if err := tlstest.Probe(ctx, addr, ca.Config("client").Client(addr)); err == nil {
		t.Error("a dmake worker allowing 10.0.0.0/8 served a master from 127.0.0.1")
	}
}

func waitListening(t *testing.T, addr string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return
		}
	}
	t.Fatalf("nothing listens on %s", addr)
}
