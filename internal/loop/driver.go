package loop

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Clock is the driver's source of time.
type Clock interface {
	Now() time.Time
	// Timer returns a channel that receives once d has passed, and a
	// function that stops it.
	Timer(d time.Duration) (<-chan time.Time, func())
}

// RealClock is the wall clock.
type RealClock struct{}

// Now returns time.Now().
func (RealClock) Now() time.Time { return time.Now() }

// Timer wraps time.NewTimer.
func (RealClock) Timer(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTimer(d)
	return t.C, func() { t.Stop() }
}

// Storage makes a batch's records durable. Apply returns only once they
// are; an error stops the driver (nothing of the batch is sent).
type Storage interface {
	Apply(ctx context.Context, records []any) error
}

// StorageFunc adapts a function to Storage.
type StorageFunc func(ctx context.Context, records []any) error

// Apply calls f.
func (f StorageFunc) Apply(ctx context.Context, records []any) error { return f(ctx, records) }

// Worker does a machine's jobs; Do may block and must stop when ctx ends.
type Worker interface {
	Do(ctx context.Context, spec any) (any, error)
}

// WorkerFunc adapts a function to Worker.
type WorkerFunc func(ctx context.Context, spec any) (any, error)

// Do calls f.
func (f WorkerFunc) Do(ctx context.Context, spec any) (any, error) { return f(ctx, spec) }

// Config configures a Driver. Machine is required; the rest has defaults.
type Config[M any] struct {
	// Name prefixes the driver's own log lines ("dupserver", ...).
	Name    string
	Machine Machine[M]
	// Listeners are accepted from; a connection's Connected event carries
	// the listener's tag.
	Listeners map[string]Listener[M]
	// Dialer opens the connections a batch's Dial asks for.
	Dialer Dialer[M]
	// Storage applies Persist records (nil: a batch with records stops the
	// driver with an error).
	Storage Storage
	// Worker does the jobs of Work (nil: a batch with jobs stops the
	// driver with an error).
	Worker Worker
	// MaxWork bounds the jobs running at once (64 if <= 0); further jobs
	// wait, in order.
	MaxWork int
	// Clock gives the events' Now and the timers (RealClock if nil).
	Clock Clock
	// TickInterval is the regular Tick (1 s if 0; none if < 0).
	TickInterval time.Duration
	// Logger receives the machine's log lines and the driver's own.
	Logger *slog.Logger
	// EventQueue bounds the events waiting for the loop (4096 if <= 0).
	EventQueue int
	// MaxSteps bounds the events stepped before one Ready (64 if <= 0).
	MaxSteps int
	// Hold, when set, keeps a connection whose send queue is full instead
	// of closing it: see HoldConfig.
	Hold *HoldConfig
}

// HoldConfig makes a driver hold the messages of a connection whose send
// queue is full, in order, and retry them, rather than cut the peer off at
// once. The machine is told with a Blocked event (it may stop producing
// for the peer) and, when every held message went out, an Unblocked event.
// A peer that stays full past Timeout, or for which more than Max messages
// wait, is closed.
type HoldConfig struct {
	// Max bounds the messages held for one connection (65,536 if <= 0).
	Max int
	// Timeout is how long a send queue may stay full, no message leaving
	// it (2 minutes if <= 0).
	Timeout time.Duration
	// Retry is how often held messages are tried again (10 ms if <= 0).
	Retry time.Duration
}

// held is what a driver with Hold keeps for a full connection.
type held[M any] struct {
	msgs  []Envelope[M]
	since time.Time // when a message last left (or the queue filled)
}

// Stats count what a driver did.
type Stats struct {
	Events, Batches, Sent, SendFailures, Records, Jobs, Conns uint64
	// Dropped counts Droppable messages that found their queue full.
	Dropped uint64
	// Received counts the messages the machine was given whose batch has
	// been applied (what they caused is sent, persisted or submitted);
	// Submitted the jobs the machine asked for, Done their results the
	// machine was given whose batch has been applied; Held is how many
	// messages wait for a full connection now. Several drivers whose
	// connections all run between them are quiet together when two
	// snapshots in a row are equal, their Sent sum equals their Received
	// sum, Submitted equals Done and nothing is held (Quiet).
	Received, Submitted, Done, Held uint64
}

