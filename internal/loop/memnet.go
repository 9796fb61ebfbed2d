package loop

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// ErrPartitioned is returned by a dial across a partition.
var ErrPartitioned = errors.New("loop: network partitioned")

// ErrNoListener is returned by a dial to an address nobody listens on.
var ErrNoListener = errors.New("loop: no listener at address")

// Fault makes a link between two hosts misbehave.
type Fault struct {
	// Delay holds every message this long before delivery (order kept).
	Delay time.Duration
	// DropEvery drops every DropEvery-th message sent on the link (0: none).
	// Deterministic, so a test sees the same run every time.
	DropEvery int
}

// Network is an in-memory transport of hosts. A host listens on addresses
// and dials them; links between two hosts can be delayed, made to drop
// messages, partitioned (messages vanish and dials fail, as on a network that
// splits without resetting connections) and cut (every connection between
// them closes). Messages are passed as values, not encoded. The zero value is
// not usable: call NewNetwork.
type Network[M any] struct {
	mu        sync.Mutex
	listeners map[string]*memListener[M]
	parts     map[[2]string]bool
	faults    map[[2]string]*linkFault
	conns     map[*memHalf[M]]bool
	queue     int
}

type linkFault struct {
	Fault
	sent int
}

// NewNetwork returns an empty network whose connections queue up to queue
// messages each way (1024 if <= 0).
func NewNetwork[M any](queue int) *Network[M] {
	if queue <= 0 {
		queue = 1024
	}
	return &Network[M]{listeners: map[string]*memListener[M]{}, parts: map[[2]string]bool{},
		faults: map[[2]string]*linkFault{}, conns: map[*memHalf[M]]bool{}, queue: queue}
}

func pair(a, b string) [2]string {
	if b < a {
		a, b = b, a
	}
	return [2]string{a, b}
}

// Host returns the endpoint named host: what it listens on and dials from.
func (n *Network[M]) Host(host string) *Host[M] { return &Host[M]{n: n, name: host} }

// Partition splits hosts a and b: messages between them are dropped
// silently and dials fail, until Heal.
func (n *Network[M]) Partition(a, b string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.parts[pair(a, b)] = true
}

// Heal ends a partition between a and b.
func (n *Network[M]) Heal(a, b string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.parts, pair(a, b))
}

// SetFault sets the fault of the link between a and b (the zero Fault
// clears it).
func (n *Network[M]) SetFault(a, b string, f Fault) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if f == (Fault{}) {
		delete(n.faults, pair(a, b))
		return
	}
	n.faults[pair(a, b)] = &linkFault{Fault: f}
}

// Cut closes every connection between hosts a and b; both ends see it
// closed. New dials still succeed unless the hosts are partitioned.
func (n *Network[M]) Cut(a, b string) int {
	n.mu.Lock()
	var cut []*memHalf[M]
	for h := range n.conns {
		if pair(h.local, h.remote) == pair(a, b) {
			cut = append(cut, h)
		}
	}
	n.mu.Unlock()
	for _, h := range cut {
		h.Close()
	}
	return len(cut) / 2
}

// verdict says what happens to a message from a to b: dropped, and after
// what delay it is delivered.
func (n *Network[M]) verdict(a, b string) (drop bool, delay time.Duration) {
	n.mu.Lock()
	defer n.mu.Unlock()
	k := pair(a, b)
	if n.parts[k] {
		return true, 0
	}
	if f := n.faults[k]; f != nil {
		f.sent++
		if f.DropEvery > 0 && f.sent%f.DropEvery == 0 {
			return true, 0
		}
		return false, f.Delay
	}
	return false, 0
}

// Host is one endpoint of a Network.
type Host[M any] struct {
	n    *Network[M]
	name string
}

// Name returns the host's name.
func (h *Host[M]) Name() string { return h.name }

// Listen listens on addr (any string, unique in the network).
func (h *Host[M]) Listen(addr string) (Listener[M], error) {
	n := h.n
	n.mu.Lock()
	defer n.mu.Unlock()
	if _, ok := n.listeners[addr]; ok {
		return nil, fmt.Errorf("loop: listen %s: address in use", addr)
	}
	l := &memListener[M]{n: n, host: h.name, addr: addr, conns: make(chan Conn[M], 16), done: make(chan struct{})}
	n.listeners[addr] = l
	return l, nil
}

