// Package loop is the one machine contract and the one driver that every
// protocol role of trawl follows: the multinode scheduler, node schedulers,
// duplicate servers and replicas (MS-FSCMT), the content distributors and
// name server (MS-FSCDFT), the dmake master and workers (MS-FSFDMW).
//
// # The contract
//
// A role's protocol logic is a Machine: a pure state machine with no
// goroutines, sockets, disk or wall clock inside. The driver feeds it one
// Event at a time with Step (a connection came up, a message arrived, a
// connection closed, a tick of the clock, the result of I/O the machine asked
// for); the machine answers by accumulating one Batch of actions, which the
// driver takes with Ready, applies, and acknowledges with Advance. This is
// the Step / Ready / Advance shape of etcd's raft RawNode:
//
//	m.Step(ev)          // any number of times
//	b := m.Ready()      // what the machine wants done, in order
//	apply(b)            // persist, then send and close, then start work, then log
//	m.Advance()         // the batch is applied; the machine forgets it
//
// A Batch is applied in a fixed order, the same for every role:
//
//  1. Persist: records are handed to the role's Storage and made durable
//     before anything else happens, so a message never announces state that a
//     crash could lose (raft's rule: persist before send).
//  2. Out: messages are sent and connections closed, in the order given.
//  3. Dial: outgoing connections are opened; each ends in a Connected event
//     or a DialFailed event carrying the error.
//  4. Work: I/O jobs (a DNS lookup, a fetch, a child process, a file
//     transfer) are started on the role's Worker; each ends in a Result event
//     with the job's ID.
//  5. Logs: log lines go to the driver's slog.Logger.
//
// A machine says when it next wants a Tick with Batch.Wake (zero: the
// driver's regular TickInterval only); the time it sees is always the Now of
// the event, taken from the injected Clock.
//
// # Transports
//
// A Conn carries whole messages of one type M. Stream adapts a byte stream
// (a TCP connection, a net.Pipe) with a Codec; CMT adapts an MS-FSCMT
// connection (cmt.Conn). Network is an in-memory transport of named
// endpoints whose links can be delayed, made to drop messages, partitioned
// (messages vanish silently, dials fail) and cut (connections close), in the
// manner of hashicorp/raft's InmemTransport, so fault tests need not kill
// processes to break a link.
//
// # Decisions
//
// Step returns nothing: a machine that receives a message it cannot accept
// answers it, closes the connection or logs it, through its batch. Peer IDs
// are given by the driver, start at 1 and are never reused, so a late
// message of a closed connection cannot be mistaken for its successor's.
// Every queue is bounded: the event queue (Config.EventQueue), each
// connection's send queue (a peer that does not read is cut off rather than
// let it grow, or with Config.Hold its messages are held up to a bound and
// a time limit while the machine is told Blocked, then Unblocked), and the
// number of jobs running at once (Config.MaxWork; further jobs wait in
// order, and a machine that may ask for very many bounds them itself).
// Driver.Do returns once the batch its function produced was applied, so an
// operator's command that persists something is durable when it returns. A
// connection ends when its driver stops, whatever context it was served
// with. A machine built with actions pending (a dial it wants at start)
// gets them applied before the first event.
package loop
