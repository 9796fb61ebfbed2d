// Package etcdreg is a nameserver.Registry on etcd (go.etcd.io/etcd/client/v3),
// for installations that cannot have the name server as a single point of
// failure (DESIGN.md section 2): `--registry etcd://HOST:PORT,HOST:PORT`.
//
// # Layout and semantics
//
// A binding is the key
//
//	<prefix> name 0x00 interface_type 0x00 interface_version
//
// (prefix "/trawl/ns/" by default) whose value is the AOR as JSON. The
// semantics are the name server's (see its package comment):
//
//   - bind is one transaction: if the key does not exist, put it; else read
//     it, and if the holder is at the same host:port put it again (a process
//     restarted at its address), otherwise fail with nameserver::already_bound;
//   - resolve of a missing key raises nameserver::resolve_exception;
//   - every key a process binds is attached to that process's lease (TTL,
//     15 s by default), kept alive while the process lives: a process that
//     dies (kill -9) loses its bindings when the lease expires, which is the
//     name server's liveness by ping done by etcd.
//
// # TLS
//
// With Options.TLS (trawl's --tls-cert, --tls-key and --tls-ca, the same
// flags as every other link) the endpoints are dialled as https:// with
// that client certificate, for an etcd started with --client-cert-auth
// and --trusted-ca-file; the etcd server's certificate must chain to the
// same authority and name the host dialled (or --tls-server-name).
package etcdreg

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/trawl/trawl/internal/distrib/wire"
)

// Registry is a registry on etcd.
type Registry struct {
	cli    *clientv3.Client
	prefix string
	ttl    int64

	mu    sync.Mutex
	lease clientv3.LeaseID
	alive <-chan *clientv3.LeaseKeepAliveResponse
	stop  context.CancelFunc
}

// Options configure a Registry.
type Options struct {
	// Prefix of every key ("/trawl/ns/" if empty).
	Prefix string
	// TTL of the process's lease (15 s if 0).
	TTL time.Duration
	// DialTimeout bounds the first connection (5 s if 0).
	DialTimeout time.Duration
	// TLS, when not nil, is the client configuration: the endpoints are
	// dialled as https://.
	TLS *tls.Config
}

// ParseURL returns the endpoints of "etcd://HOST:PORT,HOST:PORT".
func ParseURL(s string) ([]string, error) {
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "etcd" || u.Host == "" {
		return nil, fmt.Errorf("etcdreg: %q is not etcd://HOST:PORT[,HOST:PORT...]", s)
	}
	var eps []string
	for _, h := range strings.Split(u.Host, ",") {
		if h == "" {
			return nil, fmt.Errorf("etcdreg: empty endpoint in %q", s)
		}
		eps = append(eps, "http://"+h)
	}
	return eps, nil
}

// New connects to the etcd endpoints.
func New(endpoints []string, o Options) (*Registry, error) {
	if o.Prefix == "" {
		o.Prefix = "/trawl/ns/"
	}
	if o.TTL <= 0 {
		o.TTL = 15 * time.Second
	}
	if o.DialTimeout <= 0 {
		o.DialTimeout = 5 * time.Second
	}
	if o.TLS != nil {
		eps := make([]string, len(endpoints))
		for i, e := range endpoints {
			eps[i] = "https://" + strings.TrimPrefix(strings.TrimPrefix(e, "http://"), "https://")
		}
		endpoints = eps
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: o.DialTimeout, TLS: o.TLS})
	if err != nil {
		return nil, fmt.Errorf("etcdreg: %w", err)
	}
	ttl := int64(o.TTL / time.Second)
	if ttl < 1 {
		ttl = 1
	}
	return &Registry{cli: cli, prefix: o.Prefix, ttl: ttl}, nil
}

func (r *Registry) key(name, typ, version string) string {
	return r.prefix + name + "\x00" + typ + "\x00" + version
}

// leaseID returns the process's live lease, granting a new one if there is
// none or the last expired.
func (r *Registry) leaseID(ctx context.Context) (clientv3.LeaseID, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.lease != 0 {
		select {
		case _, ok := <-r.alive:
			if ok {
				return r.lease, nil
			}
		default:
			return r.lease, nil
		}
		r.stop()
		r.lease = 0
	}
	g, err := r.cli.Grant(ctx, r.ttl)
	if err != nil {
		return 0, fmt.Errorf("etcdreg: lease: %w", err)
	}
	kctx, cancel := context.WithCancel(context.Background())
	ch, err := r.cli.KeepAlive(kctx, g.ID)
	if err != nil {
		cancel()
		return 0, fmt.Errorf("etcdreg: keepalive: %w", err)
	}
	// Drain the keep-alive answers, leaving the channel's close to be seen.
	alive := make(chan *clientv3.LeaseKeepAliveResponse)
	go func() {
		defer close(alive)
		for range ch {
		}
	}()
	r.lease, r.alive, r.stop = g.ID, alive, cancel
	return g.ID, nil
}

