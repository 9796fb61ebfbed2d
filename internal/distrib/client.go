package distrib

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/trawl/trawl/internal/distrib/nameserver"
	"github.com/trawl/trawl/internal/distrib/wire"
	"github.com/trawl/trawl/internal/feed"
)

// Client is the content client side of the chain: a feed.Dialer whose
// sessions are created by the master distributor's session factory and
// carry operations to the distributor it chose. The feeder's outbox keeps
// every operation until its callback, so when a distributor dies the
// feeder closes the failed session, dials again (the master, perhaps a new
// one, places a recreate of the same session id on a live distributor) and
// sends again what had no callback.
type Client struct {
	Registry nameserver.Registry
	// Control makes the calls to the name server's master (10 s timeout
	// if nil); Data carries the operations (2 min).
	Control, Data *wire.Client
	Logger        *slog.Logger

	mu   sync.Mutex
	last map[string]int64 // target -> its last session id
}

// NewClient returns a content client over reg.
func NewClient(reg nameserver.Registry, log *slog.Logger) *Client {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Client{Registry: reg, Control: &wire.Client{Timeout: 10 * time.Second},
		Data: &wire.Client{Timeout: 2 * time.Minute, MaxPending: 4096}, Logger: log, last: map[string]int64{}}
}

// Close closes the client's connections.
func (c *Client) Close() error {
	c.Control.Close()
	return c.Data.Close()
}

// Dial implements feed.Dialer: create (or recreate, after a failure) a
// session for the target's collection with the master.
func (c *Client) Dial(ctx context.Context, t feed.Target) (feed.Session, error) {
	master, err := c.Registry.Resolve(ctx, wire.NameDispatcher, wire.IfaceSessionFactory, wire.VersionSessionFactory)
	if err != nil {
		return nil, fmt.Errorf("distrib: no master content distributor: %w", err)
	}
	c.mu.Lock()
	prev, again := c.last[t.Name]
	c.mu.Unlock()
	args := []wire.Value{wire.Str(t.Collection), wire.GuaranteeSet(0), wire.I64(0)}
	method := "create"
	if again {
		method = "recreate"
		args = append([]wire.Value{wire.I64(prev)}, args...)
	}
	f, err := c.Control.Call(ctx, master.Addr(), wire.IfaceSessionFactory, method, args...)
	if err != nil {
		return nil, fmt.Errorf("distrib: %s session for %s at the master %s: %w", method, t.Collection, master.Addr(), err)
	}
	a, err := wire.ParseAOR(f.Arg(0))
	if err != nil {
		return nil, err
	}
	id, err := strconv.ParseInt(a.ObjectID, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("distrib: session AOR %s: %w", a, err)
	}
	c.mu.Lock()
	c.last[t.Name] = id
	c.mu.Unlock()
	c.Logger.Info("distrib: session", "target", t.Name, "method", method, "session", id, "distributor", a.Addr(), "master", master.Addr())
	return &clientSession{c: c, id: id, addr: a.Addr(), master: master.Addr(), target: t.Name}, nil
}

type clientSession struct {
	c                    *Client
	id                   int64
	addr, master, target string
	mu                   sync.Mutex
	failed, closed       bool
}

// Submit implements feed.Session: one process call per batch, whose reply
// holds one result per operation; each becomes the operation's callback.
func (s *clientSession) Submit(ctx context.Context, batch []feed.Operation, cb feed.Callback) error {
	s.mu.Lock()
	if s.closed || s.failed {
		s.mu.Unlock()
		return errors.New("distrib: session closed")
	}
	s.mu.Unlock()
	ops := make([]wire.Value, 0, len(batch))
	for i := range batch {
		b, err := batch[i].MarshalBinary()
		if err != nil {
			return fmt.Errorf("distrib: %w", err)
		}
		ops = append(ops, wire.Byt(b))
	}
	seqs := make([]uint64, len(batch))
	for i := range batch {
		seqs[i] = batch[i].Seq
	}
	go func() {
		f, err := s.c.Data.Call(ctx, s.addr, wire.IfaceSession, "process", wire.I64(s.id), wire.Lst(ops...))
		var rs []OpResult
		if err == nil {
			rs, err = ParseResults(f.Arg(0))
		}
		if err != nil {
			s.mu.Lock()
			s.failed = true
			s.mu.Unlock()
			err = fmt.Errorf("distrib: session %d at %s: %w", s.id, s.addr, err)
			s.c.Logger.Warn("distrib: session failed", "err", err)
			for _, seq := range seqs {
				cb(seq, err)
			}
			return
		}
		answered := make(map[uint64]bool, len(rs))
		failed := 0
		for _, r := range rs {
			answered[r.Seq] = true
			switch {
			case r.Err == "":
				cb(r.Seq, nil)
			case r.Rejected:
				cb(r.Seq, fmt.Errorf("%w: %s", feed.ErrRejected, r.Err))
			default:
				if failed++; failed == 1 {
					s.c.Logger.Warn("distrib: operations failed, to be sent again", "session", s.id, "distributor", s.addr, "err", r.Err)
				}
				cb(r.Seq, errors.New("distrib: "+r.Err))
			}
		}
		for _, seq := range seqs {
			if !answered[seq] {
				cb(seq, fmt.Errorf("distrib: session %d: no result for operation %d", s.id, seq))
			}
		}
	}()
	return nil
}

// Close implements feed.Session: unless the session failed (it will be
// recreated), it closes it at the master. Batches still under way are not
// waited for: the feeder takes them back and ignores their late callbacks.
func (s *clientSession) Close() error {
	s.mu.Lock()
	s.closed = true
	failed := s.failed
	s.mu.Unlock()
	if failed {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := s.c.Control.Call(ctx, s.master, wire.IfaceSessionFactory, "close", wire.I64(s.id)); err != nil {
		return fmt.Errorf("distrib: close session %d: %w", s.id, err)
	}
	s.c.mu.Lock()
	if s.c.last[s.target] == s.id {
		delete(s.c.last, s.target)
	}
	s.c.mu.Unlock()
	return nil
}
