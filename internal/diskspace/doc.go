// Package diskspace keeps a role from filling the file system of its data
// directory: it reads the free space (statfs(2)), tells a full disk apart
// from other write errors (IsFull: ENOSPC, EDQUOT), and a Guard pauses
// what writes below a low-water mark and resumes above a high-water mark.
//
// Why a mark and not the error: Pebble (the crawl store, the checksum
// store) treats a failed write of its write-ahead log as fatal. On a full
// tmpfs, pebble v1.1.5 logs "background error: ... no space left on
// device" for its flushes and then "pebble: fatal commit error: write
// .../000007.log: no space left on device" and exits the process from a
// Set with Sync. A role must therefore stop writing before the file system
// is full, never rely on seeing ENOSPC. The low-water mark is the hard
// floor: below it, the roles write nothing they can hold back (the node
// scheduler starts no fetch, the duplicate server holds checksum writes,
// the indexer applies no batch); the margin above zero is there for what
// is already under way (fetches in flight, a batch being applied, Pebble's
// flushes and compactions). A role resumes by itself when the free space
// is back above the high-water mark, so that it does not flap at the
// threshold. docs/decisions/diskspace.md has the figures and what each
// role pauses.
package diskspace
