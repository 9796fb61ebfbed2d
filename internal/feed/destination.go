package feed

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/trawl/trawl/internal/index"
)

// Destination is a Session that applies batches to an in-process index.
// Each batch is applied in a goroutine of its own (the feeder's window
// bounds how many); the callbacks come once the index has persisted it.
// An operation the index cannot take (no URI) is rejected; an index error
// fails the whole batch, to be resent.
type Destination struct {
	idx    *index.Index
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	closed bool
}

// NewDestination returns a session over idx.
func NewDestination(idx *index.Index) *Destination {
	ctx, cancel := context.WithCancel(context.Background())
	return &Destination{idx: idx, ctx: ctx, cancel: cancel}
}

// IndexDialer returns a Dialer whose sessions are Destinations over idx.
func IndexDialer(idx *index.Index) Dialer {
	return func(context.Context, Target) (Session, error) { return NewDestination(idx), nil }
}

// Submit implements Session.
func (d *Destination) Submit(ctx context.Context, batch []Operation, cb Callback) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return fmt.Errorf("feed: destination session closed")
	}
	ops := make([]index.Op, 0, len(batch))
	seqs := make([]uint64, 0, len(batch))
	var rejected []uint64
	for i := range batch {
		op, err := IndexOp(batch[i])
		if err != nil {
			rejected = append(rejected, batch[i].Seq)
			continue
		}
		ops = append(ops, op)
		seqs = append(seqs, batch[i].Seq)
	}
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		for _, seq := range rejected {
			cb(seq, fmt.Errorf("%w: operation without URI", ErrRejected))
		}
		if len(ops) == 0 {
			return
		}
		_, err := d.idx.Apply(d.ctx, ops)
		for _, seq := range seqs {
			cb(seq, err)
		}
	}()
	return nil
}

// closeGrace is how long Close lets the batches under way finish (the
// index persisting them) before it stops waiting for them.
const closeGrace = 5 * time.Second

// Close implements Session: it lets the batches under way end, for at
// most closeGrace (their operations answered ok need not be sent again),
// then stops waiting for the index; it returns when they have ended.
func (d *Destination) Close() error {
	d.mu.Lock()
	d.closed = true
	d.mu.Unlock()
	done := make(chan struct{})
	go func() {
		d.wg.Wait()
		close(done)
	}()
	t := time.NewTimer(closeGrace)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
	d.cancel()
	<-done
	return nil
}

// IndexOp converts a content operation to an index operation, extracting
// the text from the content if the sender has not (see Prepare).
func IndexOp(op Operation) (index.Op, error) {
	if op.URI == "" {
		return index.Op{}, fmt.Errorf("%w: operation without URI", ErrRejected)
	}
	out := index.Op{Remove: op.Kind == Remove, Version: op.Seq, Doc: index.Doc{URL: op.URI, Collection: op.Collection}}
	switch op.Kind {
	case Remove:
		return out, nil
	case UpdateFields:
		out.Fields = true
		out.Doc.Rank = op.Rank
		out.Doc.Anchor = strings.Join(op.Anchors, "\n")
		return out, nil
	}
	Prepare(&op)
	out.Doc.Title = op.Title
	out.Doc.Body = op.Text
	out.Doc.Description = op.Meta.Description
	out.Doc.Anchor = strings.Join(op.Anchors, "\n")
	out.Doc.MIME = op.MIME
	out.Doc.Modified = op.Meta.LastModified
	out.Doc.Language = op.Meta.Language
	out.Doc.Links = op.Links
	out.Doc.Duplicates, out.Doc.Redirects, out.Doc.Mirrors = op.Duplicates, op.Redirects, op.Mirrors
	return out, nil
}
