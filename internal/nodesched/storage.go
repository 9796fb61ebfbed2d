package nodesched

import (
	"bytes"
	"fmt"
	"net/http"

	"github.com/trawl/trawl/internal/config"
	"github.com/trawl/trawl/internal/feed"
	"github.com/trawl/trawl/internal/fetch"
	"github.com/trawl/trawl/internal/store"
)

// This file applies what MS-FSCCFG says about keeping documents:
//
//   - diffcheck (2.2.3): without it no duplicate detection is done; every
//     document is its own (its checksum still detects changes).
//   - storage (2.2.4.6): store_dupes keeps the bodies of duplicates (by
//     default they are not kept: the owner's body is the content);
//     compress stores bodies compressed (snappy, the store's codec) except
//     those whose media type compress_exclude_mime lists (stored as they
//     are); store_http_header keeps the response's status line and header
//     with the body (store.Store.Header, shown by `trawl store get`);
//     remove_docs drops a body from the crawl store once its add or update
//     is in the feeding outbox (which holds the content until the index
//     acknowledges it), so a submitted document is kept by the index only.
//   - uri_dir: a file of the URIs extracted from each crawled document
//     (uridir.go).
//   - limits (2.2.4.18): limits.go.
//
// datastore, clusters and defrag_threshold describe FAST's own file layout
// and have no equivalent in the Pebble store (docs/decisions/store.md).
type storageSettings struct {
	diffCheck       bool
	storeDupes      bool
	compress        bool
	compressExclude []string // media type patterns (fetch.TypeAllowed syntax)
	storeHeader     bool
	removeDocs      bool
	// uriDir is uri_dir as configured ("" when none); the machine's
	// files for it are the collection's (collection.files, uridir.go).
	uriDir string
}

// compileStorage compiles the storage options into s.
func compileStorage(s *Settings, eff *config.Effective) error {
	st := eff.Storage()
	ss := &storageSettings{diffCheck: eff.Diffcheck(), storeDupes: st.StoreDupes, compress: st.Compress,
		storeHeader: st.StoreHTTPHeader, removeDocs: st.RemoveDocs, uriDir: uriDirValue(st.URIDir)}
	for _, m := range st.CompressExcludeMIME {
		if m != "" && m != "none" { // the table's default "none": no type
			ss.compressExclude = append(ss.compressExclude, m)
		}
	}
	s.Storage = ss
	return nil
}

// collectionLimits compiles the limits section of the collection and of
// its subcollections (whose values the collection's mode does not use, but
// which must be valid as well); the error names the collection as Compile's
// do.
func collectionLimits(s *Settings) (limitSettings, error) {
	ls, err := compileLimits(s.Eff)
	if err != nil {
		return ls, fmt.Errorf("nodesched: collection %s: %w", s.Name, err)
	}
	for _, sub := range s.Subs {
		if _, err := compileLimits(sub.Eff); err != nil {
			return ls, fmt.Errorf("nodesched: collection %s: %w (subcollection %s)", s.Name, err, sub.Sub)
		}
	}
	return ls, nil
}

// storage returns the storage settings of s (the spec's defaults for
// settings made without Compile).
func (s *Settings) storage() *storageSettings {
	if s.Storage != nil {
		return s.Storage
	}
	return &storageSettings{diffCheck: true, compress: true, storeHeader: true}
}

// codecFor is the codec of a document of media type ct.
func (ss *storageSettings) codecFor(ct string) (store.Codec, bool) {
	if !ss.compress {
		return store.CodecNone, true
	}
	if len(ss.compressExclude) > 0 && ct != "" && fetch.TypeAllowed(ss.compressExclude, ct) {
		return store.CodecNone, true
	}
	return 0, false // the store's codec
}

// putDocument stores the body of a step's document (with its response
// header under store_http_header), or drops it for a duplicate without
// store_dupes.
func (m *Machine) putDocument(c *collection, b *store.Batch, rec *store.URIRecord, o *Outcome) error {
	ss, name := c.s.storage(), c.s.Name
	if rec.Status == store.StatusDuplicate && !ss.storeDupes {
		c.count("dupes_not_stored", 1)
		return b.DeleteDocument(name, rec.URI)
	}
	c.count("stored", 1)
	var err error
	if codec, ok := ss.codecFor(rec.ContentType); ok {
		err = b.PutDocumentCodec(name, rec.URI, o.Body, codec)
	} else {
		err = b.PutDocument(name, rec.URI, o.Body)
	}
	if err != nil {
		return err
	}
	if ss.storeHeader && o.Header != nil {
		return b.PutHeader(name, rec.URI, headerBlock(o.Proto, o.Status, o.Header))
	}
	return b.DeleteHeader(name, rec.URI)
}

// headerBlock renders a response's status line and header as received
// (canonical names, sorted), capped at store.MaxHeaderSize.
func headerBlock(proto string, status int, h http.Header) []byte {
	if proto == "" {
		proto = "HTTP/1.1"
	}
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "%s %d %s\r\n", proto, status, http.StatusText(status))
	_ = h.Write(&buf)
	if buf.Len() > store.MaxHeaderSize-2 {
		buf.Truncate(store.MaxHeaderSize - 2)
	}
	buf.WriteString("\r\n")
	return buf.Bytes()
}

// dropDuplicateBody removes the stored body of a document PPDUP_ADD_OK
// found to be a duplicate, unless store_dupes keeps it.
func (m *Machine) dropDuplicateBody(c *collection, b *store.Batch, rec *store.URIRecord) error {
	if rec.Status != store.StatusDuplicate || c.s.storage().storeDupes {
		return nil
	}
	return b.DeleteDocument(c.s.Name, rec.URI)
}

// removeFedDocument is remove_docs: once a step has put its document's add
// or update in the feeding outbox (m.stepFeed), or the document is
// unchanged since it was fed, its body leaves the crawl store in the same
// batch.
func (m *Machine) removeFedDocument(c *collection, b *store.Batch, rec *store.URIRecord) error {
	if !c.s.storage().removeDocs || !m.cfg.Feeds {
		return nil
	}
	if rec.Status != store.StatusFetched && rec.Status != store.StatusNotModified {
		return nil
	}
	submitted := false
	for _, op := range m.stepFeed {
		if op.URI == rec.URI && (op.Kind == feed.Add || op.Kind == feed.Update) {
			submitted = true
		}
	}
	if !submitted {
		fed, sum, err := m.mark(c.s.Name, rec.URI)
		if err != nil {
			return err
		}
		cs := checksumOf(rec)
		submitted = fed && cs != nil && bytes.Equal(sum, cs)
	}
	if !submitted {
		return nil
	}
	c.count("docs_removed_after_feeding", 1)
	return b.DeleteDocument(c.s.Name, rec.URI)
}
