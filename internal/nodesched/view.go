package nodesched

import (
	"strconv"
	"time"

	"github.com/trawl/trawl/internal/store"
)

// View is the crawl store as the Machine sees it: what it may read, and
// batches to build its writes in. The machine never writes to Pebble and
// never syncs: a batch it commits is staged on the view (store.Staged),
// where its later reads see it, and leaves the machine as a record of its
// driver's batch (Machine.Records, records.go), which the driver commits
// in one Pebble batch before it sends that batch's messages.
type View interface {
	URI(collection, uri string) (*store.URIRecord, bool, error)
	URIs(collection, uriPrefix string, fn func(*store.URIRecord) error) error
	Document(collection, uri string) ([]byte, bool, error)
	DocumentCount(collection string) (int64, error)
	SiteURIs(collection, site string, fn func(uri string) error) error
	DNS(host string, now time.Time) (*store.DNSRecord, bool, error)
	Route(collection, site string) (node int64, ok bool, err error)
	Routes(collection string, fn func(site string, node int64) error) error
	ChecksumOwner(collection string, cs [16]byte) (string, bool, error)
	ChecksumURIs(collection string, cs [16]byte, fn func(uri string) error) error
	ChecksumCount(collection string) (int64, error)
	Meta(name string) ([]byte, bool, error)
	GetRaw(sp store.Space, k []byte) ([]byte, bool, error)
	IterRaw(sp store.Space, prefix []byte, fn func(k, v []byte) error) error
	NewRawIter(sp store.Space, prefix []byte) (*store.RawIter, error)
	// Dir is the store's directory (storage/uri_dir paths are relative
	// to it).
	Dir() string
	// NewBatch starts a batch of writes; committing it stages it.
	NewBatch() *store.Batch
	// TakeStaged hands the staged writes over (nil: none).
	TakeStaged() *store.Batch
}

// The store's record types, as the machine's files name them.
type (
	batch     = store.Batch
	uriRecord = store.URIRecord
	dnsRecord = store.DNSRecord
)

// stagedView returns the view the machine works on: st's staged view when
// st is the crawl store itself.
func stagedView(st View) View {
	if s, ok := st.(*store.Store); ok && !s.IsStaged() {
		return s.Staged()
	}
	return st
}

// loadNodeIDs reads the node identifiers the routing database numbers
// (nodeNum).
func (m *Machine) loadNodeIDs() error {
	return m.st.IterRaw(store.SpaceMeta, []byte(nodeIDPrefix), func(k, v []byte) error {
		id, err := strconv.ParseInt(string(v), 10, 64)
		if err == nil {
			name := string(k[len(nodeIDPrefix):])
			m.nodeIDs[name], m.nodeName[id] = id, name
		}
		return nil
	})
}

// deleteCollection deletes every record of collection name in b: its key
// spaces, and its crawl-limit marks (limits.go).
func deleteCollection(b *store.Batch, name string) error {
	lp := store.AppendLP(nil, name)
	for _, sp := range []store.Space{store.SpaceURI, store.SpaceSite, store.SpaceDoc, store.SpaceChecksum, store.SpaceCsumURIs,
		store.SpaceRoute, store.SpaceQueue, store.SpaceSeen, store.SpaceFrontier, store.SpaceKnown, store.SpaceHeader} {
		if err := b.DeletePrefix(sp, lp); err != nil {
			return err
		}
	}
	return b.DeletePrefix(store.SpaceMeta, heldCollPrefix(name))
}
