package admin

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"
)

// A request body being decoded costs a few times its size in memory (the
// XML decoder's text buffer, its growth and the decoded string), and the
// body cap alone bounds one request, not many at once: the Server shares
// one budget of body bytes between all the requests it is decoding, so
// that a flood of large requests waits for the budget, then is refused
// with 503, instead of being decoded side by side.
//
// A request with a Content-Length takes its whole length from the budget
// before its first byte is read; a chunked one takes budgetChunk bytes
// at a time as the bytes arrive. Either gives them back when the call
// ends (the decoded values live until then).

// DefaultBodyBudget is the bytes of request bodies a Server decodes at
// once when ServerOptions.BodyBudget is 0: one request of the largest
// size, and room for small ones beside it.
const DefaultBodyBudget = DefaultMaxRequest + 4<<20

// DefaultBodyWait is how long a request waits for the budget when
// ServerOptions.BodyWait is 0.
const DefaultBodyWait = 2 * time.Second

// budgetChunk is what a body of unknown length takes from the budget at a
// time.
const budgetChunk = 64 << 10

// errOverBudget is the error of a read that waited for the budget in vain.
var errOverBudget = errors.New("admin: the server is decoding as many request bytes as it allows; try again shortly")

// budget is a weighted semaphore of bytes: acquire waits, first come first
// served, until n bytes are free or the wait ends.
type budget struct {
	mu      sync.Mutex
	size    int64
	used    int64
	waiters []*budgetWaiter
}

type budgetWaiter struct {
	n     int64
	ready chan struct{}
}

func newBudget(size int64) *budget { return &budget{size: size} }

// acquire takes n bytes (at most the budget's size), waiting at most wait
// or until ctx ends; it reports whether it got them.
func (b *budget) acquire(ctx context.Context, n int64, wait time.Duration) bool {
	if n > b.size {
		n = b.size
	}
	b.mu.Lock()
	if len(b.waiters) == 0 && b.used+n <= b.size {
		b.used += n
		b.mu.Unlock()
		return true
	}
	w := &budgetWaiter{n: n, ready: make(chan struct{})}
	b.waiters = append(b.waiters, w)
	b.mu.Unlock()
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-w.ready:
		return true
	case <-ctx.Done():
	case <-t.C:
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	select {
	case <-w.ready: // granted meanwhile
		return true
	default:
	}
	for i, x := range b.waiters {
		if x == w {
			b.waiters = append(b.waiters[:i], b.waiters[i+1:]...)
			break
		}
	}
	b.grant() // a large waiter leaving may let smaller ones in
	return false
}

// release gives back n bytes.
func (b *budget) release(n int64) {
	if n <= 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used -= n
	b.grant()
}

// grant wakes the waiters at the head of the queue that now fit.
func (b *budget) grant() {
	for len(b.waiters) > 0 && b.used+b.waiters[0].n <= b.size {
		w := b.waiters[0]
		b.waiters = b.waiters[1:]
		b.used += w.n
		close(w.ready)
	}
}

// budgetReader reads a body of unknown length, taking budgetChunk bytes
// from the budget before reading them.
type budgetReader struct {
	ctx    context.Context
	r      io.Reader
	b      *budget
	wait   time.Duration
	credit int64 // bytes taken and not yet read
	held   int64 // bytes taken in all
	failed bool
}

func (br *budgetReader) Read(p []byte) (int, error) {
	if br.credit == 0 {
		if !br.b.acquire(br.ctx, budgetChunk, br.wait) {
			br.failed = true
			return 0, errOverBudget
		}
		br.credit += budgetChunk
		br.held += budgetChunk
	}
	if int64(len(p)) > br.credit {
		p = p[:br.credit]
	}
	n, err := br.r.Read(p)
	br.credit -= int64(n)
	return n, err
}
