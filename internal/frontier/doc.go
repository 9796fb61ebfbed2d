// Package frontier is the node scheduler's crawl frontier: per-site crawl
// queues kept on disk in the crawl store, a seen-set, and the politeness
// rules of the crawl configuration (MS-FSCCFG) and of the multinode protocol
// (MS-FSCMT §3.1).
//
// It is a pure state machine with an injected clock. The driver calls
//
//	Next(now)                   -> the next URI to fetch, or when to ask again
//	Done(fetch, result, now)    -> a fetch finished
//	Add(now, entries...)        -> new crawl queue entries (links, start URIs)
//	Actions()                   -> what the driver must do: resolve a site's IP
//	                               (SetIP), ask for a crawl-IP grant (Grant),
//	                               give one back (CMD_UM_STOP_CRAWL_IP)
//	Quarantine, Preempt, SetCrawlDelay, Refresh, Stats
//
// and Begin/Tx to put a crawl step's frontier changes (Done plus the links
// it found) in the same store batch as the driver's URI record and document.
//
// # Memory
//
// Only the first HeadSize entries of each site's priority class are in
// memory, plus a few hundred bytes of state per site that has work, is in
// flight, is blocked or holds a slot. Everything else is in the store:
//
//	queue    'q' lp(coll) lp(site) class seq(8, big-endian) -> entry (version, class, queue flags, fresh flag, ...)
//	seen     'h' lp(coll) uri                                -> varint(cycle queued) uvarint(hops) class uvarint(seq)
//	known    'w' lp(coll) lp(site) uri                       -> hops, level, last cycle, fetches, changes, last minor cycle
//	site     'f' lp(coll) 's' site                           -> counts, sequence numbers, cycle, backoff...
//	global   'f' lp(coll) 'g'                                -> cycle, cycle start
//	deferred 'f' lp(coll) 'd' lp(site) uri                   -> start URI held for a soft refresh
//	bloom    'f' lp(coll) 'b'                                -> saved bloom-only filter
//
// A site being served loads RefillSize entries at a time. An automatic
// Bloom filter (about 1.2 bytes per seen URI, grown fourfold when full)
// sits in front of the exact seen-set, so that a certainly new URI costs no
// disk read; an entry queued that way is "fresh" (Fetch.Fresh): it was
// never served, so Done need not read its known record.
//
// Class 0 holds urgent entries (QF_URGENT), classes 1..levels the
// workqueue_priority levels, class levels+1 the URIs rescheduled by adaptive
// refresh. Appended entries take increasing sequence numbers from 2^63,
// prepended ones decreasing numbers below it, so one key order is the queue
// order.
//
// # Scheduling
//
// A site with work waits for one of max_sites slots (sites with urgent work
// first, then, under pop_scheme pri, by best level, then first come). A site
// holding a slot may need its IP (RequireIP) and a crawl-IP grant
// (RequireGrant) before it is served. It is served while it has work,
// fewer than max_pending fetches in flight, and its delay has passed: the
// delay runs from the start of the previous fetch on the site and, with
// enforce_delay_per_ip, on its IP; a robots.txt Crawl-delay raises it under
// obey_robots_delay; a network failure pushes the next start back
// exponentially up to max_backoff_delay, and more than max_backoff_counter
// failures in a row stop the site for the cycle. After max_inter_docs
// fetches the site yields its slot if another site waits. After max_doc
// fetches in a cycle it stops until the next cycle. The slot is given back
// only when nothing is in flight, so max_sites bounds the sites with fetches
// outstanding.
//
// Under variable_delay (Config.Slots, slots.go) the delay is that of the
// time slot the clock is in, and a "suspend" slot serves nothing until it
// ends. Under refresh_mode adaptive (adaptive.go) a link to a URI known from
// an earlier cycle is not queued: known URIs come back through Refresh's
// rescheduling, ranked by score times the cycles since their last fetch;
// Config.OnAdaptive, when set, is told each site's rescheduling decision
// (the URIs ranked and taken, best first), for the scheduler log.
//
// # Depth and deletes
//
// Under crawlmode DEPTH a URI's depth is the minimum over every path to it:
// a shorter path to a URI already seen this cycle rewrites its queued entry
// in place (the seen-set value says where it is), or queues the URI again
// when it was already served (AddResult.Shorter). DropSite and DropURIs
// (CMD_UM_DELETE_SITE / DELETE_URIS) delete queued entries and forget the
// URIs (seen-set, known records), in the caller's batch.
//
// # Delivery
//
// An entry stays on disk until its Done commits; a fetch in flight when the
// process dies is served again after restart (at-least-once). Every other
// entry is served exactly once per cycle.
package frontier
