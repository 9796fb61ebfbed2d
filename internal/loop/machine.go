package loop

import (
	"log/slog"
	"time"
)

// Peer names one connection of a machine. The driver gives every connection
// a fresh Peer, starting at 1 and never reused.
type Peer uint64

// Kind says what an Event is.
type Kind uint8

// The kinds of events.
const (
	// Connected: connection Peer came up; Tag names the listener it was
	// accepted on or the Dial that opened it, Addr the remote address.
	Connected Kind = iota + 1
	// Received: Msg arrived on Peer.
	Received
	// Closed: connection Peer ended (Err says why, nil for a clean close).
	Closed
	// Tick: the clock advanced; a machine checks its timers.
	Tick
	// Result: the job with ID Job finished with Result (or Err).
	Result
	// DialFailed: the Dial with Tag could not connect to Addr (Err says why).
	DialFailed
	// Input: Msg is an event from outside the transports (an operator's
	// command, a configuration change), given with Driver.Inject.
	Input
	// Blocked: Peer's send queue is full; with Config.Hold the driver
	// holds its messages, in order, until it has room (a machine may stop
	// producing for it).
	Blocked
	// Unblocked: every message held for Peer went out.
	Unblocked
)

var kindNames = [...]string{"", "connected", "received", "closed", "tick", "result", "dial-failed", "input", "blocked", "unblocked"}

func (k Kind) String() string {
	if int(k) < len(kindNames) && k != 0 {
		return kindNames[k]
	}
	return "kind?"
}

// Event is one thing that happened to a machine.
type Event[M any] struct {
	Kind   Kind
	Now    time.Time
	Peer   Peer
	Tag    string
	Addr   string
	Msg    M
	Job    uint64
	Result any
	Err    error
}

// Envelope is one message to send, or with Close set, a connection to close
// (after the messages before it in the batch were queued).
type Envelope[M any] struct {
	To       Peer
	Msg      M
	Priority int
	Close    bool
	Reason   string
	// Droppable: when the connection's send queue is full (or messages
	// are held for it), the message is dropped and counted (Stats.Dropped)
	// rather than held or the connection closed: a log line, a gauge.
	Droppable bool
}

// DialReq asks the driver to open a connection to Addr; it ends in a
// Connected event with the same Tag, or a DialFailed event.
type DialReq struct {
	Tag, Addr string
}

// Job is I/O for the driver's Worker to do; its result comes back as a
// Result event with the same ID. IDs are the machine's to choose.
type Job struct {
	ID   uint64
	Spec any
}

// LogLine is a log record the machine wants written.
type LogLine struct {
	Level slog.Level
	Msg   string
	Args  []any
}

// Batch is everything a machine asks for after some steps, applied in the
// order of the package comment: Persist, Out, Dial, Work, Logs.
type Batch[M any] struct {
	Persist []any
	Out     []Envelope[M]
	Dial    []DialReq
	Work    []Job
	Logs    []LogLine
	// Wake, when not zero, is the latest time the machine wants its next
	// Tick.
	Wake time.Time
}

// Empty reports whether the batch asks for nothing.
func (b *Batch[M]) Empty() bool {
	return len(b.Persist) == 0 && len(b.Out) == 0 && len(b.Dial) == 0 && len(b.Work) == 0 &&
		len(b.Logs) == 0 && b.Wake.IsZero()
}

// Send appends a message for peer to.
func (b *Batch[M]) Send(to Peer, m M, prio int) {
	b.Out = append(b.Out, Envelope[M]{To: to, Msg: m, Priority: prio})
}

// CloseConn appends the closing of peer to.
func (b *Batch[M]) CloseConn(to Peer, reason string) {
	b.Out = append(b.Out, Envelope[M]{To: to, Close: true, Reason: reason})
}

// Log appends a log line.
func (b *Batch[M]) Log(level slog.Level, msg string, args ...any) {
	b.Logs = append(b.Logs, LogLine{Level: level, Msg: msg, Args: args})
}

// WakeAt lowers the batch's Wake to t when t is earlier (or Wake is unset).
func (b *Batch[M]) WakeAt(t time.Time) {
	if b.Wake.IsZero() || t.Before(b.Wake) {
		b.Wake = t
	}
}

// Append adds o's actions after b's, keeping the earlier Wake: a machine
// that runs another machine inside (a role that changes shape at run time)
// hands on the inner machine's batch with it.
func (b *Batch[M]) Append(o Batch[M]) {
	b.Persist = append(b.Persist, o.Persist...)
	b.Out = append(b.Out, o.Out...)
	b.Dial = append(b.Dial, o.Dial...)
	b.Work = append(b.Work, o.Work...)
	b.Logs = append(b.Logs, o.Logs...)
	if !o.Wake.IsZero() {
		b.WakeAt(o.Wake)
	}
}

// Machine is the contract every role's protocol logic implements.
type Machine[M any] interface {
	// Step applies one event. It does no I/O and never blocks.
	Step(ev Event[M])
	// Ready returns the actions accumulated since the last Advance. The
	// machine keeps them until Advance.
	Ready() Batch[M]
	// Advance tells the machine its last Ready batch was applied.
	Advance()
}

// Base is a Machine's pending batch, for embedding: a machine appends to
// Pending and gets Ready and Advance for free.
type Base[M any] struct {
	Pending Batch[M]
}

// Ready returns the pending batch.
func (b *Base[M]) Ready() Batch[M] { return b.Pending }

// Advance forgets the pending batch.
func (b *Base[M]) Advance() { b.Pending = Batch[M]{} }
