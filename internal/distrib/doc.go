// Package distrib is trawl's content distributor (MS-FSCDFT): the three
// interfaces of the spec's section 3 on one loop.Machine per distributor,
// run by loop.Driver over internal/distrib/wire frames, with the name
// server (internal/distrib/nameserver, or any nameserver.Registry) as the
// shared registry.
//
// # Objects and names
//
// Every distributor serves, on base port + 390 (and + 391 for sessions of
// external clients, which the same machine answers):
//
//	processing::session_factory   5.1  only while master: __ping (3.3)
//	processing::master_dispatcher 5.0  only while master: register_dispatcher(node_id) (3.1)
//	processing::dispatcher_node   5.1  always: create_session, create, recreate,
//	                                   destroy_session, remove_sessions, get_sessions, get_load (3.5)
//
// The first two are bound as "esp/subsystems/processing/dispatcher", the
// third as "esp/subsystems/processing/dispatcher/<node_id>". The spec's
// resolve of a registrant (3.1.4.1) spells it "esp/subsystem/..."; its own
// bind (3.5.3) and example (4.2.4) use the plural, so the plural is used
// for both: the singular is a typo. A call to the session_factory or
// master_dispatcher of a distributor that is not the master raises
// middleware::unavailable, so a backup's __ping of a demoted master fails.
// AORs carry object_id "cd<node_id>.<incarnation>", the incarnation being
// the start time, so a restarted distributor is told from its predecessor;
// session_factory and master_dispatcher add the master's epoch,
// "cd<node_id>.<incarnation>.e<epoch>" (see Split network).
//
// # Election (MS-FSCDFT 3 intro, 3.1.3, 3.3, 3.4)
//
// The machine makes every call through its worker (jobs: Resolve, Bind,
// Unbind, Ping, Register, IndexSession), one election step at a time:
//
//  1. bind its dispatcher_node (3.5.3; done first, the order being
//     implementation specific);
//  2. resolve session_factory; resolve_exception means no master: bind
//     session_factory, unbind any stale master_dispatcher, bind
//     master_dispatcher (session_factory first, 3.1.3), then resolve
//     master_dispatcher and register_dispatcher with itself;
//  3. a registered master that answers __ping makes it a backup: resolve
//     master_dispatcher, register_dispatcher(node_id), then __ping the
//     master every PingMaster ("check for master", 5 s by default), and
//     register again after every 6 answered pings: a master killed and
//     restarted at the same address before its backups missed
//     PingFailures pings (step 5) answers their pings with no dispatcher
//     node registered, and __ping carries no epoch to tell (found by the
//     chaos test: feeding stopped with "no content distributor is
//     registered"); a master whose own register_dispatcher failed tries
//     again at its next check of its binding;
//  4. a registered master that does not answer is watched as a backup
//     would, counting that failure (spec ambiguity 12);
//  5. a registered binding at the distributor's own address is its own from
//     an earlier run: it binds again (bind-if-absent allows the same
//     address) and is master.
//
// Binds are bind-if-absent (see the name server), so two distributors
// started at the same instant cannot both win step 2: the loser's bind of
// session_factory raises already_bound, it resolves again and becomes a
// backup (3.4.3, last sentence).
//
// Takeover (3.4.5): after PingFailures (3) successive failed __pings (a
// success resets the count) the backup re-resolves session_factory; if it
// finds another distributor there, it pings it once and, when it answers,
// registers with it as a backup (another backup won); if it finds the dead
// master (or nothing), it unbinds the old session_factory (only if the
// binding is still the dead master's AOR: the name server's unbind with a
// holder, so that of two backups taking over at once the slower one's
// unbind does nothing and its bind fails), binds its own,
// unbinds the old master_dispatcher too (the spec does not say to, spec
// ambiguity 14, but the stale binding would block the bind), binds
// master_dispatcher and registers with itself. The master's "check master
// status" timer (CheckMaster, 5 s) resolves session_factory; when the
// binding is not its own any more (3.3.5) it forgets its dispatcher nodes
// and runs step 2 again, which makes it a backup of the new master. A
// returning old master does the same from the start. Both timers are
// configurable (trawl distributor --check-master, --ping-master).
//
// # Split network: a lease and a fencing epoch
//
// The name server's session_factory binding is the authority on who is
// master; two mechanisms, neither in the spec, keep a master that lost it
// from placing sessions.
//
// The lease. A master's binding is confirmed by every CheckMaster resolve
// that finds it (and by its binds on election); the lease runs from the
// start of the last confirming call. A master whose lease ends (Config.Lease,
// trawl distributor --lease; by default (PingFailures-1) x PingMaster, 10 s,
// or 1.5 x CheckMaster when that is longer) steps down: it answers
// session_factory (placement and __ping) and master_dispatcher with
// middleware::unavailable and runs the election again from the resolve.
// When it reaches the name server again it finds the backup that took over
// and becomes its backup, or its own binding still there and takes it back
// under a new epoch. The default is shorter than a takeover: a backup takes
// over after PingFailures failed pings PingMaster apart, counted from its
// last good one, at least (PingFailures-1) x PingMaster after the split
// began, while the master's last confirmation came before the split. A
// master cut from the name server but not from its backups stops answering
// their __ping when its lease ends, so they take over
// (TestSplitMasterFromNameServer in distribcli runs it on processes; trace
// lease.trace).
//
// The epoch. Each election raises an epoch: the new master takes one more
// than the highest it has seen (in session_factory bindings it resolved,
// in session ids created on it, in refusals), so a backup that takes over
// from a master of epoch e binds under e+1. It is carried where the spec
// leaves room and the wire stays as the spec has it: in the
// implementation-specific object_id of session_factory and
// master_dispatcher ("cd<node_id>.<incarnation>.e<epoch>") and in the
// session ids the master allocates (allocation is not specified: see
// Sessions). A dispatcher node refuses a create or create_session whose id
// carries an epoch older than the highest it has seen with
// core::unsupported_guarantee_set "stale master epoch, newer epoch N seen,
// ..." (3.5.4.1 allows it: the server cannot create the session); the
// client gets it, fails the session and dials again through the registry.
// A master that hears that refusal learns the newer epoch and steps down
// as above (trace fence.trace). An id whose epoch bits are 0 was not made
// by a master of ours and is not fenced; epochs compare on their low 16
// bits, the bits the id has room for.
//
// What is not fenced, and why that is safe. A recreate carries the id the
// client had, with the epoch of the master that created it, so a dispatcher
// node cannot tell a stale master's recreate from a current one by it; the
// lease bounds a stale master's recreates to its lease. The content client
// keeps no epoch of its own: it resolves the master in the registry at
// each dial, so it reaches a stale master only in the instant before a
// takeover, and a client-side memory of epochs would refuse every master
// after the name server lost its bindings. And for "every document fed
// once" the fence that matters is per operation: an operation goes to the
// indexer of Partition(URI, N), whoever placed the session, and the index
// applies it only if its version (the feeder's outbox sequence number) is
// newer, so a resend through another master's session is a no-op. What a
// brief overlap of two masters (a backup cut from the master takes over;
// the old master, still holding its lease, learns of it at its next
// CheckMaster or from a refusal) costs is placement on nodes that have not
// seen the new epoch yet, and a client that keeps a session on the stale
// master until its next failure.
//
// # dispatcher_node (3.5.4)
//
// create, create_session and recreate check, in this order: the
// guarantee_set (a cht::core::guarantee_set entity, type 9, holding one
// cht::core::feeding_priority, type 7, of priority 0, or nothing; checksum
// -1479218033) and priority 0, else core::unsupported_guarantee_set; the
// collection against the collection holder (the --collection flags; none
// accepts every collection), else processing::unknown_collection; then the
// indexing dispatcher is told (coreprocessing::session_factory create,
// recreate or close, on every indexer bound under
// "esp/subsystems/indexing/dispatcher/"), and a refusal there is reported
// as core::unsupported_guarantee_set. The session goes into the session
// holder and its AOR (name "esp/subsystems/processing/session/<id>",
// object_id the id, port +390, or +391 with external_client) is returned;
// recreate of a session already held returns it. destroy_session of an
// unknown id does nothing.
//
// # Sessions and operations (the [MS-FSCF] part, not public: ours)
//
// The master's processing::session_factory has, besides __ping:
//
//	create(collection, guarantee_set, priority)         -> session AOR
//	recreate(session_id, collection, guarantee_set, priority) -> session AOR
//	close(session_id)                                   -> ()
//
// Placement: the master calls get_load on every registered dispatcher node
// at once, drops a node that does not answer from its dispatcher node
// state, adds to each load the placements it has under way to that node
// (so requests that come together spread), and forwards dispatcher_node
// create (or recreate, same id) with external_client true to the least
// loaded, ties to the lowest node_id; the chosen node's exceptions reach
// the client unchanged. A distributor's load is the sessions it holds plus
// the operations it has sent to indexers and not yet had answered. Session
// ids are the master's node_id in bits 48-62, its epoch's low 16 bits in
// bits 32-47, its incarnation's low 8 bits in bits 24-31 and a counter
// below, so ids from two masters (or two terms of one) do not meet.
//
// A session carries processing::session process(session_id, [operation])
// on the distributor's +391 port: each operation is a feed.Operation in its
// own encoding; the distributor sends it to the indexer of partition
// Partition(URI, N) (FNV-1a 64 of the URI, modulo the partition count N
// the indexers announce in their object_id), one call per partition, and
// answers with one [seq, error, rejected] per operation: every operation
// gets exactly one result. An operation for another collection than the
// session's is rejected; no indexer for its partition, or an indexer that
// fails, makes it a retryable error. A process for an unknown session
// raises processing::unknown_session. When a session is created on a
// distributor that knows no indexer yet it lists them at once, and a
// process call that comes while that list is under way waits for it (at
// most 64 such calls) instead of failing its batch.
//
// The content client (Client, a feed.Dialer) resolves the master through
// the registry at each dial, asks it for a session, and turns each result
// into the operation's callback. The feeder keeps every operation in its
// outbox until then; a failed call (the distributor died) fails the
// session: the feeder closes it, dials again after its backoff, the client
// asks the (perhaps new) master to recreate the same session id, and the
// feeder sends again what had no callback. The index applies an operation
// only if its version (the outbox sequence number) is newer, so a resend is
// harmless and every document ends in exactly one partition once.
// Partial updates (feed.UpdateFields: a URL's rank and anchor text from
// link analysis) travel the same way to the same partition; their
// versions are kept apart from the content versions (internal/index
// fields.go), so neither kind makes the other look stale.
//
// trawl run feeds through this chain by default: internal/distrib/chain
// runs a name server (bindings in memory), one distributor and one indexer
// inside its process on loopback ports the system chooses (ServerConfig
// AnyPort), so several runs on one machine never collide; trawl
// distributor and trawl indexer take ports the same way with --base-port 0
// (their references in the name server carry the ports). With
// --nameserver trawl run and trawl node feed a distributed chain instead.
//
// # Status (not in the spec)
//
// dispatcher_node also answers get_operations() -> long, the operations it
// has sent to indexers and not yet had answered (get_load is that plus its
// sessions). Take surveys a chain through the registry: the master, each
// distributor's sessions and operations in flight, each indexer's
// documents; the status page, /metrics, trawl admin chain and trawl
// distributors show it.
package distrib
