package loop

import (
	"context"
	"errors"
	"fmt"

	"github.com/trawl/trawl/internal/cmt"
)

// CMT adapts an MS-FSCMT connection. Priority is cmt.Priority's value.
func CMT(c *cmt.Conn, remote string) Conn[cmt.Message] { return cmtConn{c: c, remote: remote} }

type cmtConn struct {
	c      *cmt.Conn
	remote string
}

func (c cmtConn) RemoteAddr() string { return c.remote }
func (c cmtConn) Close() error       { return c.c.Close() }

// TrySend queues m; cmt's queue-full and closed errors come back as
// ErrQueueFull and ErrClosed (wrapping cmt's), so that a driver with Hold
// knows to hold.
func (c cmtConn) TrySend(m cmt.Message, prio int) error {
	err := c.c.TrySend(m, cmt.Priority(prio))
	switch {
	case err == nil:
		return nil
	case errors.Is(err, cmt.ErrQueueFull):
		return fmt.Errorf("%w: %w", ErrQueueFull, err)
	case errors.Is(err, cmt.ErrClosed):
		return fmt.Errorf("%w: %w", ErrClosed, err)
	}
	return err
}

func (c cmtConn) Run(ctx context.Context, deliver func(cmt.Message) bool) error {
	errc := make(chan error, 1)
	go func() { errc <- c.c.Run(ctx) }()
	for f := range c.c.Incoming() {
		if !deliver(f.Message) {
			c.c.Close()
		}
	}
	return <-errc
}
