package dmake

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/trawl/trawl/internal/distrib/wire"
)

// Registration (3.2.3, 3.3.3): a worker binds itself in trawl's name server
// (or the etcd registry) as an "fdmworker" object; a master lists them.
// See the package comment's Registry paragraph.
const (
	// ModuleName is the spec's ModuleRegister.name; every worker's binding
	// name starts with ModuleName + "/".
	ModuleName = "fdmworker"
	// RegistryType and RegistryVersion are the bindings' interface type
	// and version.
	RegistryType    = "fdmworker"
	RegistryVersion = "1.0"
	// DefaultRebind is how often a worker binds itself again.
	DefaultRebind = 10 * time.Second
	// sniffWait is how long a new connection may stay silent before it is
	// taken for a master's (which speaks after the worker's #info).
	sniffWait = 250 * time.Millisecond
)

// Registry is what a worker registers in and a master discovers its
// workers from: trawl's name server client and the etcd registry
// implement it.
type Registry interface {
	Bind(ctx context.Context, a wire.AOR) error
	Unbind(ctx context.Context, name, typ, version string) error
	List(ctx context.Context, prefix string) ([]wire.AOR, error)
}

// WorkerAOR is the binding of the worker listening at addr (host:port, the
// host being what masters dial).
func WorkerAOR(addr string) (wire.AOR, error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return wire.AOR{}, fmt.Errorf("dmake: %w", err)
	}
	port, err := strconv.Atoi(p)
	if err != nil || port <= 0 || port > 65535 {
		return wire.AOR{}, fmt.Errorf("dmake: bad port in %q", addr)
	}
	if host == "" || net.ParseIP(host) != nil && net.ParseIP(host).IsUnspecified() {
		return wire.AOR{}, fmt.Errorf("dmake: %q has no host a master can dial (give --advertise)", addr)
	}
	a := net.JoinHostPort(host, p)
	return wire.AOR{Name: ModuleName + "/" + a, ObjectID: a, Host: host, Port: port,
		Type: RegistryType, Version: RegistryVersion}, nil
}

// Discover lists the workers bound in reg, in the order of their binding
// names (that is, of their host:port strings).
func Discover(ctx context.Context, reg Registry) ([]string, error) {
	aors, err := reg.List(ctx, ModuleName+"/")
	if err != nil {
		return nil, fmt.Errorf("dmake: listing the workers: %w", err)
	}
	sort.Slice(aors, func(i, j int) bool { return aors[i].Name < aors[j].Name })
	var out []string
	for _, a := range aors {
		if a.Type == RegistryType && a.Version == RegistryVersion {
			out = append(out, a.Addr())
		}
	}
	return out, nil
}

