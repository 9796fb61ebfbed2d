// Package feed sends crawled documents to content destinations: the
// document feeding of DESIGN.md section 2 and decision 4.7.
//
// A crawler hands each document operation (add, update or remove of a URI,
// with its content, extracted text, MIME type, title, anchor text and
// metadata) to a Feeder, which stores one copy per target (an MS-FSCCFG
// feeding destination, or "default:<collection>") in a durable Outbox and
// returns. The Feeder's Run loop then, per target, claims batches from the
// outbox (URIF_FEED_HIGHPRI operations first), submits them to a Session,
// keeps at most Window batches in flight, and on each operation's callback
// deletes it from the outbox (ok, or rejected for good) or takes it back to
// send again (any other error). A failed session is closed, and a new one
// dialled after an exponential backoff; every operation it had not answered
// is sent again. Operations also stay in the outbox across restarts: after
// a crash every operation not yet acknowledged is sent again. The receiving
// side is idempotent (the index applies an operation only if its version,
// the outbox sequence number, is newer than the document's), so the index
// converges to the crawl store with no loss and no double entries.
// Suspending a target (CMD_ADM_CONF_FEEDING_SUSPEND, or paused in the
// configuration) stops its submissions while the operations keep queueing.
//
// Batches are sized by bytes and time, not by a count: a partial batch
// waits until it is full (BatchBytes at the average operation size seen,
// or BatchOps), until BatchDelay has passed, or, with no batch of the
// target in flight, until Quiet passes without a new operation. A trickle
// of operations goes at once; a steady crawl sends batches of about
// BatchDelay's worth, which an index builds and merges at a lower cost
// per document than many small ones.
// The outbox keeps, per destination, a cursor below which every queued
// operation is claimed, so that Claim seeks past the operations in flight
// and the tombstones of acknowledged ones; a Put or Release of a key
// below it moves it back. A Destination's Close lets the batches under way
// finish (at most 5 s) before it stops waiting for the index, so a session
// torn down after a failure does not throw away batches the index is
// persisting.
//
// Session is the seam for MS-FSCDFT content distributors: the content
// client of internal/distrib (what trawl run and trawl node feed through)
// implements it, and so does Destination, which applies batches to an
// in-process internal/index directly (this package's tests and
// benchmarks).
//
// Outbox key layout under its prefix P (default "feed/"), in Pebble:
//
//	P "s"                                      last sequence number, 8 bytes big endian
//	P "q" dest 0x00 rank seq                   an encoded operation; rank 0x00 high, 0x01 normal;
//	                                           seq 8 bytes big endian (so a scan is priority, then FIFO)
//	P "u" dest 0x00 collection 0x00 uri        rank and seq of the URI's latest operation (coalescing)
//
// Encoded operation (MarshalBinary); uvarint lengths precede every string
// and byte field, and the decoder checks each against the bytes left:
//
//	'F' 0x04 kind(1) priority(1) uvarint(seq)
//	destination collection uri mime title content text
//	uvarint(#anchors) anchor...  uvarint(#headers) (name value)...
//	has-last-modified(1) varint(unix nanoseconds)
//	checksum language description extraction
//	uvarint(#links) link...
//	uvarint(#duplicates) uri...  uvarint(#redirects) uri...  uvarint(#mirrors) uri...
//	rank(8, IEEE 754 binary64 big endian)
//
// kind is 1 add, 2 update, 3 remove, 4 update-fields. (Version 0x01,
// written before links, ends after extraction; version 0x02, written
// before the reported URIs, ends after the links; version 0x03, written
// before ranks, ends after the mirrors; all are still read, and none can
// carry kind 4.)
//
// # Partial updates
//
// An update-fields operation carries the link analysis of one URI (Rank
// and Anchors; its other fields are empty) and is meant for the
// destination to merge into the stored document without touching its
// content (internal/index Op.Fields has the versioning). In the outbox it
// coalesces only with update-fields operations of the same URI (its
// coalescing key is P "f" dest 0x00 collection 0x00 uri), so a rank
// update never drops a content operation waiting to go, nor the reverse.
package feed
