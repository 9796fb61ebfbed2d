// Package clustertest holds the process-level tests of a distributed crawl
// (MS-FSCMT between real processes on loopback): one multinode scheduler,
// several node schedulers, duplicate servers and their replicas, and (for
// TestChaos) the feeding chain the node schedulers feed (name server,
// content distributors, indexers) and dmake workers for the web analyzer,
// each a `trawl` process built once per test run, crawling an in-test
// synthetic web (internal/webfarm). The tests kill processes with SIGKILL,
// sever connections through a TCP proxy and speak to each role with
// hand-built frames and Python's marshal; see the test files. The package
// has no non-test code besides this comment.
package clustertest
