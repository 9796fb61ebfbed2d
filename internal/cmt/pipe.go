package cmt

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
)

// Pipe returns the two ends of an in-memory connection (net.Pipe), each a
// Conn with its own configuration. Roles in one process talk through it
// over the same framing, encoding and queues as over TCP.
func Pipe(a, b ConnConfig) (*Conn, *Conn) {
	ca, cb := net.Pipe()
	return NewConn(ca, a), NewConn(cb, b)
}

// Dialer opens connections; *net.Dialer and *MemNetwork implement it.
type Dialer interface {
	DialContext(ctx context.Context, network, addr string) (net.Conn, error)
}

// MemNetwork is an in-memory network of named listeners: Listen and
// DialContext have the shape of net.Listen and net.Dialer, and connections
// are net.Pipe pairs. It lets the roles of `trawl run` find each other by
// address inside one process. The zero value is ready to use.
type MemNetwork struct {
	mu        sync.Mutex
	listeners map[string]*memListener
}

// memBacklog bounds the connections waiting for Accept on one listener.
const memBacklog = 16

// ErrNoListener is returned by MemNetwork.DialContext for an address
// nobody listens on (the in-memory "connection refused").
var ErrNoListener = errors.New("cmt: no listener at address")

// Listen starts listening on addr, any string; it fails if addr is taken.
func (n *MemNetwork) Listen(addr string) (net.Listener, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.listeners == nil {
		n.listeners = map[string]*memListener{}
	}
	if _, ok := n.listeners[addr]; ok {
		return nil, fmt.Errorf("cmt: listen mem %s: address in use", addr)
	}
	l := &memListener{net: n, addr: memAddr(addr), conns: make(chan net.Conn, memBacklog), done: make(chan struct{})}
	n.listeners[addr] = l
	return l, nil
}

// DialContext connects to the listener at addr. network is ignored.
func (n *MemNetwork) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	n.mu.Lock()
	l := n.listeners[addr]
	n.mu.Unlock()
	if l == nil {
		return nil, fmt.Errorf("cmt: dial mem %s: %w", addr, ErrNoListener)
	}
	client, server := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.done:
		return nil, fmt.Errorf("cmt: dial mem %s: %w", addr, ErrNoListener)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

type memListener struct {
	net   *MemNetwork
	addr  memAddr
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func (l *memListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *memListener) Close() error {
	l.once.Do(func() {
		close(l.done)
		l.net.mu.Lock()
		if l.net.listeners[string(l.addr)] == l {
			delete(l.net.listeners, string(l.addr))
		}
		l.net.mu.Unlock()
		// Refuse the connections nobody accepted.
		for {
			select {
			case c := <-l.conns:
				c.Close()
			default:
				return
			}
		}
	})
	return nil
}

func (l *memListener) Addr() net.Addr { return l.addr }

type memAddr string

func (memAddr) Network() string  { return "mem" }
func (a memAddr) String() string { return string(a) }