// Quiet reports whether the drivers whose snapshots are before and after,
// taken in that order, had nothing in flight between the two: no message
// sent and not yet handled by its receiver, no job running or waiting,
// nothing held, and nothing sent or handled meanwhile. It holds only when
// every connection of the drivers links two of them (a message to or from
// elsewhere unbalances the sums).
func Quiet(before, after []Stats) bool {
	if len(before) != len(after) {
		return false
	}
	var sent, recv uint64
	for i, a := range after {
		b := before[i]
		if a.Sent != b.Sent || a.Received != b.Received || a.Submitted != b.Submitted || a.Done != b.Done ||
			a.Submitted != a.Done || a.Held != 0 || b.Held != 0 {
			return false
		}
		sent += a.Sent
		recv += a.Received
	}
	return sent == recv
}

// Driver runs one Machine: it owns the goroutines, connections, storage,
// workers and clock, and steps the machine from one goroutine.
type Driver[M any] struct {
	cfg     Config[M]
	log     *slog.Logger
	events  chan Event[M]
	stop    chan struct{}
	nextID  atomic.Uint64
	wg      sync.WaitGroup
	mu      sync.Mutex // guards closing against wg.Add
	closing bool
	// idle hands a job to a worker goroutine that finished its last one
	// and waits for another (unbuffered: a send succeeds only when one
	// waits). Reusing workers keeps the stacks they grew; a goroutine per
	// job grew a new one each time (1-2 % of a crawl's CPU).
	idle chan Job

	// Owned by the loop goroutine.
	conns   map[Peer]Conn[M]
	waiting []Job
	running int
	held    map[Peer]*held[M]
	local   []Event[M]      // events of the driver's own, stepped next
	dones   []chan struct{} // Do calls whose batch is being applied

	stats struct {
		events, batches, sent, sendFailures, records, jobs, conns, dropped atomic.Uint64
		received, submitted, done, held                                    atomic.Uint64
	}
	// stepped counts the messages and job results of the batch being
	// built (loop goroutine); published to stats after its apply.
	stepped struct{ received, done uint64 }
	started atomic.Bool
	ctx     context.Context
}

// New returns a driver for cfg.
func New[M any](cfg Config[M]) *Driver[M] {
	if cfg.MaxWork <= 0 {
		cfg.MaxWork = 64
	}
	if cfg.Clock == nil {
		cfg.Clock = RealClock{}
	}
	if cfg.TickInterval == 0 {
		cfg.TickInterval = time.Second
	}
	if cfg.EventQueue <= 0 {
		cfg.EventQueue = 4096
	}
	if cfg.MaxSteps <= 0 {
		cfg.MaxSteps = 64
	}
	if h := cfg.Hold; h != nil {
		hc := *h
		if hc.Max <= 0 {
			hc.Max = 1 << 16
		}
		if hc.Timeout <= 0 {
			hc.Timeout = 2 * time.Minute
		}
		if hc.Retry <= 0 {
			hc.Retry = 10 * time.Millisecond
		}
		cfg.Hold = &hc
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.Name == "" {
		cfg.Name = "loop"
	}
	return &Driver[M]{cfg: cfg, log: log, events: make(chan Event[M], cfg.EventQueue),
		stop: make(chan struct{}), idle: make(chan Job), conns: map[Peer]Conn[M]{}, held: map[Peer]*held[M]{}}
}

// Stats returns the driver's counters.
func (d *Driver[M]) Stats() Stats {
	return Stats{Events: d.stats.events.Load(), Batches: d.stats.batches.Load(), Sent: d.stats.sent.Load(),
		SendFailures: d.stats.sendFailures.Load(), Records: d.stats.records.Load(), Jobs: d.stats.jobs.Load(),
		Conns: d.stats.conns.Load(), Dropped: d.stats.dropped.Load(),
		Done: d.stats.done.Load(), Received: d.stats.received.Load(),
		Submitted: d.stats.submitted.Load(), Held: d.stats.held.Load()}
}

// goAdd counts a goroutine of the driver, or reports false once it stops.
func (d *Driver[M]) goAdd() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closing {
		return false
	}
	d.wg.Add(1)
	return true
}

