// Package nodesched is the node scheduler (NS) of MS-FSCMT section 3.1: the
// process that actually crawls. It keeps the collections the multinode
// scheduler configures, their frontiers (internal/frontier) and crawl store
// (internal/store), asks the multinode scheduler for DNS answers, routes and
// crawl-IP grants, sends links of other sites to it, registers checksums with
// the duplicate servers, and fetches.
//
// Three layers, as every protocol role of trawl:
//
//   - Machine is the state machine: messages (Handle), timer ticks (Tick)
//     and finished crawl steps (Complete) go in; messages to send (Outputs),
//     fetches to start (Next) and resolved host names (Resolved) come out.
//     It reads no clock and starts no goroutine; its only I/O is the crawl
//     store, and one crawl step (URI record, compressed document, frontier
//     Done and the new queue entries) is one store batch, so a kill -9 loses
//     at most the fetches in flight, which are served again (at-least-once).
//   - Pipeline is what a fetch worker runs for one Job: robots.txt through the
//     per-collection cache, politeness pacing per site and IP (robots.txt
//     requests included), the fetch, extraction and link screening.
//   - Driver runs a Machine on one event loop with a reader per connection
//     (multinode scheduler, duplicate servers: TCP for `trawl node`, cmt.Pipe
//     in one process), a bounded pool of workers, reconnection with backoff,
//     group commit (SyncWAL every second and at the end) and a dialer that
//     resolves names through the multinode scheduler only.
//
// Collections arrive as CMD_ADM_CONF_ADD (the PKT_DSPEC dictionary is turned
// back into MS-FSCCFG XML and parsed by internal/config, CollectionFromWire)
// or, in process, as parsed *config.Collection values (Config.Collections,
// Driver.AddCollection, Machine.AddCollection).
//
// Broken links lose nothing the driver can repeat (docs/decisions/links.md):
// URIs sent to the multinode scheduler are sent
// again on the next link (Config.ResendWindow), checksum operations a
// duplicate server has not answered go again (FailoverDialer moves to the
// duplicate server's replica when it is gone), unanswered DNS and crawl-IP
// requests are asked again, and a peer that leaves two keep-alives in a row
// unanswered is dropped and dialled again.
package nodesched
