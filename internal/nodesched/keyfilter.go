package nodesched

import (
	"github.com/trawl/trawl/internal/keyfilter"
	"github.com/trawl/trawl/internal/store"
)

// Feeding reads, for every document it feeds, records that a first crawl
// has for almost none of them: the document's feeding mark, its lists of
// duplicates and redirects, and where its URI is listed (feeding.go,
// reported.go). Each is a Pebble point read of an absent key, together
// about 5 % of the main job's CPU. A collection's keys is a Bloom filter
// (internal/keyfilter) of the keys of those four families it has: a key it
// does not hold is certainly absent and is not read.
//
// It is a cache of the store, so it must never miss a key that exists:
// it is loaded by scanning the four prefixes the first time it is asked,
// and every write of such a key (markKey in feedPresent, listKey and
// listedKey in flushLists) adds it first. Deletions leave their keys in
// (a false positive costs only the read). When it holds more keys than it
// was sized for, the next crawl step drops it, before it writes anything,
// and it is loaded again at twice the size of what the store has then.

// Key families of a collection's keys.
const (
	famMark      byte = 'i'
	famDupList   byte = listDuplicates
	famRedirList byte = listRedirects
	famListed    byte = 'e'
)

// keyFamilies are the prefixes a keyFilter covers.
var keyFamilies = []struct {
	fam    byte
	prefix string
}{{famMark, feedMarkPrefix}, {famDupList, feedDupListPrefix}, {famRedirList, feedRedirListPrefix}, {famListed, feedListedPrefix}}

// mayExist reports whether the key of fam for uri (a URI or a document)
// in collection c may exist. On a store error it says yes: the read then
// reports the error.
func (m *Machine) mayExist(c *collection, fam byte, uri string) bool {
	f, err := m.keyFilter(c)
	return err != nil || f.Has(fam, uri)
}

// keyAdded tells c's filter, if loaded, that the key of fam for uri is
// written.
func (c *collection) keyAdded(fam byte, uri string) {
	if c.keys != nil {
		c.keys.Add(fam, uri)
	}
}

// keysCheck drops c's filter when it is over its size; it is called when
// every write the filter was told about is in the store (or its stage).
func (c *collection) keysCheck() {
	if c.keys != nil && c.keys.Full() {
		c.keys = nil
	}
}

// keyFilter returns c's filter, loading it from the store if need be: one
// pass counts the keys (to size the filter), a second adds them, neither
// keeps a copy of them.
func (m *Machine) keyFilter(c *collection) (*keyfilter.Filter, error) {
	if c.keys != nil {
		return c.keys, nil
	}
	f, err := keyfilter.Load(keyfilter.MinKeys, func(visit func(byte, []byte)) error {
		for _, kf := range keyFamilies {
			p := store.AppendLP([]byte(kf.prefix), c.s.Name)
			err := m.st.IterRaw(store.SpaceMeta, p, func(k, _ []byte) error {
				visit(kf.fam, k[len(p):])
				return nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	c.keys = f
	return f, nil
}
