package nodesched

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/trawl/trawl/internal/nodesched/crawlpipe"
	"github.com/trawl/trawl/internal/store"
)

// This file is storage/uri_dir (MS-FSCCFG 2.2.4.6): "a path to store URIs
// that are extracted from a document. A file is generated for each crawled
// document." (docs/decisions/store.md).
//
// Layout, under the directory the parameter names (a relative path is
// relative to the node's data directory, the crawl store's):
//
//	<uri_dir>/<collection>/<h[0:2]>/<h[2:4]>/<h>.uris   one file per document
//	<uri_dir>/<collection>/.tmp/                          files being written
//
// where h is the hex of the first 16 bytes of the SHA-256 of the document's
// URI (safe for any URI, the same file at every fetch; 65,536 shards keep a
// million documents at about 15 per directory) and <collection> the
// collection's name, path-escaped. A file is
//
//	# document: <the document's URI>
//	<extracted URI>
//	...
//
// one URI per line, absolute and normalized, in document order without
// repeats: every link extraction found in an HTML document (before the
// include/exclude rules, fwdlinks and nofollow decide what is followed),
// the entries the crawl took from a sitemap or RSS channel, nothing for
// other documents. The '#' line makes a file a valid start_uri_files file.
//
// A file is written (to .tmp, then renamed over the old one, so a reader or
// a crash never sees half a file) once a step's store batch has committed
// (the work is a record after the store writes: records.go) with the
// document fetched, a duplicate, or not
// modified (a 304: then only where the file is missing, as its links are
// those of the stored body it was written from; a stat per unchanged page),
// and removed when the document's record is
// deleted (administrator, refresh expiry, RSS expiry), turns deleted
// (http_errors DELETE), excluded or a redirect, and the collection's whole
// directory goes with the collection. The file work runs in commit order
// off the event loop (Driver.offload: the driver's one writer goroutine
// behind a bounded queue; a file costs a few syscalls, 30 to
// 300 microseconds). A failure to write or remove is logged and counted
// (uri_files_failed): the crawl goes on.

// uriFiles is the uri_dir directory of one collection.
type uriFiles struct {
	dir    string // <uri_dir>/<collection>
	tmp    string // dir/.tmp
	counts *uriFileCounts
}

// uriFileExt is the extension of a document's URI file.
const uriFileExt = ".uris"

// openURIFiles resolves dir (relative to base) for collection coll and
// creates it with its .tmp directory.
func openURIFiles(dir, base, coll string) (*uriFiles, error) {
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(base, dir)
	}
	esc := url.PathEscape(coll)
	if strings.HasPrefix(esc, ".") {
		esc = "%2E" + esc[1:] // never ".", ".." or hidden
	}
	u := &uriFiles{dir: filepath.Join(dir, esc)}
	u.tmp = filepath.Join(u.dir, ".tmp")
	if err := os.MkdirAll(u.tmp, 0o755); err != nil {
		return nil, err
	}
	return u, nil
}

