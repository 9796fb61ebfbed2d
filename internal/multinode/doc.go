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
//   - MNS is the pure state machine. Events go in (a connection opened,
//     a message received, a connection lost, a tick of the clock, a DNS
//     result, an administrative operation) and actions come out (messages to
//     send, connections to close, DNS lookups to start, routes to persist,
//     log lines). It owns no goroutine, socket, file or clock.
//   - RouteStore is the routing database on disk (Pebble), so that routing
//     decisions survive a restart; Resolver (NetResolver, HostsResolver)
//     resolves host names.
//   - Server is the driver: a TCP listener for node schedulers (by default on
//     the base port + 1, 13001), one reader goroutine per connection feeding
//     one event loop that owns the MNS, bounded DNS workers, the route store,
//     a writer of the collection log files, and Go methods for the
//     administrative operations that are safe to call from any goroutine.
//     Attach adds an in-memory connection (cmt.Pipe), so that `trawl run`
//     uses the same code path as a distributed setup.
//
// # Collection logs
//
// The log lines node schedulers send in CMD_UM_LOG (umlogs) go to
// Data/logs/<collection, path-escaped>/{site,screened,schedule,fetch}.log
// (LogFilePath), the layout of a node scheduler's own logs. The event loop
// never touches those files: it hands each line to package crawllog's
// writer, whose bounded queue drops and counts a line when the disk cannot
// keep up (a WARN at every power of two; Server.LogsDropped, and each
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
