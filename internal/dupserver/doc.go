// Package dupserver implements the duplicate server (DS) and the duplicate
// server replica (R) of MS-FSCMT (sections 3.3 and 3.4): the global registry
// of document checksums that tells node schedulers whether a document they
// downloaded is a duplicate of one another node (or they themselves) already
// owns.
//
// The package has three layers, as DESIGN.md section 6 asks:
//
//   - DS and Replica are pure state machines. Events go in (a message from
//     a peer, a peer connected or disconnected, a clock tick with the time
//     passed in) and Actions come out (a message to send to a peer with its
//     priority, or a connection to close). They call a Store synchronously;
//     they start no goroutine, open no socket and never read the wall clock.
//   - Store is the checksum store: MemStore for tests and in-process use,
//     PebbleStore on disk.
//   - Server is the driver: it listens for node schedulers (or, in replica
//     mode, for its duplicate server), dials the replica with backoff, and
//     runs the machine in a single event-loop goroutine that owns it.
//
// # Checksum store layout (PebbleStore)
//
// One Pebble database per process. Every key starts with a kind byte:
//
//	'm' collection 0x00 checksum(16)  -> uvarint(len(uri)) uri nodeid   owner mapping
//	'd' collection 0x00 checksum(16)  -> (empty)                        not yet acknowledged by the replica
//	'c' collection                    -> flags(1) marshal(config)      collection record (flag 1 = removal in progress)
//	't' collection                    -> (empty)                        removal not yet confirmed by the replica
//
// Collection names may not contain 0x00, so a collection's mappings are the
// contiguous range ['m' name 0x00, 'm' name 0x01) and removing a collection
// is one range delete.
//
// # Replication
//
// The duplicate server forwards every change to the replica before answering
// the node scheduler (3.3). Every change is written together with a dirty mark
// for its key; the replica's answer clears the mark. When the replica is down
// or does not answer within the replica timeout, the duplicate server answers
// from its own store at once (a crawl never waits for a dead replica), keeps
// the marks, and when the replica comes back it sends the configurations, the
// pending collection removals and every dirty key again. See docs/decisions/dupserver.md.
//
// # Failover
//
// A replica with a failover listener (Server.FailoverListen) is promoted to
// a duplicate server over the same store when a node scheduler connects
// there after the duplicate server has been gone for PromoteAfter; the old
// duplicate server catches up as the promoted one's replica
// (Server.FailoverReplica). Listeners take an allow-list of peer addresses
// (Server.Allow). See docs/decisions/dupserver.md.
package dupserver
