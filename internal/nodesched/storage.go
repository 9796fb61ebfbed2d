package nodesched

import (
	"bytes"
	"fmt"
	"net/http"

	"github.com/trawl/trawl/internal/feed"
	"github.com/trawl/trawl/internal/nodesched/crawlpipe"
	"github.com/trawl/trawl/internal/store"
)

// collectionLimits compiles the limits section of the collection and of
// its subcollections (whose values the collection's mode does not use, but
// which must be valid as well); the error names the collection as Compile's
// do.
func collectionLimits(s *crawlpipe.Settings) (limitSettings, error) {
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

// putDocument stores the body of a step's document (with its response
// header under store_http_header), or drops it for a duplicate without
// store_dupes.
func (m *Machine) putDocument(c *collection, b *store.Batch, rec *store.URIRecord, o *crawlpipe.Outcome) error {
	ss, name := c.s.StorageOrDefault(), c.s.Name
	if rec.Status == store.StatusDuplicate && !ss.StoreDupes {
		c.count("dupes_not_stored", 1)
		return b.DeleteDocument(name, rec.URI)
	}
	c.count("stored", 1)
	var err error
	if codec, ok := ss.CodecFor(rec.ContentType); ok {
		err = b.PutDocumentCodec(name, rec.URI, o.Body, codec)
	} else {
		err = b.PutDocument(name, rec.URI, o.Body)
	}
	if err != nil {
		return err
	}
	if ss.StoreHeader && o.Header != nil {
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
	if rec.Status != store.StatusDuplicate || c.s.StorageOrDefault().StoreDupes {
		return nil
	}
	return b.DeleteDocument(c.s.Name, rec.URI)
}

// removeFedDocument is remove_docs: once a step has put its document's add
// or update in the feeding outbox (m.stepFeed), or the document is
// unchanged since it was fed, its body leaves the crawl store in the same
// batch.
func (m *Machine) removeFedDocument(c *collection, b *store.Batch, rec *store.URIRecord) error {
	if !c.s.StorageOrDefault().RemoveDocs || !m.cfg.Feeds {
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