// post hands an event to the loop; false once the driver stopped.
func (d *Driver[M]) post(ev Event[M]) bool {
	select {
	case d.events <- ev:
		return true
	case <-d.stop:
		return false
	}
}

// Inject steps the machine with an Input event carrying m.
func (d *Driver[M]) Inject(ctx context.Context, m M) error {
	select {
	case d.events <- Event[M]{Kind: Input, Msg: m}:
		return nil
	case <-d.stop:
		return errors.New("loop: driver stopped")
	case <-ctx.Done():
		return ctx.Err()
	}
}

// call is a function run on the loop goroutine (Do). Its state says
// whether the loop took it (callRunning) or its caller gave up on it
// first (callAbandoned): exactly one of the two happens, so a function
// either runs to its end or never runs.
type call struct {
	fn    func(now time.Time)
	state *atomic.Int32
	ran   chan struct{} // closed once fn has returned
	done  chan struct{} // closed once fn's batch was applied
}

const (
	callQueued int32 = iota
	callRunning
	callAbandoned
)

// Do runs fn on the loop goroutine, where it may read and change the
// machine (an operator's query or command), then applies the machine's
// batch. It returns nil once that batch was applied: what fn made the
// machine persist is durable, its messages are queued. When ctx ends or
// the driver stops first, it returns an error, and then fn either never
// runs or has already returned: what fn wrote is never written after Do
// returns, so a caller may read the variables fn sets without a race
// whatever Do returned (they hold fn's results only when it returned nil).
func (d *Driver[M]) Do(ctx context.Context, fn func(now time.Time)) error {
	c := call{fn: fn, state: new(atomic.Int32), ran: make(chan struct{}), done: make(chan struct{})}
	select {
	case d.events <- Event[M]{Kind: Input, Result: c}:
	case <-d.stop:
		return errors.New("loop: driver stopped")
	case <-ctx.Done():
		return ctx.Err()
	}
	var err error
	select {
	case <-c.done:
		return nil
	case <-d.stop:
		err = errors.New("loop: driver stopped")
	case <-ctx.Done():
		err = ctx.Err()
	}
	if !c.state.CompareAndSwap(callQueued, callAbandoned) {
		<-c.ran // the loop took it: fn is running or has returned
	}
	return err
}

// Serve runs a connection made elsewhere (an in-memory pipe) through the
// driver until it closes; Run must be running or start soon.
func (d *Driver[M]) Serve(ctx context.Context, tag string, c Conn[M]) error {
	if !d.goAdd() {
		c.Close()
		return errors.New("loop: driver stopped")
	}
	defer d.wg.Done()
	return d.runConn(ctx, tag, c)
}

func (d *Driver[M]) runConn(ctx context.Context, tag string, c Conn[M]) error {
	// The connection ends when the driver stops, whatever ctx it was
	// given (an in-memory connection served with a long-lived context).
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-d.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	id := Peer(d.nextID.Add(1))
	if !d.post(Event[M]{Kind: Connected, Peer: id, Tag: tag, Addr: c.RemoteAddr(), Result: c}) {
		c.Close()
		return errors.New("loop: driver stopped")
	}
	err := c.Run(ctx, func(m M) bool { return d.post(Event[M]{Kind: Received, Peer: id, Msg: m}) })
	d.post(Event[M]{Kind: Closed, Peer: id, Err: err})
	return err
}

