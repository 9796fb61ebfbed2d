// Package crawllog writes the per-collection crawl logs that the log section
// of a crawl configuration turns on (MS-FSCCFG 2.2.4.5): fetch, postprocess,
// header, screened, scheduler, dsfeed and site.
//
// A collection's logs live in one directory per collection under a root
// (the node scheduler's data directory/logs):
//
//	<root>/<collection, path-escaped>/fetch.log
//	                                  postprocess.log
//	                                  header.log
//	                                  screened.log
//	                                  schedule.log
//	                                  dsfeed.log
//	                                  site.log
//
// which is the layout the multinode scheduler uses for the logs node
// schedulers send it in CMD_UM_LOG (MS-FSCMT 2.2.4.8: site, screened,
// schedule and fetch), so an operator finds every log under the same names
// on every machine.
//
// Every line starts with the time of its event (UTC, RFC 3339 with
// milliseconds) unless it is an XML element, which carries the time as an
// attribute; a header log entry spans several lines (the response header,
// indented). Logs.Log never blocks: entries go into a bounded queue that
// Run drains into buffered files; an entry that finds the queue full is
// dropped and counted (Dropped). Run flushes every FlushEvery and when it
// stops. A file that would grow past MaxBytes is rotated (x.log -> x.log.1
// -> ... -> x.log.Keep, the oldest removed), so a collection's logs never
// take more than (Keep+1)*MaxBytes per kind.
package crawllog