// Dial connects to the listener at addr.
func (h *Host[M]) Dial(ctx context.Context, addr string) (Conn[M], error) {
	n := h.n
	n.mu.Lock()
	l := n.listeners[addr]
	parted := l != nil && n.parts[pair(h.name, l.host)]
	n.mu.Unlock()
	if l == nil {
		return nil, fmt.Errorf("loop: dial %s: %w", addr, ErrNoListener)
	}
	if parted {
		return nil, fmt.Errorf("loop: dial %s from %s: %w", addr, h.name, ErrPartitioned)
	}
	a, b := n.newPair(h.name, l.host)
	select {
	case l.conns <- b:
		return a, nil
	case <-l.done:
		a.Close()
		return nil, fmt.Errorf("loop: dial %s: %w", addr, ErrNoListener)
	case <-ctx.Done():
		a.Close()
		return nil, ctx.Err()
	}
}

type memListener[M any] struct {
	n     *Network[M]
	host  string
	addr  string
	conns chan Conn[M]
	once  sync.Once
	done  chan struct{}
}

func (l *memListener[M]) Addr() string { return l.addr }

func (l *memListener[M]) Accept(ctx context.Context) (Conn[M], error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (l *memListener[M]) Close() error {
	l.once.Do(func() {
		l.n.mu.Lock()
		delete(l.n.listeners, l.addr)
		l.n.mu.Unlock()
		close(l.done)
	})
	return nil
}

// memHalf is one end of an in-memory connection.
type memHalf[M any] struct {
	n             *Network[M]
	local, remote string
	peer          *memHalf[M]
	out           chan timed[M] // what this end sends, before delivery
	in            chan M        // what this end receives
	closed        chan struct{} // shared by both ends
	once          *sync.Once
}

type timed[M any] struct {
	m   M
	due time.Time
}

func (n *Network[M]) newPair(a, b string) (*memHalf[M], *memHalf[M]) {
	closed, once := make(chan struct{}), &sync.Once{}
	x := &memHalf[M]{n: n, local: a, remote: b, out: make(chan timed[M], n.queue), in: make(chan M, n.queue), closed: closed, once: once}
	y := &memHalf[M]{n: n, local: b, remote: a, out: make(chan timed[M], n.queue), in: make(chan M, n.queue), closed: closed, once: once}
	x.peer, y.peer = y, x
	n.mu.Lock()
	n.conns[x], n.conns[y] = true, true
	n.mu.Unlock()
	go x.pump()
	go y.pump()
	return x, y
}

// pump moves what this end sent to the other end's inbox, after its delay.
func (h *memHalf[M]) pump() {
	for {
		select {
		case <-h.closed:
			return
		case t := <-h.out:
			if d := time.Until(t.due); d > 0 {
				select {
				case <-h.closed:
					return
				case <-time.After(d):
				}
			}
			select {
			case h.peer.in <- t.m:
			case <-h.closed:
				return
			}
		}
	}
}

func (h *memHalf[M]) RemoteAddr() string { return h.remote }

func (h *memHalf[M]) TrySend(m M, _ int) error {
	select {
	case <-h.closed:
		return ErrClosed
	default:
	}
	drop, delay := h.n.verdict(h.local, h.remote)
	if drop {
		return nil
	}
	var due time.Time
	if delay > 0 {
		due = time.Now().Add(delay)
	}
	select {
	case h.out <- timed[M]{m: m, due: due}:
		return nil
	default:
		return ErrQueueFull
	}
}

func (h *memHalf[M]) Close() error {
	h.once.Do(func() {
		h.n.mu.Lock()
		delete(h.n.conns, h)
		delete(h.n.conns, h.peer)
		h.n.mu.Unlock()
		close(h.closed)
	})
	return nil
}

func (h *memHalf[M]) Run(ctx context.Context, deliver func(M) bool) error {
	for {
		select {
		case <-ctx.Done():
			h.Close()
			return nil
		case <-h.closed:
			// Deliver what already arrived, as a socket's buffer would.
			for {
				select {
				case m := <-h.in:
					if !deliver(m) {
						return nil
					}
				default:
					return nil
				}
			}
		case m := <-h.in:
			if !deliver(m) {
				h.Close()
				return nil
			}
		}
	}
}
