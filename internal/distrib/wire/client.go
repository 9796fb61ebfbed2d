package wire

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"
)

// Client makes calls over frames: one TCP connection per address, shared
// by concurrent calls and matched to their replies by request id. A
// connection that fails fails every call waiting on it and is dialled
// again by the next call.
type Client struct {
	// Timeout bounds one call, dial included (10 s if 0).
	Timeout time.Duration
	// Dialer opens connections (a net.Dialer if nil).
	Dialer interface {
		DialContext(ctx context.Context, network, addr string) (net.Conn, error)
	}
	// MaxPending bounds the calls waiting on one connection (1024 if 0).
	MaxPending int

	mu    sync.Mutex
	conns map[string]*clientConn
}

type clientConn struct {
	c       net.Conn
	wmu     sync.Mutex
	w       *bufio.Writer
	mu      sync.Mutex
	pending map[uint64]chan *Frame
	next    uint64
	err     error
}

// ErrTooMany is returned when a connection has MaxPending calls waiting.
var ErrTooMany = errors.New("wire: too many calls waiting")

func (cl *Client) timeout() time.Duration {
	if cl.Timeout > 0 {
		return cl.Timeout
	}
	return 10 * time.Second
}

func (cl *Client) conn(ctx context.Context, addr string) (*clientConn, error) {
	cl.mu.Lock()
	if cl.conns == nil {
		cl.conns = map[string]*clientConn{}
	}
	if c := cl.conns[addr]; c != nil {
		cl.mu.Unlock()
		return c, nil
	}
	cl.mu.Unlock()
	var d interface {
		DialContext(ctx context.Context, network, addr string) (net.Conn, error)
	} = cl.Dialer
	if d == nil {
		d = &net.Dialer{}
	}
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("wire: dial %s: %w", addr, err)
	}
	c := &clientConn{c: nc, w: bufio.NewWriterSize(nc, 64<<10), pending: map[uint64]chan *Frame{}}
	cl.mu.Lock()
	if old := cl.conns[addr]; old != nil {
		cl.mu.Unlock()
		nc.Close()
		return old, nil
	}
	cl.conns[addr] = c
	cl.mu.Unlock()
	go cl.read(addr, c)
	return c, nil
}

func (cl *Client) read(addr string, c *clientConn) {
	r := bufio.NewReaderSize(c.c, 64<<10)
	var err error
	for {
		var f *Frame
		f, err = ReadFrame(r)
		if err != nil {
			break
		}
		c.mu.Lock()
		ch := c.pending[f.ID]
		delete(c.pending, f.ID)
		c.mu.Unlock()
		if ch != nil {
			ch <- f
		}
	}
	cl.drop(addr, c, fmt.Errorf("wire: connection to %s: %w", addr, err))
}

func (cl *Client) drop(addr string, c *clientConn, err error) {
	cl.mu.Lock()
	if cl.conns[addr] == c {
		delete(cl.conns, addr)
	}
	cl.mu.Unlock()
	c.c.Close()
	c.mu.Lock()
	if c.err == nil {
		c.err = err
	}
	for id, ch := range c.pending {
		delete(c.pending, id)
		close(ch)
	}
	c.mu.Unlock()
}

// Call sends a request to the object at addr and waits for its answer. An
// exception comes back as an *Error; a broken connection or a timeout as
// another error.
func (cl *Client) Call(ctx context.Context, addr, object, method string, args ...Value) (*Frame, error) {
	ctx, cancel := context.WithTimeout(ctx, cl.timeout())
	defer cancel()
	c, err := cl.conn(ctx, addr)
	if err != nil {
		return nil, err
	}
	ch := make(chan *Frame, 1)
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return nil, c.err
	}
	maxp := cl.MaxPending
	if maxp <= 0 {
		maxp = 1024
	}
	if len(c.pending) >= maxp {
		c.mu.Unlock()
		return nil, ErrTooMany
	}
	c.next++
	id := c.next
	c.pending[id] = ch
	c.mu.Unlock()
	b, err := AppendFrame(nil, Call(id, object, method, args...))
	if err != nil {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
		return nil, err
	}
	c.wmu.Lock()
	c.c.SetWriteDeadline(time.Now().Add(cl.timeout()))
	_, err = c.w.Write(b)
	if err == nil {
		err = c.w.Flush()
	}
	c.wmu.Unlock()
	if err != nil {
		cl.drop(addr, c, fmt.Errorf("wire: write to %s: %w", addr, err))
		return nil, fmt.Errorf("wire: write to %s: %w", addr, err)
	}
	select {
	case f, ok := <-ch:
		if !ok {
			c.mu.Lock()
			err := c.err
			c.mu.Unlock()
			return nil, err
		}
		if f.Kind == Exception {
			return f, f.Err()
		}
		return f, nil
	case <-ctx.Done():
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
		return nil, fmt.Errorf("wire: %s.%s at %s: %w", object, method, addr, ctx.Err())
	}
}

// Close closes every connection.
func (cl *Client) Close() error {
	cl.mu.Lock()
	conns := cl.conns
	cl.conns = nil
	cl.mu.Unlock()
	for addr, c := range conns {
		cl.drop(addr, c, errors.New("wire: client closed"))
	}
	return nil
}