// Run runs the machine until ctx ends or storage fails.
func (d *Driver[M]) Run(ctx context.Context) (err error) {
	if d.started.Swap(true) {
		return errors.New("loop: driver already running")
	}
	ctx, cancel := context.WithCancel(ctx)
	d.ctx = ctx
	defer func() {
		cancel()
		for _, l := range d.cfg.Listeners {
			l.Close()
		}
		for _, c := range d.conns {
			c.Close()
		}
		d.mu.Lock()
		d.closing = true
		d.mu.Unlock()
		close(d.stop)
		d.wg.Wait()
	}()
	for tag, l := range d.cfg.Listeners {
		if !d.goAdd() {
			break
		}
		go func() {
			defer d.wg.Done()
			d.accept(ctx, tag, l)
		}()
	}
	clock := d.cfg.Clock
	var timerC <-chan time.Time
	stopTimer := func() {}
	var due time.Time
	setDue := func(t time.Time) {
		if t.IsZero() || (!due.IsZero() && !t.Before(due)) {
			return
		}
		stopTimer()
		due = t
		timerC, stopTimer = clock.Timer(max(t.Sub(clock.Now()), 0))
	}
	regular := func(now time.Time) {
		if d.cfg.TickInterval > 0 {
			setDue(now.Add(d.cfg.TickInterval))
		}
	}
	defer func() { stopTimer() }()
	var retryC <-chan time.Time
	stopRetry := func() {}
	defer func() { stopRetry() }()
	regular(clock.Now())
	// A machine may be built with actions already pending (a dial it wants
	// at start): they are applied before the first event.
	if b := d.cfg.Machine.Ready(); !b.Empty() {
		if err := d.apply(ctx, &b); err != nil {
			return err
		}
		d.cfg.Machine.Advance()
		d.publish()
		setDue(b.Wake)
	}
	for {
		if retryC == nil && len(d.held) > 0 {
			retryC, stopRetry = clock.Timer(d.cfg.Hold.Retry)
		}
		var ev Event[M]
		if len(d.local) > 0 {
			ev, d.local = d.local[0], d.local[1:]
		} else {
			select {
			case <-ctx.Done():
				return nil
			case <-timerC:
				due, timerC = time.Time{}, nil
				now := clock.Now()
				regular(now)
				ev = Event[M]{Kind: Tick, Now: now}
			case <-retryC:
				retryC = nil
				d.retryHeld()
				continue
			case ev = <-d.events:
			}
		}
		// Step this event and whatever else is already waiting, then
		// apply one batch.
		for n := 0; ; n++ {
			d.step(ev)
			if n+1 >= d.cfg.MaxSteps {
				break
			}
			more := false
			select {
			case ev = <-d.events:
				more = true
			default:
			}
			if !more {
				break
			}
		}
		b := d.cfg.Machine.Ready()
		if err := d.apply(ctx, &b); err != nil {
			return err
		}
		d.cfg.Machine.Advance()
		d.publish()
		setDue(b.Wake)
		for _, c := range d.dones {
			close(c)
		}
		d.dones = d.dones[:0]
	}
}

// publish counts the messages and results of the batch just applied and
// the messages held now (Stats).
func (d *Driver[M]) publish() {
	n := 0
	for _, h := range d.held {
		n += len(h.msgs)
	}
	d.stats.held.Store(uint64(n))
	d.stats.received.Add(d.stepped.received)
	d.stats.done.Add(d.stepped.done)
	d.stepped.received, d.stepped.done = 0, 0
}

