// Package dupserver implements the duplicate server (DS) and the duplicate
// server replica (R) of MS-FSCMT (sections 3.3 and 3.4): the global registry
// of document checksums that tells node schedulers whether a document they
// downloaded is a duplicate of one another node (or they themselves) already
// owns.
//
// The package has three layers, as DESIGN.md section 6 asks:
//
//   - DS, Replica and Failover are loop.Machines: events go in (Step: a
//     connection came up, a message arrived, a connection closed, a tick,
//     a dial failed) and one loop.Batch comes out (Ready: messages with
//     their priority, connections to close, the replica dial, log lines;
//     Advance acknowledges it). They start no goroutine, open no socket and
//     never read the wall clock.
//   - Store is the checksum store: MemStore for tests and in-process use,
//     PebbleStore on disk.
//   - Server is the wiring: it opens the store, builds the machine and runs
//     it on a loop.Driver with a CMT listener (two with a failover
//     listener) and a CMT dialer for the replica.
//
// # How the roles map onto the machine contract
//
// Connections are told apart by their tag (loop.Event.Tag): TagListen for
// the main listener and Server.Serve, TagFailover for a replica's failover
// listener, TagReplica for the duplicate server's dial to its replica.
//
// The store is not behind Batch.Persist: the machines read and write it
// synchronously, inside Step. That is deliberate, for three reasons. The
// owner of a checksum is read for every PPDUP_ADD and PPDUP_REMOVE, and the
// table is larger than memory, so reads must go to the store in Step
// anyway; with writes deferred to the batch, a second message on the same
// checksum stepped before the batch is applied would read the old owner (a
// read-your-writes overlay would have to shadow the store, its dirty-key
// scan and its collection range deletes). A failed write is answered with
// PPDUP_ERROR to the node scheduler that sent the message (3.3.5.4, tested
// by TestDSErrors and TestReplicaStoreErrorReported), whereas a failed
// Persist stops the driver with nothing sent. And every write is a single
// Pebble batch already, so moving it would not save a sync. What touches
// the store inside the machines, exactly: DS reads owners (Get), dirty keys
// (DirtyKeys) and at construction the collection records and tombstones;
// it writes owners with their dirty marks (Put, Delete), clears dirty marks
// (ClearDirty), collection records, collection range deletes and
// tombstones. Replica writes what its duplicate server forwards. Failover,
// at the promotion, marks every mapping dirty for the new replica
// (Mappings + Put).
//
// The duplicate server keeps its replica link up itself: with
// DSConfig.ReplicaAddr it asks for the dial when it is built (the driver
// applies a machine's initial batch before the first event) and again,
// through loop.Redial, after a failed dial (backoff from 100 ms doubling to
// 10 s, Wake schedules the retry) or when the link closes (at once when the
// link lived at least a second, after the backoff otherwise). The old
// driver reset the backoff on every successful dial, so a link that died
// young was retried every 100 ms; Redial resets it only when the link
// lived.
//
// Failover replaces the event loop's machine swap of the old driver: it
// runs the Replica, and after the promotion a DS over the same store,
// inside itself, passing on their batches (loop.Batch.Append); a refused
// connection is closed through the batch and its later events ignored.
//
// Log lines leave the machines in the batch (loop.Batch.Logs) and are
// written by the driver's logger, so scenario traces (testdata/*.trace)
// show them.
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
