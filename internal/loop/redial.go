package loop

import (
	"log/slog"
	"time"
)

// Redial keeps one outgoing connection of a machine up: it asks for the
// dial at start, and after a dial that failed or a connection that ended
// within Quick of coming up, asks again after a backoff that doubles from
// Min to Max. A connection that lived longer is redialled at once. It is
// part of the machine (pure: its time is the events'), which hands it every
// event and its batch.
type Redial[M any] struct {
	// Tag names the dial in Connected and DialFailed events.
	Tag string
	// Addr is where to dial ("" disables the link).
	Addr string
	// Name prefixes the log lines ("dupserver: replica").
	Name string
	// Min, Max bound the backoff (100 ms and 10 s if 0); Quick is the
	// least life of a connection that resets it (1 s if 0).
	Min, Max, Quick time.Duration

	peer     Peer
	dialing  bool
	due      time.Time
	backoff  time.Duration
	failures int
	up       time.Time
}

func (r *Redial[M]) defaults() {
	if r.Min <= 0 {
		r.Min = 100 * time.Millisecond
	}
	if r.Max <= 0 {
		r.Max = 10 * time.Second
	}
	if r.Quick <= 0 {
		r.Quick = time.Second
	}
	if r.backoff == 0 {
		r.backoff = r.Min
	}
}

// Start asks for the first dial.
func (r *Redial[M]) Start(b *Batch[M]) {
	r.defaults()
	r.dial(b)
}

// Failures is the number of dials that failed in a row since the link was
// last up.
func (r *Redial[M]) Failures() int { return r.failures }

// Peer is the connection's peer, 0 while it is down.
func (r *Redial[M]) Peer() Peer { return r.peer }

func (r *Redial[M]) dial(b *Batch[M]) {
	if r.Addr == "" || r.dialing || r.peer != 0 {
		return
	}
	r.dialing, r.due = true, time.Time{}
	b.Dial = append(b.Dial, DialReq{Tag: r.Tag, Addr: r.Addr})
}

func (r *Redial[M]) retry(now time.Time, b *Batch[M]) {
	r.due = now.Add(r.backoff)
	r.backoff = min(2*r.backoff, r.Max)
	b.WakeAt(r.due)
}

// Step follows ev: the link's Connected, DialFailed and Closed events, and
// ticks that reach the time of the next dial. Other events are ignored.
func (r *Redial[M]) Step(ev Event[M], b *Batch[M]) {
	r.defaults()
	switch ev.Kind {
	case Connected:
		if ev.Tag == r.Tag && r.Tag != "" {
			r.dialing, r.peer, r.up, r.failures = false, ev.Peer, ev.Now, 0
		}
	case DialFailed:
		if ev.Tag != r.Tag || r.Tag == "" {
			return
		}
		r.dialing = false
		r.failures++
		lvl := slog.LevelDebug
		if r.failures == 1 || r.failures%30 == 0 {
			lvl = slog.LevelWarn
		}
		b.Log(lvl, r.Name+" unreachable, retrying", "addr", r.Addr, "err", ev.Err, "retry_in", r.backoff, "failures", r.failures)
		r.retry(ev.Now, b)
	case Closed:
		if ev.Peer == 0 || ev.Peer != r.peer {
			return
		}
		r.peer = 0
		if ev.Now.Sub(r.up) >= r.Quick {
			r.backoff = r.Min
			r.dial(b)
			return
		}
		// A link that keeps failing at once is not redialled in a tight
		// loop.
		r.retry(ev.Now, b)
	case Tick:
		if !r.due.IsZero() && !ev.Now.Before(r.due) {
			r.dial(b)
		}
	}
}
