// Package multinode implements the multinode scheduler (MNS) of MS-FSCMT
// section 3.2: the role that runs a distributed crawl. It receives crawl
// collection configurations from the administration API and relays them to
// every node scheduler, queues each collection's start URIs, resolves host
// names, routes each crawl site to one node scheduler (partition by site,
// DESIGN.md section 7), tells every node scheduler about each routing
// decision, forwards crawl queue entries to the node scheduler that owns
// their site, grants crawl-IP permissions, and sums the node schedulers'
// statistics.
//
// The package has three layers, as every protocol role of trawl:
//
//   - MNS is the pure state machine, a loop.Machine. Events go in (a
//     connection opened, a message received, a connection lost, a tick of
//     the clock, a DNS result, a send queue full or drained, an
//     administrative operation) and one loop.Batch comes out (messages to
//     send, connections to close, DNS lookups to start, routes to persist,
//     log lines). It owns no goroutine, socket, file or clock.
//   - RouteStore is the routing database on disk (Pebble), so that routing
//     decisions survive a restart; Resolver (NetResolver, HostsResolver)
//     resolves host names.
//   - Server is the wiring: it opens the route store, loads it into the
//     machine, and runs the machine on a loop.Driver with a CMT listener
//     for node schedulers (by default on the base port + 1, 13001), the
//     resolver as the driver's Worker, the route store and the collection
//     log writer as its Storage, and Go methods for the administrative
//     operations that are safe to call from any goroutine (Driver.Do).
//     Attach adds an in-memory connection (cmt.Pipe), so that `trawl run`
//     uses the same code path as a distributed setup.
//
// # How the machine maps onto the contract
//
// The machine's typed methods (Connect, Receive, Disconnect, Tick,
// DNSResult, SetBusy, and the administrative operations AddCollection,
// RemoveCollection, RerouteNode, ...) each return the actions of one event
// in the machine's own vocabulary; Step calls the event methods for the
// driver's events, and Server.op runs an operation on the driver's loop.
// Both file the actions into the pending batch (contract.go, emit):
//
//   - Send and CloseConn become Batch.Out, in order.
//   - Lookup becomes a Batch.Work job (Spec: the Lookup), which the
//     driver's Worker resolves with the Resolver under DNSTimeout, at most
//     DNSWorkers at once; its Result event (the []netip.Addr and the error)
//     becomes DNSResult. The machine bounds the lookups it has asked for
//     and not had answered (65,536): past that a lookup fails at once as
//     "lookup queue full", as the old driver's bounded lookup queue did.
//   - PersistRoute, PersistState and DropRoutes become Batch.Persist
//     records, written by the driver's Storage to the routing database in
//     one synced batch before anything of the batch is sent (a routing
//     decision is durable before it is announced). AppendLog is a Persist
//     record too: the Storage hands the line to the collection log writer's
//     bounded queue without waiting; when the queue is full the line is
//     dropped and counted on the machine (MNS.LogDropped, a counter with
//     no actions, called on the driver's loop goroutine while the batch is
//     applied).
//   - LogLine becomes Batch.Logs.
//
// A connection whose send queue is full is not cut off: the driver holds
// its messages (loop.HoldConfig: up to 65,536, retried every 10 ms, closed
// after FullTimeout without progress) and steps loop.Blocked, which the
// machine takes as SetBusy(true) (entries routed to that node scheduler
// wait in the collection's queue) and loop.Unblocked when the held
// messages went out. A connection the machine closes is marked closing at
// once (what it still sends is ignored); the node scheduler is unregistered
// when the driver reports the end of the connection, and may register
// again on a new connection before that (TestMachineAcceptsINITWhileOld
// ConnectionCloses).
//
// # Collection logs
//
// The log lines node schedulers send in CMD_UM_LOG (umlogs) go to
// Data/logs/<collection, path-escaped>/{site,screened,schedule,fetch}.log
// (LogFilePath), the layout of a node scheduler's own logs. The event loop
// never touches those files: the Storage hands each line to package
// crawllog's writer, whose bounded queue drops and counts a line when the
// disk cannot keep up (a WARN at every power of two; Server.LogsDropped, and each
// collection's CollectionCounts.LogsDropped), and which flushes every
// second and when Run stops, cuts lines over 64 KiB and rotates a file at
// 64 MiB keeping 3 old copies (Server.Logs tunes it). A log file code
// other than the four of MS-FSCMT 2.2.4.8 is ignored, and a collection
// name that cannot name one directory below Data/logs is dropped, so no
// name a peer sends reaches a file outside it.
//
// # Routing
//
// A crawl site is a host name (lower case, IDNA). Its routing attribute is
// the part of the host name the decision uses: the registered domain
// (public suffix + 1, golang.org/x/net/publicsuffix) when the collection sets
// domain_clustering, the host otherwise; a host listed in a site_clusters
// group takes the attribute of the group's first member, so every member
// lands on one node scheduler. The node scheduler of a new attribute is
// chosen by rendezvous hashing of the attribute over the registered node
// schedulers whose Node element (if any) admits the host, and the decision is
// persisted before it is announced (CMD_UM_ADD_ROUTE to every node
// scheduler) and before the entry is forwarded. The host is resolved before
// the site is routed, so that the announcement carries its addresses and
// their time to live. See docs/decisions/multinode.md for the choices the
// specification leaves open.
//
// # Failures
//
// A node scheduler that leaves two keep-alives in a row unanswered is
// dropped; entries forwarded to a node scheduler are forwarded again when it
// registers again (within Config.ResendWindow); RerouteNode (an operator's
// command, `trawl multinode --reroute`) or Config.NodeTimeout moves the
// sites of a node scheduler that will not come back; Config.WaitNodes holds
// routing at start until enough node schedulers registered; Server.Allow is
// the allow-list of peer addresses. The process-level tests of a whole
// multinode crawl are in the clustertest subdirectory.
package multinode
