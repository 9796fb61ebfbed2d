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
//     fetches to start (Next), resolved host names (Resolved) and records
//     to persist (Records) come out. It reads no clock, starts no
//     goroutine and writes nothing (below, "The machine and the store").
//   - crawlpipe.Pipeline (the sub-package crawlpipe) is what a fetch worker
//     runs for one Job: robots.txt through the per-collection cache,
//     politeness pacing per site and IP (robots.txt requests included), the
//     fetch, extraction, checksums and link screening. crawlpipe also
//     compiles a collection's Settings. Its package comment states the
//     interface both ways: Compile, Pipeline.Process(Job) -> Outcome and
//     Screen in; nothing out but what a Job carries (internal/lint keeps
//     crawlpipe from importing this package and the machine files from
//     using the Pipeline).
//   - Driver runs a Machine on the shared driver (loop.Driver) through
//     runner, the loop.Machine that holds the machine and what the old
//     event loop kept beside it: links to the multinode scheduler and the
//     duplicate servers (TCP for `trawl node`, cmt.Pipe in one process)
//     dialled and redialled with backoff (loop.Redial), a bounded pool of
//     fetch workers (loop Work jobs), group commit (SyncWAL every second
//     and at the end) and a dialer that resolves names through the
//     multinode scheduler only.
//
// # Where things are
//
//   - The per-URI pipeline: the sub-package crawlpipe (fetch, robots.txt,
//     pacing, access, sitemaps and RSS, use_javascript, extraction,
//     screening, checksums, the compiled collection Settings).
//   - The protocol machine: machine.go, machine_links.go, machine_ops.go,
//     step.go (committing an Outcome), links.go, reliable.go, dsops.go,
//     preempt.go, view.go, records.go; what it keeps of a step per option:
//     access.go, extras.go, options.go, storage.go, reported.go,
//     uridir.go, limits.go, crawllog.go, stats_persist.go, dnsstats.go;
//     wireconfig.go (CMD_ADM_CONF_ADD to a config.Collection).
//   - The driver: driver.go, runner.go, screener.go (screening off the
//     loop), warc.go (WARC writers), diskspace_*.go.
//   - The feeding side: feeding.go, feeding_anchors.go.
//   - The admin backend: admin.go (what the machine answers) and the
//     sub-package nsadmin (MS-FSCADM on top of it).
//
// # On the shared driver
//
// runner (runner.go) maps the machine onto the contract:
//
//   - Connected, Received and Closed of a link (tagged with the peer's
//     name, "multinode" or "dupserver N") become Machine.Connected and
//     Machine.Handle; on a new link CMD_UM_INIT (and a duplicate server's
//     configurations) go first, then the backlog kept while the link was
//     down, then the URIs sent on the previous links within the resend
//     window (reliable.go), all as Batch.Out.
//   - A fetch is a Work job: Machine.Next's Job is the Spec, the Worker runs
//     crawlpipe.Pipeline.Process, and the Result event's Outcome goes to
//     Machine.Complete (Config.Observe sees it first). At most
//     Config.Workers are in flight, so the driver's job queue stays empty.
//   - Ready drains the machine once per batch: Tick, the fetches it has
//     ready, Outputs (Batch.Out, or the backlog of a link that is down),
//     CrawlLog (CMD_UM_LOG to the multinode scheduler as a Droppable
//     envelope, the rest as records the storage queues for the log files),
//     DeadPeers (closes), Resolved (the fetchers waiting for an address),
//     and every second a syncWAL record (the group commit, applied by the
//     storage before the batch's messages go out). Wake is the machine's
//     next timer.
//   - The machine's records (Machine.Records) go first in Batch.Persist.
//     A crawl step the machine cannot stage becomes a fatalErr record; the
//     storage returns its error, or that of a commit that fails, and the
//     driver stops, as the old loop did.
//   - A slow peer is held for (loop.HoldConfig: up to Config.Backlog
//     messages, 10 minutes without progress) where the old loop blocked on
//     a full send queue; a message queued on a link that died before the
//     driver reported it is lost, as one in the dead link's queue always
//     was (the resend window, the duplicate servers' pending operations and
//     the machine's askAgain send again what matters).
//   - The administration (Driver.Exec, AddCollection) and the fetchers'
//     name lookups run on the loop with loop.Driver.Do; the counters the
//     administration reads (Idle, Stats, SiteStats) are published when a
//     batch was applied (runner.Advance).
//
// # The machine and the store
//
// The contract: the machine may read the crawl store through View
// (view.go); it never writes to Pebble and never syncs. View is the
// store's staged view (store.Store.Staged): a batch the machine commits is
// staged, one indexed Pebble batch that the machine's later reads go
// through, so a step sees the steps before it. Machine.Records hands over,
// in order: the feeding configuration records (feedConf, feedState) for
// the Feeding chain, which the driver runs; then storeWrites, everything
// staged since the last call with the content operations of those
// commits; then the storage/uri_dir file work (uriDirWork) for the
// driver's file writer. runner.Ready puts them first in Batch.Persist and
// the storage (runner.apply) commits storeWrites as one Pebble batch, the
// content operations put in the feeding outboxes within it
// (feed.Outbox.PutWith), before the batch's messages are sent and its
// fetches started: a kill -9 loses at most what no message announced
// (the fetches in flight, served again: at-least-once). A commit that
// fails stops the driver. The fetch workers and the feeders read the
// store itself, which holds what was committed. The machine learns the
// feeding chain's counts from the driver (SetFeedResults).
//
// Why the machine reads the store through View rather than being handed
// read results as events (the decision, against a "read result" event in
// the loop contract): the crawl state it consults per event (URI records,
// routes, checksum owners, the frontier's queues, feeding marks) is far
// larger than memory and is read many times per crawl step; a read as an
// event would make every step a chain of round trips through the driver
// for no gain in what the machine may do. The view keeps the machine
// deterministic and free of I/O from its own point of view because of
// three rules, which hold today:
//
//   - The view is the driver's, passed in once (MachineConfig.Store,
//     wrapped by stagedView); the machine opens no store, never writes to
//     Pebble and never syncs. Its writes are staged on the view and leave
//     as records.
//   - Every key the machine reads is written only by the machine: its own
//     staged batches, committed by the driver in order (runner.apply)
//     before any later event, so the view's contents are a function of the
//     store it started on and of the events so far. The writers beside it
//     stay out of its key spaces: the Feeding chain writes the outboxes
//     (feed.Outbox keys under outboxPrefix, which the machine never reads),
//     the fetch workers and the pipeline only read (crawlpipe, Job.Store).
//   - Nothing the machine reads depends on when the driver committed: a
//     staged write is visible to the machine's next read at once, whether
//     or not Pebble has it yet.
//
// So a trace runs the machine on a fresh store of its own (a temporary
// directory here; store.Options.FS takes an in-memory vfs) and replays the
// same batches every time; a driver-side writer that starts writing a key
// the machine reads breaks the second rule and must instead send the
// machine an event.
//
// What is not on the contract yet: Machine keeps its own shape
// (Handle/Tick/Complete in, Outputs/Next/CrawlLog/DeadPeers/Resolved/
// Records drained) with runner as the adapter, and logs through its own
// slog.Logger rather than Batch.Logs.
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
