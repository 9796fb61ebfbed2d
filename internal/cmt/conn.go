package cmt

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/trawl/trawl/internal/marshal"
)

// ErrQueueFull is returned by TrySend when the send queue of the message's
// priority is full.
var ErrQueueFull = errors.New("cmt: send queue full")

// ErrClosed is returned by Send and TrySend once the connection is closed.
var ErrClosed = errors.New("cmt: connection closed")

// ConnConfig configures a Conn. The zero value gives the defaults.
type ConnConfig struct {
	// Name identifies the peer in log records (for example "dupserver
	// 10.0.0.2:13002").
	Name string
	// Logger receives the records of skipped messages; nil discards them.
	Logger *slog.Logger
	// MaxFrame is the largest frame body accepted or sent
	// (DefaultMaxFrame if <= 0). A larger incoming frame closes the
	// connection; a larger outgoing one is refused by Send.
	MaxFrame int
	// SendQueue is the capacity of each of the two send queues, high and
	// normal priority (1024 if <= 0).
	SendQueue int
	// RecvQueue is the capacity of the Incoming channel (1024 if <= 0).
	// When it is full the connection stops reading, and TCP pushes back
	// on the sender.
	RecvQueue int
	// WriteBuffer is the size of the write buffer (64 KiB if <= 0).
	WriteBuffer int
	// Limits bound the decoding of each message (marshal defaults for
	// zero fields).
	Limits marshal.Limits
}

// ConnStats counts what went through a Conn.
type ConnStats struct {
	Sent     uint64 // frames written
	Received uint64 // messages delivered on Incoming
	Skipped  uint64 // frames dropped: unknown command or malformed message
}

// Conn is one MS-FSCMT connection over a net.Conn (TCP, or an in-memory
// pipe) or any io.ReadWriteCloser.
//
// Send and TrySend encode a message at once, on the caller's goroutine,
// and queue the frame. Run writes the queued frames, high priority before
// normal and first in first out within each priority (the spec's
// "prepend to the communication queues" would send several queued
// high-priority messages newest first; trawl keeps them in order, see
// docs/decisions/cmt.md), batching them in a buffer that is flushed whenever
// the queues are empty. Run also reads frames and delivers the decoded
// messages on Incoming; a frame with an unknown command or a malformed
// message is logged and skipped, while a frame over MaxFrame or a broken
// stream ends the connection.
//
// Conn never changes the messages it carries: vector clocks, the
// first-message rule of CMD_UM_INIT and the answers to keep-alives belong
// to the role that owns the connection.
type Conn struct {
	rwc    io.ReadWriteCloser
	cfg    ConnConfig
	log    *slog.Logger
	high   chan *[]byte
	normal chan *[]byte
	in     chan Frame
	done   chan struct{}
	pool   sync.Pool

	closeOnce sync.Once
	started   atomic.Bool

	sent, received, skipped atomic.Uint64
}

