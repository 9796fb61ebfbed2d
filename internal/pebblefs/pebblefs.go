// Package pebblefs gives trawl's Pebble databases the durability a crawl
// needs against a killed process at the price of a write(2), not an
// fsync.
//
// Pebble offers two write options, and neither is "survives kill -9": a
// commit with pebble.NoSync returns while its write-ahead log record is
// still in Pebble's own buffer (the log writer's flush goroutine writes
// it to the file some time later), so a process killed with SIGKILL loses
// the last commits although they were acknowledged; a commit with
// pebble.Sync returns after the record is written to the file and the
// file is fsynced, which survives a machine crash and costs a disk flush
// per commit (group-committed). RocksDB's default (write(2) at commit, no
// fsync) sits between the two.
//
// ProcessDurable wraps a vfs.FS so that the write-ahead log files
// ("NNNNNN.log") ignore Sync and SyncData: a pebble.Sync commit then
// returns once its record was written to the operating system, which
// keeps it across the death of the process (not across a power loss or a
// kernel crash). Every other file (tables, MANIFEST, OPTIONS, directories)
// keeps its real fsync: those are written at flushes and compactions, off
// the commit path. A store that must survive a machine crash uses the
// real file system and pebble.Sync (trawl's --sync options).
package pebblefs

import (
	"errors"
	"os"
	"strings"
	"sync"

	"github.com/cockroachdb/pebble/vfs"
)

// ProcessDurable returns fs with fsync of the write-ahead log files
// turned into a no-op (see the package comment). Commit with pebble.Sync;
// FS.SyncWAL fsyncs the log files for a commit that must survive a power
// loss too.
func ProcessDurable(fs vfs.FS) *FS { return &FS{FS: fs, open: map[*walFile]struct{}{}} }

// FS is a vfs.FS whose write-ahead log files ignore fsync.
type FS struct {
	vfs.FS
	mu   sync.Mutex
	open map[*walFile]struct{}
}

func isWAL(name string) bool { return strings.HasSuffix(name, ".log") }

func (fs *FS) wrap(name string, f vfs.File, err error) (vfs.File, error) {
	if err != nil || !isWAL(name) {
		return f, err
	}
	w := &walFile{File: f, fs: fs}
	fs.mu.Lock()
	fs.open[w] = struct{}{}
	fs.mu.Unlock()
	return w, nil
}

func (fs *FS) Create(name string) (vfs.File, error) {
	f, err := fs.FS.Create(name)
	return fs.wrap(name, f, err)
}

func (fs *FS) ReuseForWrite(oldname, newname string) (vfs.File, error) {
	f, err := fs.FS.ReuseForWrite(oldname, newname)
	return fs.wrap(newname, f, err)
}

func (fs *FS) OpenReadWrite(name string, opts ...vfs.OpenOption) (vfs.File, error) {
	f, err := fs.FS.OpenReadWrite(name, opts...)
	return fs.wrap(name, f, err)
}

// SyncWAL fsyncs every open write-ahead log file: after a pebble.Sync
// commit (whose record is in the file already) it makes that commit
// survive a power loss.
func (fs *FS) SyncWAL() error {
	fs.mu.Lock()
	files := make([]*walFile, 0, len(fs.open))
	for f := range fs.open {
		files = append(files, f)
	}
	fs.mu.Unlock()
	for _, f := range files {
		if err := f.File.Sync(); err != nil && !errors.Is(err, os.ErrClosed) {
			return err
		}
	}
	return nil
}

// walFile is a write-ahead log file whose data reaches the operating
// system at every Write (Pebble's log writer writes before it syncs) and
// whose syncs do nothing.
type walFile struct {
	vfs.File
	fs *FS
}

func (*walFile) Sync() error                { return nil }
func (*walFile) SyncData() error            { return nil }
func (*walFile) SyncTo(int64) (bool, error) { return false, nil }

// Close fsyncs the file for real first: a log Pebble is done with (at a
// memtable rotation, rare) is durable, so SyncWAL only needs the open
// ones.
func (f *walFile) Close() error {
	f.fs.mu.Lock()
	delete(f.fs.open, f)
	f.fs.mu.Unlock()
	serr := f.File.Sync()
	if err := f.File.Close(); err != nil {
		return err
	}
	return serr
}
