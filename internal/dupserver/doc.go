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
//
// # Fencing
//
// The failure: the duplicate server and its failover replica are cut apart
// while both stay up. Node schedulers that lose the duplicate server (or
// are refused by it) fail over to the replica, which promotes itself once
// it has not heard from the duplicate server for PromoteAfter. Without a
// fence both sides would then accept changes: the duplicate server answers
// from its own store when its replica is gone, so one checksum could get
// an owner on each side, and whichever store was kept afterwards would
// lose the other side's owners. Cases: (1) every node scheduler reaches
// both sides; (2) some reach only the duplicate server; (3) some reach
// only the replica; (4) the link heals while both still run; (5) either
// side restarts during the split.
//
// The rule: a change is answered only by the side that holds the pair's
// newest epoch AND knows that it is the only one able to answer.
//
//   - Epoch. Each store keeps a fencing record (Store.Fence: epoch,
//     PromotablePeer, Deposed; Pebble key 'e' = uvarint(epoch) flags(1),
//     written with fsync). A replica with a failover listener starts at
//     epoch 1 (Failover). A promotion writes epoch+1 before the promoted
//     server admits its first node scheduler.
//   - Handshake. MS-FSCMT has no field for it: the epoch travels as
//     PKT_EPOCH ("ep", the key the spec gives CMD_UM_CONF_SET) in a
//     PPDUP_KEEPALIVE, a trawl extension (cmt.PPDUPKeepalive.Epoch) sent
//     only when not zero, so a peer that does not use it sees the spec's
//     messages and skips the key if it ever gets one. The failover replica
//     sends its epoch when its duplicate server connects; the duplicate
//     server sends its epoch first on every replica link (its barrier
//     keep-alives carry it).
//   - Synchronous answers. A duplicate server that heard a replica's epoch
//     records PromotablePeer and from then on answers no change its replica
//     has not acknowledged: an ADD of a checksum that already has an owner
//     is forwarded too (the owner may be a change not yet acknowledged);
//     with the replica gone (link closed, timeout, error) it closes every
//     node scheduler connection without answering and refuses new ones; a
//     full replica window closes the sender's connection. The node
//     schedulers keep what was not answered (internal/nodesched: the
//     driver's pending operations and, across a restart, the store's dsop
//     records) and send it again on their next link, which a refused link
//     moves to the failover address. So in cases (1) and (2) nothing is
//     answered by the cut-off duplicate server, and in (3) only the
//     replica, once promoted, answers. The promoted replica answers alone
//     (its replica, the old primary, is not promotable): that is the one
//     side that may.
//   - Why this is enough: the replica acknowledges only before its
//     promotion (it admits a node scheduler only when no duplicate server
//     is connected, and refuses the old one afterwards), so every change
//     the old duplicate server ever answered is in the promoted store, and
//     nothing the old one did after the promotion was answered. The node
//     schedulers therefore need no epoch of their own: they never hear an
//     answer from a stale side. (They do not record epochs; a duplicate
//     server outside a fenced pair, or one that never heard its replica's
//     epoch, behaves as before.)
//   - Deposing, case (4). The promoted server answers the old duplicate
//     server's dial on its replica listener with its epoch and closes the
//     link once answered. The old server, with PromotablePeer and a lower
//     epoch, writes Deposed and refuses every node scheduler for good (also
//     after a restart) until it is restarted with --replica-mode.
//   - Converging. A deposed (or killed) primary restarted as the promoted
//     server's replica hears the higher epoch on the link, removes its
//     dirty mappings (changes its own replica never acknowledged; in a
//     fenced pair none of them was answered, and their node schedulers
//     sent them to the winner) and takes the epoch; the winner, which
//     marked every mapping dirty at its promotion, then sends it the whole
//     store (the resynchronisation above). Both stores end equal, and no
//     answered owner is lost.
//   - Case (5): the fencing record is on disk, so a duplicate server
//     restarted during the split is still synchronous (or deposed), and a
//     restarted promoted replica keeps its epoch.
//
// What the fence does not cover: a duplicate server that never connected
// to its replica since its store was created answers alone until it does
// (it does not know the replica can be promoted); while the pair is cut,
// node schedulers that reach only the old duplicate server wait (no
// answers) until the split heals or they reach the replica: availability
// is given up for consistency. Turning a deposed server into a replica is
// an operator's restart, not automatic. Tested by the traces
// fence-ds.trace, fence-replica.trace and failover-promotion.trace, and by
// internal/multinode/clustertest TestSplitDupserver.
package dupserver