// NewConn returns a Conn over rwc. Call Run to start it.
func NewConn(rwc io.ReadWriteCloser, cfg ConnConfig) *Conn {
	if cfg.MaxFrame <= 0 {
		cfg.MaxFrame = DefaultMaxFrame
	}
	if cfg.SendQueue <= 0 {
		cfg.SendQueue = 1024
	}
	if cfg.RecvQueue <= 0 {
		cfg.RecvQueue = 1024
	}
	if cfg.WriteBuffer <= 0 {
		cfg.WriteBuffer = 64 << 10
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.Name != "" {
		log = log.With("peer", cfg.Name)
	}
	return &Conn{
		rwc:    rwc,
		cfg:    cfg,
		log:    log,
		high:   make(chan *[]byte, cfg.SendQueue),
		normal: make(chan *[]byte, cfg.SendQueue),
		in:     make(chan Frame, cfg.RecvQueue),
		done:   make(chan struct{}),
	}
}

// Incoming returns the channel of received messages. It is closed when Run
// returns.
func (c *Conn) Incoming() <-chan Frame { return c.in }

// Done returns a channel closed when the connection is closing.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Stats returns the connection's counters.
func (c *Conn) Stats() ConnStats {
	return ConnStats{Sent: c.sent.Load(), Received: c.received.Load(), Skipped: c.skipped.Load()}
}

// Close closes the connection: Run returns, queued frames are dropped.
func (c *Conn) Close() error {
	var err error
	c.closeOnce.Do(func() {
		close(c.done)
		err = c.rwc.Close()
	})
	return err
}

// encode builds the frame of m in a pooled buffer.
func (c *Conn) encode(m Message, p Priority) (*[]byte, error) {
	bp, _ := c.pool.Get().(*[]byte)
	if bp == nil {
		bp = new([]byte)
	}
	b, err := AppendFrame((*bp)[:0], m, p)
	if err != nil {
		c.pool.Put(bp)
		return nil, err
	}
	*bp = b
	if len(b)-HeaderLen > c.cfg.MaxFrame {
		c.pool.Put(bp)
		return nil, fmt.Errorf("%w: %v of %d bytes, limit %d", ErrFrameTooLarge, m.Code(), len(b)-HeaderLen, c.cfg.MaxFrame)
	}
	return bp, nil
}

func (c *Conn) queue(p Priority) chan *[]byte {
	if p == PriorityHigh {
		return c.high
	}
	return c.normal
}

// Send queues m with priority p, waiting while the queue is full until ctx
// ends or the connection closes. An encoding error is returned at once.
func (c *Conn) Send(ctx context.Context, m Message, p Priority) error {
	select {
	case <-c.done:
		return ErrClosed
	default:
	}
	bp, err := c.encode(m, p)
	if err != nil {
		return err
	}
	select {
	case c.queue(p) <- bp:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-c.done:
		return ErrClosed
	}
}

// TrySend queues m with priority p, or returns ErrQueueFull at once.
func (c *Conn) TrySend(m Message, p Priority) error {
	select {
	case <-c.done:
		return ErrClosed
	default:
	}
	bp, err := c.encode(m, p)
	if err != nil {
		return err
	}
	select {
	case c.queue(p) <- bp:
		return nil
	default:
		c.pool.Put(bp)
		return ErrQueueFull
	}
}

// Run runs the connection until ctx ends, Close is called, the peer closes
// it or an error occurs; then it closes the underlying connection, waits
// for its reader and writer, and closes Incoming. It returns nil when ctx
// ended or Close was called, an error wrapping io.EOF when the peer closed
// the connection between frames, and the error that stopped it otherwise
// (ErrFrameTooLarge for an oversized frame). Run may be called once.
func (c *Conn) Run(ctx context.Context) error {
	if !c.started.CompareAndSwap(false, true) {
		return errors.New("cmt: Conn.Run called twice")
	}
	errc := make(chan error, 2)
	go func() { errc <- c.readLoop() }()
	go func() { errc <- c.writeLoop() }()
	var err error
	got := 0
	select {
	case <-ctx.Done():
	case <-c.done:
	case err = <-errc:
		got++
	}
	c.Close()
	for ; got < 2; got++ {
		<-errc
	}
	close(c.in)
	select {
	case <-ctx.Done():
		return nil
	default:
	}
	return err
}

// readLoop reads and decodes frames until the stream ends or the
// connection closes.
func (c *Conn) readLoop() error {
	fr := NewFrameReader(c.rwc, c.cfg.MaxFrame)
	dec := NewDecoder(c.cfg.Limits)
	for {
		body, err := fr.ReadFrame()
		if err != nil {
			select {
			case <-c.done:
				return nil
			default:
			}
			if err == io.EOF {
				return fmt.Errorf("cmt: connection closed by peer: %w", err)
			}
			if errors.Is(err, ErrFrameTooLarge) {
				c.log.Error("cmt: oversized frame, closing the connection", "err", err)
			}
			return err
		}
		f, err := dec.Decode(body)
		if err != nil {
			c.skipped.Add(1)
			var uce *UnknownCommandError
			if errors.As(err, &uce) {
				c.log.Warn("cmt: unknown command, message skipped", "code", int32(uce.Code), "priority", int32(uce.Priority))
			} else {
				c.log.Warn("cmt: malformed message skipped", "offset", fr.Offset()-int64(len(body))-HeaderLen, "err", err)
			}
			continue
		}
		// Count first, so that a consumer that got the message sees it
		// counted.
		c.received.Add(1)
		select {
		case c.in <- f:
		case <-c.done:
			c.received.Add(^uint64(0))
			return nil
		}
	}
}

// writeLoop writes queued frames, high priority first, flushing when both
// queues are empty.
func (c *Conn) writeLoop() error {
	w := bufio.NewWriterSize(c.rwc, c.cfg.WriteBuffer)
	write := func(bp *[]byte) error {
		_, err := w.Write(*bp)
		c.pool.Put(bp)
		if err != nil {
			return c.writeErr(err)
		}
		c.sent.Add(1)
		return nil
	}
	// drainHigh writes every queued high-priority frame.
	drainHigh := func() error {
		for {
			select {
			case bp := <-c.high:
				if err := write(bp); err != nil {
					return err
				}
			default:
				return nil
			}
		}
	}
	for {
		if err := drainHigh(); err != nil {
			return err
		}
		select {
		case bp := <-c.normal:
			if err := write(bp); err != nil {
				return err
			}
			continue
		default:
		}
		if w.Buffered() > 0 {
			if err := w.Flush(); err != nil {
				return c.writeErr(err)
			}
		}
		select {
		case bp := <-c.high:
			if err := write(bp); err != nil {
				return err
			}
		case bp := <-c.normal:
			// A high-priority frame queued at the same moment goes first.
			if err := drainHigh(); err != nil {
				return err
			}
			if err := write(bp); err != nil {
				return err
			}
		case <-c.done:
			return nil
		}
	}
}

func (c *Conn) writeErr(err error) error {
	select {
	case <-c.done:
		return nil
	default:
	}
	return fmt.Errorf("cmt: write: %w", err)
}
