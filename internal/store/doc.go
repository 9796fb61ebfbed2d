// Package store is trawl's crawl store on disk: one Pebble database per node
// scheduler holding the URI records, the stored documents, the checksum
// database, the routing database, the DNS cache, and the key spaces that the
// frontier keeps its queues and seen-set in.
//
// # Key layout
//
// Every key starts with one byte naming its key space. Strings inside a key
// are length-prefixed (uvarint length, then the bytes) except the last one,
// which runs to the end of the key, so that the last component (usually a
// URI) sorts bytewise and a prefix scan over the leading components lists it:
//
//	'u' lp(collection) uri                  -> URIRecord (record.go)
//	's' lp(collection) lp(site) uri         -> empty     (site index)
//	'd' lp(collection) uri                  -> document  (codec byte, uvarint raw length, body)
//	'x' lp(collection) uri                  -> the document's response header (docextra.go)
//	'c' lp(collection) md5[16]              -> owner URI (checksum database)
//	'k' lp(collection) md5[16] uri          -> empty     (every URI with that checksum)
//	'r' lp(collection) site                 -> uvarint node id (routing database)
//	'n' host                                -> DNSRecord
//	'm' name                                -> store metadata
//	'q', 'h', 'f', 'w'                      -> raw spaces owned by the frontier
//
// lp(s) is uvarint(len(s)) followed by s.
//
// # Values
//
// A URI record is a version byte (1) followed by its fields in a fixed order,
// integers as varints, strings length-prefixed, times as a presence bit in a
// leading bitmask plus a varint of Unix nanoseconds. The decoder checks
// every length against what is left of the value before allocating and
// returns an error on short, long or unknown input; it never panics.
//
// # Durability
//
// All writes go through Pebble batches; a batch is applied atomically: after
// any crash a batch is there whole or not at all, and batches survive in
// commit order (no gaps). Options.Sync chooses when a commit is durable:
//
//   - Sync true: Commit returns after the write-ahead log is fsynced. The
//     batch survives a killed process and power loss. Cost: one fsync per
//     commit (Pebble groups concurrent commits into one fsync).
//   - Sync false (the default): Commit returns once the batch's
//     write-ahead log record was written to the kernel, without fsync
//     (internal/pebblefs: the log files' fsync is a no-op and every commit
//     is a pebble.Sync commit; Pebble's own NoSync would return while the
//     record still waits in an in-process buffer, and a kill -9 would lose
//     commits already acknowledged). A killed process loses nothing that
//     was committed; power loss can lose whatever the kernel had not
//     written, always a suffix of whole commits. SyncWAL makes everything
//     committed before it durable in the same sense; a driver may call it
//     on a timer.
//
// Losing a suffix of whole commits at a power loss is safe for the crawl
// because one crawl step (URI record, document, frontier queue and
// seen-set changes) is one batch: a lost step simply did not happen, and
// the frontier serves its URI again (at-least-once).
package store
