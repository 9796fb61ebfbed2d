package loop

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
)

// ErrQueueFull is returned by TrySend when a connection's send queue is
// full; the driver then closes the connection.
var ErrQueueFull = errors.New("loop: send queue full")

// ErrClosed is returned by TrySend on a closed connection.
var ErrClosed = errors.New("loop: connection closed")

// Conn is one connection carrying whole messages of type M.
type Conn[M any] interface {
	// Run reads messages and hands each to deliver until the connection
	// closes or ctx ends; deliver returns false to stop reading. Run
	// returns nil on a clean close.
	Run(ctx context.Context, deliver func(M) bool) error
	// TrySend queues m without blocking.
	TrySend(m M, priority int) error
	// Close closes the connection; Run returns soon after.
	Close() error
	// RemoteAddr names the peer.
	RemoteAddr() string
}

// Listener accepts connections.
type Listener[M any] interface {
	Accept(ctx context.Context) (Conn[M], error)
	Close() error
	Addr() string
}

// Dialer opens connections.
type Dialer[M any] interface {
	Dial(ctx context.Context, addr string) (Conn[M], error)
}

// Codec turns messages into bytes on a stream and back. Decode reads one
// message; it must cap every length it reads before allocating.
type Codec[M any] interface {
	Encode(w *bufio.Writer, m M) error
	Decode(r *bufio.Reader) (M, error)
}

// StreamConfig bounds a Stream connection.
type StreamConfig struct {
	// SendQueue is the capacity of the send queue (1024 if <= 0).
	SendQueue int
}

// Stream returns a Conn over a byte stream (a TCP connection or one end of
// a net.Pipe) with codec. Priority is ignored: messages go out in order.
func Stream[M any](c net.Conn, codec Codec[M], cfg StreamConfig) Conn[M] {
	if cfg.SendQueue <= 0 {
		cfg.SendQueue = 1024
	}
	return &stream[M]{c: c, codec: codec, out: make(chan M, cfg.SendQueue), done: make(chan struct{})}
}

type stream[M any] struct {
	c      net.Conn
	codec  Codec[M]
	out    chan M
	once   sync.Once
	done   chan struct{}
	mu     sync.Mutex // guards closed against sends
	closed bool
}

func (s *stream[M]) RemoteAddr() string { return s.c.RemoteAddr().String() }

func (s *stream[M]) TrySend(m M, _ int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	select {
	case s.out <- m:
		return nil
	default:
		return ErrQueueFull
	}
}

func (s *stream[M]) Close() error {
	s.once.Do(func() {
		s.mu.Lock()
		s.closed = true
		s.mu.Unlock()
		close(s.done)
	})
	return s.c.Close()
}

func (s *stream[M]) Run(ctx context.Context, deliver func(M) bool) error {
	stop := context.AfterFunc(ctx, func() { s.Close() })
	defer stop()
	werr := make(chan error, 1)
	go func() { werr <- s.writeLoop() }()
	r := bufio.NewReaderSize(s.c, 64<<10)
	var rerr error
	for {
		m, err := s.codec.Decode(r)
		if err != nil {
			rerr = err
			break
		}
		if !deliver(m) {
			break
		}
	}
	s.Close()
	err := <-werr
	if rerr != nil && !errors.Is(rerr, io.EOF) && !errors.Is(rerr, net.ErrClosed) && !errors.Is(rerr, io.ErrClosedPipe) {
		return fmt.Errorf("loop: read %s: %w", s.RemoteAddr(), rerr)
	}
	if err != nil && !errors.Is(err, net.ErrClosed) && !errors.Is(err, io.ErrClosedPipe) {
		return fmt.Errorf("loop: write %s: %w", s.RemoteAddr(), err)
	}
	return nil
}

func (s *stream[M]) writeLoop() error {
	w := bufio.NewWriterSize(s.c, 64<<10)
	for {
		select {
		case <-s.done:
			return nil
		case m := <-s.out:
			if err := s.codec.Encode(w, m); err != nil {
				s.Close()
				return err
			}
			// Write what else is queued before flushing.
			for more := true; more; {
				select {
				case m := <-s.out:
					if err := s.codec.Encode(w, m); err != nil {
						s.Close()
						return err
					}
				default:
					more = false
				}
			}
			if err := w.Flush(); err != nil {
				s.Close()
				return err
			}
		}
	}
}

// NetListener adapts a net.Listener with codec.
func NetListener[M any](l net.Listener, codec Codec[M], cfg StreamConfig) Listener[M] {
	return &netListener[M]{l: l, codec: codec, cfg: cfg}
}

type netListener[M any] struct {
	l     net.Listener
	codec Codec[M]
	cfg   StreamConfig
}

func (n *netListener[M]) Accept(ctx context.Context) (Conn[M], error) {
	stop := context.AfterFunc(ctx, func() { n.l.Close() })
	defer stop()
	c, err := n.l.Accept()
	if err != nil {
		return nil, err
	}
	return Stream(c, n.codec, n.cfg), nil
}

func (n *netListener[M]) Close() error { return n.l.Close() }
func (n *netListener[M]) Addr() string { return n.l.Addr().String() }

// NetDialer dials TCP (or any network of D) with codec.
type NetDialer[M any] struct {
	D interface {
		DialContext(ctx context.Context, network, addr string) (net.Conn, error)
	}
	Codec Codec[M]
	Cfg   StreamConfig
}

// Dial opens a stream connection to addr.
func (d NetDialer[M]) Dial(ctx context.Context, addr string) (Conn[M], error) {
	var dd interface {
		DialContext(ctx context.Context, network, addr string) (net.Conn, error)
	} = d.D
	if dd == nil {
		dd = &net.Dialer{}
	}
	c, err := dd.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	return Stream(c, d.Codec, d.Cfg), nil
}
