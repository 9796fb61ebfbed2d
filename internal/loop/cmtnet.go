package loop

import (
	"context"
	"errors"
	"net"
	"time"

	"github.com/trawl/trawl/internal/cmt"
)

// CMTListener adapts a net.Listener to MS-FSCMT connections: every accepted
// connection runs as a cmt.Conn with cfg, named by its remote address
// (after cfg.Name and a space, when cfg.Name is set: "node scheduler
// 10.0.0.2:4711").
func CMTListener(l net.Listener, cfg cmt.ConnConfig) Listener[cmt.Message] {
	return &cmtListener{l: l, cfg: cfg}
}

type cmtListener struct {
	l   net.Listener
	cfg cmt.ConnConfig
}

func (c *cmtListener) Accept(ctx context.Context) (Conn[cmt.Message], error) {
	stop := context.AfterFunc(ctx, func() { c.l.Close() })
	defer stop()
	for {
		nc, err := c.l.Accept()
		if err != nil {
			var ne net.Error
			if ctx.Err() == nil && errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return nil, err
		}
		cfg := c.cfg
		remote := nc.RemoteAddr().String()
		if cfg.Name == "" {
			cfg.Name = remote
		} else {
			cfg.Name += " " + remote
		}
		return CMT(cmt.NewConn(nc, cfg), remote), nil
	}
}

func (c *cmtListener) Close() error { return c.l.Close() }
func (c *cmtListener) Addr() string { return c.l.Addr().String() }

// CMTDialer opens MS-FSCMT connections.
type CMTDialer struct {
	// D dials (nil: a net.Dialer).
	D cmt.Dialer
	// Cfg configures every connection; an empty Name becomes the address.
	Cfg cmt.ConnConfig
	// Timeout bounds one dial (0: only the caller's context).
	Timeout time.Duration
}

// Dial connects to addr over TCP (or D's network).
func (d CMTDialer) Dial(ctx context.Context, addr string) (Conn[cmt.Message], error) {
	var dialer cmt.Dialer = d.D
	if dialer == nil {
		dialer = &net.Dialer{}
	}
	if d.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d.Timeout)
		defer cancel()
	}
	nc, err := dialer.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	cfg := d.Cfg
	if cfg.Name == "" {
		cfg.Name = addr
	}
	return CMT(cmt.NewConn(nc, cfg), addr), nil
}