// clean removes what is in the .tmp directory: files a crash left half
// written.
func (u *uriFiles) clean() error {
	es, err := os.ReadDir(u.tmp)
	if err != nil {
		return err
	}
	for _, e := range es {
		if err := os.RemoveAll(filepath.Join(u.tmp, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

// path is the file of the document uri.
func (u *uriFiles) path(uri string) string {
	sum := sha256.Sum256([]byte(uri))
	h := hex.EncodeToString(sum[:16])
	return filepath.Join(u.dir, h[0:2], h[2:4], h+uriFileExt)
}

// uriFileContent is the content of the file of document doc.
func uriFileContent(doc string, uris []string) []byte {
	var buf bytes.Buffer
	buf.Grow(len(doc) + 13 + 64*len(uris))
	buf.WriteString("# document: ")
	buf.WriteString(oneLine(doc))
	buf.WriteByte('\n')
	for _, l := range uris {
		if l == "" || strings.ContainsAny(l, "\r\n") {
			continue // a normalized URI has neither; a line must be one URI
		}
		buf.WriteString(l)
		buf.WriteByte('\n')
	}
	return buf.Bytes()
}

func oneLine(s string) string {
	if strings.ContainsAny(s, "\r\n") {
		return strings.NewReplacer("\r", "%0D", "\n", "%0A").Replace(s)
	}
	return s
}

// writeMissing writes the file of document doc if it has none.
func (u *uriFiles) writeMissing(doc string, uris []string) (bool, error) {
	if _, err := os.Stat(u.path(doc)); err == nil {
		return false, nil
	}
	return u.write(doc, uris)
}

// write replaces the file of document doc atomically.
func (u *uriFiles) write(doc string, uris []string) (bool, error) {
	f, err := os.CreateTemp(u.tmp, "w-*")
	if errors.Is(err, fs.ErrNotExist) { // .tmp removed under us
		if err = os.MkdirAll(u.tmp, 0o755); err == nil {
			f, err = os.CreateTemp(u.tmp, "w-*")
		}
	}
	if err != nil {
		return false, err
	}
	tmp := f.Name()
	_, err = f.Write(uriFileContent(doc, uris))
	if err == nil {
		err = f.Chmod(0o644)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		p := u.path(doc)
		if err = os.Rename(tmp, p); errors.Is(err, fs.ErrNotExist) {
			if err = os.MkdirAll(filepath.Dir(p), 0o755); err == nil {
				err = os.Rename(tmp, p)
			}
		}
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err == nil, err
}

// remove removes the file of document doc, reporting whether there was
// one.
func (u *uriFiles) remove(doc string) (bool, error) {
	err := os.Remove(u.path(doc))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// uriFileCounts are the counters of a collection's URI files, kept by
// the goroutine that writes them and added to the collection's counters
// by syncURIFileCounters.
type uriFileCounts struct {
	written, removed, failed atomic.Int64
}

// openURIDir sets up the uri_dir of a collection being configured with
// settings s: the directory is made at once (an error names the parameter
// and the directory); files a crash left half written are cleared before
// the first file is written.
func (m *Machine) openURIDir(name string, s *crawlpipe.Settings) (*uriFiles, error) {
	ss := s.StorageOrDefault()
	if ss.URIDir == "" {
		return nil, nil
	}
	u, err := openURIFiles(ss.URIDir, m.st.Dir(), name)
	if err != nil {
		return nil, fmt.Errorf("nodesched: collection %s: storage/uri_dir %q: %w", name, ss.URIDir, err)
	}
	u.counts = &uriFileCounts{}
	if c := m.colls[name]; c != nil && c.files != nil {
		u.counts = c.files.counts // a reconfiguration: the same counters
	}
	m.offload(func() {
		if err := u.clean(); err != nil {
			m.log.Warn("nodesched: storage/uri_dir: clearing the temporary files", "collection", name, "dir", u.tmp, "err", err)
		}
	})
	m.log.Info("nodesched: writing the extracted URIs of every document", "collection", name, "dir", u.dir)
	return u, nil
}

// offload leaves f for the driver's file writer, after the store writes
// staged before it (records.go).
func (m *Machine) offload(f func()) { m.work = append(m.work, uriDirWork{f}) }

// uriFileStep schedules, once the step's batch b commits, what the step
// means for the document's URI file (see the top of this file). rec is the
// record as the step leaves it.
func (m *Machine) uriFileStep(c *collection, b *store.Batch, rec *store.URIRecord, o *crawlpipe.Outcome) {
	u := c.files
	if u == nil {
		return
	}
	name, uri := c.s.Name, rec.URI
	switch rec.Status {
	case store.StatusFetched, store.StatusNotModified, store.StatusDuplicate:
		if o.NotModified && o.Body == nil {
			return // no stored body to read the links from: the file stays
		}
		uris := o.Extracted
		if uris == nil {
			uris = make([]string, 0, len(o.Links))
			for _, l := range o.Links {
				uris = append(uris, l.URI)
			}
		}
		write := u.write
		if o.NotModified {
			// The links of the stored body, as when it was fetched: a
			// file is only made where there is none.
			write = u.writeMissing
		}
		b.OnCommit(func() {
			m.offload(func() {
				written, err := write(uri, uris)
				m.uriFileDone(name, u, uri, written, err, &u.counts.written)
			})
		})
	case store.StatusDeleted, store.StatusExcluded, store.StatusRedirect:
		b.OnCommit(func() { m.offload(func() { m.uriFileRemove(name, u, uri) }) })
	}
}

// uriFileGone schedules the removal of uri's file once b, which deletes
// its record, commits.
func (m *Machine) uriFileGone(c *collection, b *store.Batch, uri string) {
	if u := c.files; u != nil {
		name := c.s.Name
		b.OnCommit(func() { m.offload(func() { m.uriFileRemove(name, u, uri) }) })
	}
}

func (m *Machine) uriFileRemove(name string, u *uriFiles, uri string) {
	removed, err := u.remove(uri)
	m.uriFileDone(name, u, uri, removed, err, &u.counts.removed)
}

// uriFilesRemoved schedules the removal of the URI files of a collection
// that b removes.
func (m *Machine) uriFilesRemoved(c *collection, b *store.Batch) {
	if u := c.files; u != nil {
		name := c.s.Name
		b.OnCommit(func() {
			m.offload(func() {
				if err := os.RemoveAll(u.dir); err != nil {
					m.log.Warn("nodesched: removing the URI files of a removed collection", "collection", name, "dir", u.dir, "err", err)
				}
			})
		})
	}
}

// uriFileDone counts and logs what happened to a URI file.
func (m *Machine) uriFileDone(name string, u *uriFiles, uri string, done bool, err error, counter *atomic.Int64) {
	if err != nil {
		u.counts.failed.Add(1)
		m.log.Warn("nodesched: storage/uri_dir: a document's URI file", "collection", name, "uri", uri, "err", err)
		return
	}
	if done {
		counter.Add(1)
	}
}

// syncURIFileCounters adds what happened to the collection's URI files
// since the last call to its counters (uri_files_written,
// uri_files_removed, uri_files_failed; collection only).
func (m *Machine) syncURIFileCounters(c *collection) {
	u := c.files
	if u == nil {
		return
	}
	c.stats.add("uri_files_written", u.counts.written.Swap(0))
	c.stats.add("uri_files_removed", u.counts.removed.Swap(0))
	c.stats.add("uri_files_failed", u.counts.failed.Swap(0))
}

// fileQueue bounds the file work waiting for the driver's writer.
const fileQueue = 4096

// fileWriter is the driver's Driver.offload: one goroutine runs the
// functions in order, behind a queue of fileQueue (a full queue makes the
// event loop wait). It is started by the first function, so a node
// without storage/uri_dir has none.
type fileWriter struct {
	ch      chan func()
	pending atomic.Int64 // given and not yet run
	done    chan struct{}
}

func newFileWriter() *fileWriter {
	w := &fileWriter{ch: make(chan func(), fileQueue), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for f := range w.ch {
			f()
			w.pending.Add(-1)
		}
	}()
	return w
}

// offload queues f. The writer runs until stop, so the wait for room is
// bounded by the work ahead of f.
func (w *fileWriter) offload(f func()) {
	w.pending.Add(1)
	w.ch <- f
}

// stop runs what is queued and ends the goroutine.
func (w *fileWriter) stop() {
	close(w.ch)
	<-w.done
}