// step gives one event to the machine, keeping the driver's own books.
func (d *Driver[M]) step(ev Event[M]) {
	d.stats.events.Add(1)
	if ev.Now.IsZero() {
		ev.Now = d.cfg.Clock.Now()
	}
	switch ev.Kind {
	case Connected:
		if c, ok := ev.Result.(Conn[M]); ok {
			d.conns[ev.Peer] = c
			d.stats.conns.Add(1)
		}
		ev.Result = nil
	case Closed:
		delete(d.conns, ev.Peer)
		delete(d.held, ev.Peer)
	case Result:
		d.running--
		d.stepped.done++
		d.startWaiting()
	case Received:
		d.stepped.received++
	case Input:
		if c, ok := ev.Result.(call); ok {
			if c.state.CompareAndSwap(callQueued, callRunning) {
				c.fn(ev.Now)
				close(c.ran)
				d.dones = append(d.dones, c.done)
			}
			return
		}
	}
	d.cfg.Machine.Step(ev)
}

// apply carries out a batch in the contract's order.
func (d *Driver[M]) apply(ctx context.Context, b *Batch[M]) error {
	if b.Empty() {
		return nil
	}
	d.stats.batches.Add(1)
	if len(b.Persist) > 0 {
		if d.cfg.Storage == nil {
			return fmt.Errorf("loop: %s: %d records to persist and no storage", d.cfg.Name, len(b.Persist))
		}
		if err := d.cfg.Storage.Apply(ctx, b.Persist); err != nil {
			return fmt.Errorf("loop: %s: persist: %w", d.cfg.Name, err)
		}
		d.stats.records.Add(uint64(len(b.Persist)))
	}
	for _, e := range b.Out {
		c := d.conns[e.To]
		if c == nil {
			continue // closed meanwhile; the machine hears of it as Closed
		}
		if e.Close {
			if e.Reason != "" {
				d.log.Info(d.cfg.Name+": closing connection", "peer", e.To, "remote", c.RemoteAddr(), "reason", e.Reason)
			}
			delete(d.held, e.To)
			c.Close()
			continue
		}
		if e.Droppable && d.held[e.To] != nil {
			d.stats.dropped.Add(1)
			continue
		}
		if d.hold(e, c) {
			continue
		}
		if err := c.TrySend(e.Msg, e.Priority); err != nil {
			if e.Droppable && errors.Is(err, ErrQueueFull) {
				d.stats.dropped.Add(1)
				continue
			}
			if d.cfg.Hold != nil && errors.Is(err, ErrQueueFull) {
				d.held[e.To] = &held[M]{msgs: []Envelope[M]{e}, since: d.cfg.Clock.Now()}
				d.log.Debug(d.cfg.Name+": send queue of a peer full, holding its messages", "peer", e.To, "remote", c.RemoteAddr())
				d.local = append(d.local, Event[M]{Kind: Blocked, Peer: e.To})
				continue
			}
			// A peer that does not read is cut off rather than let its
			// queue grow without bound.
			d.stats.sendFailures.Add(1)
			d.log.Warn(d.cfg.Name+": cannot send, closing the connection", "peer", e.To, "remote", c.RemoteAddr(), "err", err)
			c.Close()
			continue
		}
		d.stats.sent.Add(1)
	}
	for _, r := range b.Dial {
		if err := d.dial(ctx, r); err != nil {
			return err
		}
	}
	if len(b.Work) > 0 {
		if d.cfg.Worker == nil {
			return fmt.Errorf("loop: %s: %d jobs and no worker", d.cfg.Name, len(b.Work))
		}
		d.stats.submitted.Add(uint64(len(b.Work)))
		d.waiting = append(d.waiting, b.Work...)
		d.startWaiting()
	}
	for _, l := range b.Logs {
		d.log.Log(ctx, l.Level, l.Msg, l.Args...)
	}
	return nil
}

func (d *Driver[M]) dial(ctx context.Context, r DialReq) error {
	if d.cfg.Dialer == nil {
		return fmt.Errorf("loop: %s: dial %s and no dialer", d.cfg.Name, r.Addr)
	}
	if !d.goAdd() {
		return nil
	}
	go func() {
		defer d.wg.Done()
		c, err := d.cfg.Dialer.Dial(ctx, r.Addr)
		if err != nil {
			d.post(Event[M]{Kind: DialFailed, Tag: r.Tag, Addr: r.Addr, Err: err})
			return
		}
		d.runConn(ctx, r.Tag, c)
	}()
	return nil
}

