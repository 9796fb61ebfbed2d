package tlsconf

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"sync"
	"time"
)

// HandshakeTimeout bounds one TLS handshake, on either side.
const HandshakeTimeout = 10 * time.Second

// maxHandshakes bounds the handshakes a listener runs at once; further
// accepted connections wait.
const maxHandshakes = 64

// Listen listens on addr (TCP) and wraps the listener with Listener.
func (c *Config) Listen(addr string, refused func(remote net.Addr, err error)) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	return c.Listener(ln, refused), nil
}

// Listener wraps ln so that Accept returns only connections whose TLS
// handshake succeeded, the peer having shown a certificate of the
// authority. Handshakes run off the Accept caller, at most 64 at once,
// each within HandshakeTimeout; a failed one closes the connection and is
// reported to refused (which may be nil). A nil Config returns ln.
func (c *Config) Listener(ln net.Listener, refused func(remote net.Addr, err error)) net.Listener {
	if c == nil {
		return ln
	}
	l := &listener{Listener: ln, cfg: c.server, refused: refused,
		conns: make(chan net.Conn), done: make(chan struct{}), sem: make(chan struct{}, maxHandshakes)}
	go l.loop()
	return l
}

type listener struct {
	net.Listener
	cfg     *tls.Config
	refused func(net.Addr, error)
	conns   chan net.Conn
	done    chan struct{}
	sem     chan struct{}

	once sync.Once
	mu   sync.Mutex
	err  error // the inner listener's Accept error, once it failed
}

func (l *listener) loop() {
	for {
		nc, err := l.Listener.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			l.mu.Lock()
			l.err = err
			l.mu.Unlock()
			l.once.Do(func() { close(l.done) })
			return
		}
		select {
		case l.sem <- struct{}{}:
		case <-l.done:
			nc.Close()
			return
		}
		go l.handshake(nc)
	}
}

func (l *listener) handshake(nc net.Conn) {
	defer func() { <-l.sem }()
	tc := tls.Server(nc, l.cfg)
	ctx, cancel := context.WithTimeout(context.Background(), HandshakeTimeout)
	err := tc.HandshakeContext(ctx)
	cancel()
	if err != nil {
		nc.Close()
		if l.refused != nil {
			l.refused(nc.RemoteAddr(), err)
		}
		return
	}
	select {
	case l.conns <- tc:
	case <-l.done:
		tc.Close()
	}
}

func (l *listener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.err != nil {
			return nil, l.err
		}
		return nil, net.ErrClosed
	}
}

func (l *listener) Close() error {
	l.once.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// LogRefused returns a refused callback for Listener that logs a warning
// naming role ("indexer") on log (nil: nothing).
func LogRefused(log *slog.Logger, role string) func(net.Addr, error) {
	if log == nil {
		return nil
	}
	return func(remote net.Addr, err error) {
		log.Warn(role+": connection without a valid TLS client certificate refused", "remote", remote.String(), "err", err)
	}
}
