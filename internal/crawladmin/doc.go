// Package crawladmin is the MS-FSCADM backend of a crawler process: an
// implementation of admin.Backend over an Engine, the part each crawl role
// provides (internal/multinode/mnsadmin for the multinode scheduler,
// internal/nodesched/nsadmin for a node scheduler; trawl run composes the
// two). The Backend holds what no role knows: the statistics model
// (stats.Tracker, fed once a second by Run from the engine's counters),
// the configuration XML of each collection as it was given, the feeding
// and refresh-only modes the API reports, the recent errors and rates of
// the status page, and the collections saved across restarts. It never
// asks which role it plays: every difference between the roles is a
// method of the Engine. HTTP mounts the Backend on a process's HTTP
// interface (the XML-RPC API, the status page, the metrics).
//
// The tests build each role's Backend in one process over a real crawl (a
// synthetic web, a multinode scheduler and a node scheduler joined by an
// in-memory MS-FSCMT connection, Pebble stores in a temporary directory)
// and call every MS-FSCADM method over XML-RPC.
//
// Decisions where MS-FSCADM is silent:
//
//   - Errors: an unknown collection wraps admin.ErrNoCollection and a
//     collection in the wrong state (being deleted, already suspended, not
//     suspended) is admin.StateError (matching admin.ErrState); both are
//     faults. What the spec calls an in-band failure (a bad URI, a
//     subcollection that does not exist, feeding already in the asked
//     state, a site not routed yet) is admin.Refuse. The XML-RPC server
//     maps them; no error is told apart by its text.
//   - A collection being deleted refuses every operation but the getters,
//     and CollectionAdd of its name is refused until the deletion is done.
//   - Statistics are read from the engine's cumulative counters once a
//     second (Run) and on every statistics call; the deltas are folded
//     into the refresh cycles once a minute (MS-FSCADM 2.2.4.4 says a
//     delta holds the last one or two minutes) and on every statistics
//     call, after the collections' Status, Feeding, CrawlMode and
//     FeedingDestinations are set in them. CrawlEnded is set when a
//     collection runs out of work (nothing queued or in flight, something
//     processed). LastUri is the most recent request, by collection and by
//     site: a node scheduler's Observe hook reports it, a multinode
//     scheduler reads it from its node schedulers' CMD_UM_STAT.
//   - The feeding and refresh-only modes are read once per collection from
//     an engine that keeps them across restarts (a node scheduler's crawl
//     store); afterwards the Backend keeps what it was told, so that a
//     message still on its way cannot be overwritten by the state before
//     it. Resuming feeding to every destination resumes any suspended one.
//   - CollectionGetConfigurationXML returns the configuration as it was
//     given (at start or by CollectionAdd); for a collection the process
//     got from elsewhere (a node scheduler's, from its multinode
//     scheduler) the engine writes the configuration it crawls with.
//   - The methods of admin.Extensions (quarantine with requeue, a
//     collection's state, rerouting) go to an Engine that also implements
//     ExtEngine; any other Engine refuses them in band.
//   - SiteManagerNum is 1: a node scheduler is one site manager.
//   - ConfigurationChanged rereads the --config files and adds or updates
//     their collections; a process that takes its collections from
//     elsewhere (a node scheduler's come from its multinode scheduler,
//     Options.ConfigFrom) has nothing to reread and answers with a fault
//     that says where to call instead. ReRegister does nothing (MS-FSCX,
//     the configuration service, is not public).
//   - The collections added over the API are saved (Options.Store, see
//     internal/collstore) after the engine took them; a save that fails is
//     a fault saying the collection runs but will not survive a restart.
package crawladmin