// DiscoverWorkers returns the fixed addresses followed by the workers of
// reg not among them. With reg, it waits (listing every poll) until there
// are at least min workers in all, or ctx ends.
func DiscoverWorkers(ctx context.Context, fixed []string, reg Registry, min int, poll time.Duration, log *slog.Logger) ([]string, error) {
	if reg == nil {
		return fixed, nil
	}
	if poll <= 0 {
		poll = 500 * time.Millisecond
	}
	for {
		found, err := Discover(ctx, reg)
		out := append([]string(nil), fixed...)
		for _, a := range found {
			if !contains(out, a) {
				out = append(out, a)
			}
		}
		if err == nil && len(out) >= min {
			return out, nil
		}
		if log != nil {
			log.Info("dmake master: waiting for workers in the registry", "have", len(out), "want", min, "err", err)
		}
		select {
		case <-ctx.Done():
			if err == nil {
				err = fmt.Errorf("dmake: %d workers found, %d wanted: %w", len(out), min, ctx.Err())
			}
			return nil, err
		case <-time.After(poll):
		}
	}
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// register binds a in reg now and every period until ctx ends, then
// unbinds it (with a fresh 5 s deadline).
func register(ctx context.Context, reg Registry, a wire.AOR, period time.Duration, log *slog.Logger) {
	if period <= 0 {
		period = DefaultRebind
	}
	bound := false
	for {
		bctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := reg.Bind(bctx, a)
		cancel()
		switch {
		case err != nil && ctx.Err() == nil:
			log.Warn("dmake worker: binding in the registry failed", "name", a.Name, "err", err)
			bound = false
		case err == nil && !bound:
			log.Info("dmake worker: bound in the registry", "name", a.Name, "addr", a.Addr())
			bound = true
		}
		select {
		case <-ctx.Done():
			uctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			if err := reg.Unbind(uctx, a.Name, a.Type, a.Version); err != nil {
				log.Warn("dmake worker: unbinding failed", "name", a.Name, "err", err)
			} else {
				log.Info("dmake worker: unbound from the registry", "name", a.Name)
			}
			cancel()
			return
		case <-time.After(period):
		}
	}
}

// sniffListener shares the worker's port between masters (lines starting
// with '#', or silence: the worker speaks first) and the name server's
// liveness pings (internal/distrib/wire frames, starting with "DF"), which
// it answers itself: every request's reply is empty for __ping, a
// middleware::bad_request otherwise.
type sniffListener struct {
	net.Listener
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
	err   error
	errMu sync.Mutex
	wait  time.Duration
}

func newSniffListener(ln net.Listener, wait time.Duration) *sniffListener {
	s := &sniffListener{Listener: ln, conns: make(chan net.Conn), done: make(chan struct{}), wait: wait}
	go s.acceptLoop()
	return s
}

func (s *sniffListener) acceptLoop() {
	for {
		c, err := s.Listener.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			s.errMu.Lock()
			s.err = err
			s.errMu.Unlock()
			s.Close()
			return
		}
		go s.sniff(c)
	}
}

func (s *sniffListener) sniff(c net.Conn) {
	br := bufio.NewReader(c)
	c.SetReadDeadline(time.Now().Add(s.wait))
	b, err := br.Peek(1)
	c.SetReadDeadline(time.Time{})
	if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
		c.Close()
		return
	}
	if len(b) == 1 && b[0] == 'D' {
		servePings(c, br)
		return
	}
	select {
	case s.conns <- &peekedConn{Conn: c, r: br}:
	case <-s.done:
		c.Close()
	}
}

// Accept returns the next master connection.
func (s *sniffListener) Accept() (net.Conn, error) {
	select {
	case c := <-s.conns:
		return c, nil
	case <-s.done:
		s.errMu.Lock()
		defer s.errMu.Unlock()
		if s.err != nil {
			return nil, s.err
		}
		return nil, net.ErrClosed
	}
}

// Close closes the listener.
func (s *sniffListener) Close() error {
	var err error
	s.once.Do(func() {
		close(s.done)
		err = s.Listener.Close()
	})
	return err
}

type peekedConn struct {
	net.Conn
	r *bufio.Reader
}

func (p *peekedConn) Read(b []byte) (int, error) { return p.r.Read(b) }

// servePings answers wire requests on c until it closes or sends a bad
// frame.
func servePings(c net.Conn, r *bufio.Reader) {
	defer c.Close()
	for {
		c.SetReadDeadline(time.Now().Add(time.Minute))
		f, err := wire.ReadFrame(r)
		if err != nil {
			return
		}
		if f.Kind != wire.Request {
			continue
		}
		reply := wire.ReplyTo(f)
		if f.Method != wire.MethodPing {
			reply = wire.Raise(f, wire.ExcBadRequest, "a dmake worker answers only "+wire.MethodPing)
		}
		b, err := wire.AppendFrame(nil, reply)
		if err != nil {
			return
		}
		c.SetWriteDeadline(time.Now().Add(10 * time.Second))
		if _, err := c.Write(b); err != nil {
			return
		}
	}
}

// advertised returns the address masters reach a listener at: host (when
// given) with the listener's port, or the listener's address, its
// unspecified host replaced by the machine's name.
func advertised(ln net.Listener, host string) string {
	lh, port, _ := net.SplitHostPort(ln.Addr().String())
	if host != "" {
		return net.JoinHostPort(host, port)
	}
	if ip := net.ParseIP(lh); ip != nil && ip.IsUnspecified() || lh == "" {
		if h, err := os.Hostname(); err == nil && !strings.ContainsAny(h, " /") {
			lh = h
		}
	}
	return net.JoinHostPort(lh, port)
}
