package etcdreg

import (
	"context"
	"crypto/tls"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/distrib/etcdreg/etcdtest"
	"github.com/trawl/trawl/internal/distrib/wire"
	"github.com/trawl/trawl/internal/tlsconf/tlstest"
)

// TestRegistry: bind-if-absent, resolve_exception, same-address rebind,
// list, unbind, unbind only if still the holder's (UnbindIf), and bindings that go with their process's lease, against a
// real etcd on loopback.
func TestRegistry(t *testing.T) {
	ep := etcdtest.Start(t)
	eps, err := ParseURL("etcd://" + ep)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a, err := New(eps, Options{TTL: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := New(eps, Options{TTL: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	sf := wire.AOR{Name: wire.NameDispatcher, ObjectID: "cd1", Host: "127.0.0.1", Port: 13390, Type: wire.IfaceSessionFactory, Version: "5.1"}
	if _, err := a.Resolve(ctx, sf.Name, sf.Type, sf.Version); !wire.IsException(err, wire.ExcResolve) {
		t.Fatalf("resolve of nothing: %v", err)
	}
	if err := a.Bind(ctx, sf); err != nil {
		t.Fatal(err)
	}
	other := sf
	other.Port, other.ObjectID = 14390, "cd2"
	if err := b.Bind(ctx, other); !wire.IsException(err, wire.ExcAlreadyBound) {
		t.Fatalf("second bind: %v", err)
	}
	again := sf
	again.ObjectID = "cd1.2"
	if err := b.Bind(ctx, again); err != nil {
		t.Fatalf("same-address bind: %v", err)
	}
	if got, err := a.Resolve(ctx, sf.Name, sf.Type, sf.Version); err != nil || got != again {
		t.Fatalf("resolve: %v %v", got, err)
	}
	node := wire.AOR{Name: wire.NameNodePrefix + "1", ObjectID: "cd1", Host: "127.0.0.1", Port: 13390, Type: wire.IfaceDispatcherNode, Version: "5.1"}
	if err := a.Bind(ctx, node); err != nil {
		t.Fatal(err)
	}
	l, err := a.List(ctx, "esp/subsystems/processing/")
	if err != nil || len(l) != 2 {
		t.Fatalf("list: %v %v", l, err)
	}
	if err := a.Unbind(ctx, sf.Name, sf.Type, sf.Version); err != nil {
		t.Fatal(err)
	}
	if err := b.Bind(ctx, other); err != nil {
		t.Fatalf("bind after unbind: %v", err)
	}
	// UnbindIf: with a holder that is not the binding any more, nothing.
	if err := a.UnbindIf(ctx, again); err != nil {
		t.Fatal(err)
	}
	if got, err := a.Resolve(ctx, sf.Name, sf.Type, sf.Version); err != nil || got != other {
		t.Fatalf("UnbindIf of a former holder removed the binding: %v %v", got, err)
	}
	if err := a.UnbindIf(ctx, other); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Resolve(ctx, sf.Name, sf.Type, sf.Version); !wire.IsException(err, wire.ExcResolve) {
		t.Fatalf("UnbindIf of the holder: %v", err)
	}
	if err := b.Bind(ctx, other); err != nil {
		t.Fatalf("bind after UnbindIf: %v", err)
	}
	// b goes away: its binding goes with its lease.
	b.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := a.Resolve(ctx, sf.Name, sf.Type, sf.Version)
		if wire.IsException(err, wire.ExcResolve) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the closed registry's binding stayed: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := a.Resolve(ctx, node.Name, node.Type, node.Version); err != nil {
		t.Errorf("a's binding went too: %v", err)
	}
	if _, err := ParseURL("http://x"); err == nil {
		t.Error("ParseURL accepted http://")
	}
}

// TestRegistryTLS: etcd serving TLS and requiring client certificates
// (--client-cert-auth): a client with a certificate of the authority binds
// and resolves; one without a certificate, and one over plain TCP, are
// refused.
func TestRegistryTLS(t *testing.T) {
	ca := tlstest.NewCA(t, "test CA")
	_, files := ca.Issue("etcd")
	ep := etcdtest.StartTLS(t, files)
	eps, err := ParseURL("etcd://" + ep)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	good, err := New(eps, Options{TTL: time.Second, TLS: ca.Config("client").Client("")})
	if err != nil {
		t.Fatal(err)
	}
	defer good.Close()
	sf := wire.AOR{Name: wire.NameDispatcher, ObjectID: "cd1", Host: "127.0.0.1", Port: 13390, Type: wire.IfaceSessionFactory, Version: "5.1"}
	if err := good.Bind(ctx, sf); err != nil {
		t.Fatalf("bind with a client certificate: %v", err)
	}
	if got, err := good.Resolve(ctx, sf.Name, sf.Type, sf.Version); err != nil || got != sf {
		t.Fatalf("resolve with a client certificate: %v %v", got, err)
	}
	refused := func(what string, o Options) {
		o.DialTimeout = 2 * time.Second
		r, err := New(eps, o)
		if err != nil {
			return // refused at the dial
		}
		defer r.Close()
		cctx, ccancel := context.WithTimeout(ctx, 3*time.Second)
		defer ccancel()
		if _, err := r.Resolve(cctx, sf.Name, sf.Type, sf.Version); err == nil {
			t.Errorf("%s: resolve answered", what)
		}
	}
	noCert := &tls.Config{RootCAs: ca.Pool(), MinVersion: tls.VersionTLS12}
	refused("TLS without a client certificate", Options{TLS: noCert})
	other := tlstest.NewCA(t, "other CA")
	refused("a certificate of another authority", Options{TLS: other.Config("intruder").Client("")})
	refused("plain TCP", Options{})
}