// Bind implements nameserver.Registry.
func (r *Registry) Bind(ctx context.Context, a wire.AOR) error {
	lease, err := r.leaseID(ctx)
	if err != nil {
		return err
	}
	val, _ := json.Marshal(a)
	k := r.key(a.Name, a.Type, a.Version)
	resp, err := r.cli.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(k), "=", 0)).
		Then(clientv3.OpPut(k, string(val), clientv3.WithLease(lease))).
		Else(clientv3.OpGet(k)).Commit()
	if err != nil {
		return fmt.Errorf("etcdreg: bind: %w", err)
	}
	if resp.Succeeded {
		return nil
	}
	kvs := resp.Responses[0].GetResponseRange().Kvs
	if len(kvs) == 1 {
		var old wire.AOR
		if json.Unmarshal(kvs[0].Value, &old) == nil && old.Addr() != a.Addr() {
			return &wire.Error{Name: wire.ExcAlreadyBound, What: fmt.Sprintf("%s %s %s is bound to %s", a.Name, a.Type, a.Version, old.Addr())}
		}
		// Same address: take it over only if nobody changed it meanwhile.
		resp, err = r.cli.Txn(ctx).
			If(clientv3.Compare(clientv3.ModRevision(k), "=", kvs[0].ModRevision)).
			Then(clientv3.OpPut(k, string(val), clientv3.WithLease(lease))).Commit()
		if err != nil {
			return fmt.Errorf("etcdreg: bind: %w", err)
		}
		if resp.Succeeded {
			return nil
		}
	}
	return &wire.Error{Name: wire.ExcAlreadyBound, What: fmt.Sprintf("%s %s %s changed during the bind", a.Name, a.Type, a.Version)}
}

// Resolve implements nameserver.Registry.
func (r *Registry) Resolve(ctx context.Context, name, typ, version string) (wire.AOR, error) {
	resp, err := r.cli.Get(ctx, r.key(name, typ, version))
	if err != nil {
		return wire.AOR{}, fmt.Errorf("etcdreg: resolve: %w", err)
	}
	if len(resp.Kvs) == 0 {
		return wire.AOR{}, &wire.Error{Name: wire.ExcResolve, What: fmt.Sprintf("no object bound as %s %s %s", name, typ, version)}
	}
	var a wire.AOR
	if err := json.Unmarshal(resp.Kvs[0].Value, &a); err != nil {
		return wire.AOR{}, fmt.Errorf("etcdreg: bad binding %q: %w", resp.Kvs[0].Key, err)
	}
	return a, nil
}

// Unbind implements nameserver.Registry.
func (r *Registry) Unbind(ctx context.Context, name, typ, version string) error {
	if _, err := r.cli.Delete(ctx, r.key(name, typ, version)); err != nil {
		return fmt.Errorf("etcdreg: unbind: %w", err)
	}
	return nil
}

// UnbindIf implements nameserver.Registry: one transaction that deletes the
// key only if its value is holder's.
func (r *Registry) UnbindIf(ctx context.Context, holder wire.AOR) error {
	val, _ := json.Marshal(holder)
	k := r.key(holder.Name, holder.Type, holder.Version)
	if _, err := r.cli.Txn(ctx).If(clientv3.Compare(clientv3.Value(k), "=", string(val))).Then(clientv3.OpDelete(k)).Commit(); err != nil {
		return fmt.Errorf("etcdreg: unbind: %w", err)
	}
	return nil
}

// List implements nameserver.Registry.
func (r *Registry) List(ctx context.Context, prefix string) ([]wire.AOR, error) {
	resp, err := r.cli.Get(ctx, r.prefix+prefix, clientv3.WithPrefix(), clientv3.WithSort(clientv3.SortByKey, clientv3.SortAscend))
	if err != nil {
		return nil, fmt.Errorf("etcdreg: list: %w", err)
	}
	out := make([]wire.AOR, 0, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		var a wire.AOR
		if err := json.Unmarshal(kv.Value, &a); err != nil {
			return nil, fmt.Errorf("etcdreg: bad binding %q: %w", kv.Key, err)
		}
		out = append(out, a)
	}
	return out, nil
}

// Close revokes the lease (the process's bindings go at once) and
// disconnects.
func (r *Registry) Close() error {
	r.mu.Lock()
	lease, stop := r.lease, r.stop
	r.lease = 0
	r.mu.Unlock()
	if lease != 0 {
		stop()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, _ = r.cli.Revoke(ctx, lease)
		cancel()
	}
	err := r.cli.Close()
	if err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("etcdreg: %w", err)
	}
	return nil
}