func (d *Driver[M]) startWaiting() {
	for len(d.waiting) > 0 && d.running < d.cfg.MaxWork {
		j := d.waiting[0]
		select {
		case d.idle <- j:
		default:
			if !d.goAdd() {
				return
			}
			go d.work(d.ctx, j)
		}
		d.waiting[0] = Job{} // the array outlives the slice's first element
		d.waiting = d.waiting[1:]
		d.running++
		d.stats.jobs.Add(1)
	}
}

// work runs j, then each job startWaiting hands it, until the driver
// stops. There are at most about twice MaxWork workers: those running
// jobs, and those that posted a result but did not wait again yet when
// the loop started the next job (it starts a new one then).
func (d *Driver[M]) work(ctx context.Context, j Job) {
	defer d.wg.Done()
	for {
		res, err := d.cfg.Worker.Do(ctx, j.Spec)
		if !d.post(Event[M]{Kind: Result, Job: j.ID, Result: res, Err: err}) {
			return
		}
		select {
		case j = <-d.idle:
		case <-d.stop:
			return
		}
	}
}

func (d *Driver[M]) accept(ctx context.Context, tag string, l Listener[M]) {
	for {
		c, err := l.Accept(ctx)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, ErrClosed) {
				return
			}
			d.log.Warn(d.cfg.Name+": accept", "listener", tag, "err", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
			continue
		}
		if !d.goAdd() {
			c.Close()
			return
		}
		go func() {
			defer d.wg.Done()
			d.runConn(ctx, tag, c)
		}()
	}
}

// hold appends e to the messages held for its connection, if there are
// any (so that the order stays), closing a connection past Hold.Max. It
// reports whether e was taken care of.
func (d *Driver[M]) hold(e Envelope[M], c Conn[M]) bool {
	h := d.held[e.To]
	if h == nil {
		return false
	}
	if len(h.msgs) >= d.cfg.Hold.Max {
		d.closeHeld(e.To, c, h, "held messages over the limit")
		return true
	}
	h.msgs = append(h.msgs, e)
	return true
}

func (d *Driver[M]) closeHeld(id Peer, c Conn[M], h *held[M], reason string) {
	d.stats.sendFailures.Add(1)
	d.log.Error(d.cfg.Name+": peer does not read its messages, closing its connection", "peer", id, "remote", c.RemoteAddr(),
		"reason", reason, "held", len(h.msgs), "full_for", d.cfg.Clock.Now().Sub(h.since).String())
	delete(d.held, id)
	c.Close()
}

// retryHeld sends what it can of the held messages; a connection that has
// room again is Unblocked, one full for longer than Hold.Timeout closed.
func (d *Driver[M]) retryHeld() {
	now := d.cfg.Clock.Now()
	ids := make([]Peer, 0, len(d.held))
	for id := range d.held {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		h, c := d.held[id], d.conns[id]
		if c == nil {
			delete(d.held, id)
			continue
		}
		n := 0
		for ; n < len(h.msgs); n++ {
			e := h.msgs[n]
			err := c.TrySend(e.Msg, e.Priority)
			if errors.Is(err, ErrQueueFull) {
				break
			}
			if err != nil {
				d.stats.sendFailures.Add(1)
			} else {
				d.stats.sent.Add(1)
			}
		}
		if n > 0 {
			h.since = now
			h.msgs = slices.Delete(h.msgs, 0, n)
		}
		if len(h.msgs) > 0 {
			if now.Sub(h.since) > d.cfg.Hold.Timeout {
				d.closeHeld(id, c, h, "send queue full too long")
			}
			continue
		}
		delete(d.held, id)
		d.local = append(d.local, Event[M]{Kind: Unblocked, Peer: id})
	}
}
