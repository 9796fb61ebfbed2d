package nodesched

import (
	"encoding/binary"
	"errors"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/store"
)

func anchorPrefix(coll string) []byte {
	return store.AppendLP([]byte(feedAnchorPrefix), coll)
}

func anchorKey(coll, uri string) []byte { return append(anchorPrefix(coll), uri...) }

func refeedKey(coll string) []byte { return store.AppendLP([]byte(feedRefeedPrefix), coll) }

// encodeAnchors encodes a list of anchor texts: a count, then each text
// with its length (uvarints).
func encodeAnchors(as []string) []byte {
	b := binary.AppendUvarint(nil, uint64(len(as)))
	for _, a := range as {
		b = binary.AppendUvarint(b, uint64(len(a)))
		b = append(b, a...)
	}
	return b
}

// decodeAnchors decodes encodeAnchors' output; what does not decode (at
// most maxAnchors texts of at most maxAnchorBytes) is an error.
func decodeAnchors(b []byte) ([]string, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > maxAnchors {
		return nil, errors.New("nodesched: bad anchor list")
	}
	b = b[k:]
	out := make([]string, 0, n)
	for range n {
		l, k := binary.Uvarint(b)
		if k <= 0 || l > maxAnchorBytes || l > uint64(len(b)-k) {
			return nil, errors.New("nodesched: bad anchor list")
		}
		out = append(out, string(b[k:k+int(l)]))
		b = b[k+int(l):]
	}
	if len(b) != 0 {
		return nil, errors.New("nodesched: bad anchor list")
	}
	return out, nil
}

// cleanAnchor returns the anchor text to keep: at most maxAnchorBytes,
// cut on a rune boundary, valid UTF-8, spaces trimmed.
func cleanAnchor(a string) string {
	a = strings.TrimSpace(a)
	if len(a) > maxAnchorBytes {
		cut := maxAnchorBytes
		for cut > 0 && !utf8.RuneStart(a[cut]) {
			cut--
		}
		a = strings.TrimSpace(a[:cut])
	}
	return strings.ToValidUTF8(a, "")
}

// anchors returns the anchor texts recorded for uri (nil when none, or
// when the record does not decode: anchors only help ranking).
func (m *Machine) anchors(coll, uri string) []string {
	v, ok, err := m.st.GetRaw(store.SpaceMeta, anchorKey(coll, uri))
	if err != nil || !ok {
		return nil
	}
	as, err := decodeAnchors(v)
	if err != nil {
		m.log.Warn("nodesched: anchor record", "collection", coll, "uri", uri, "err", err)
		return nil
	}
	return as
}

// recordAnchors puts in b the anchor texts of links (found by one crawl
// step) under their targets: each target keeps at most maxAnchors
// distinct texts, the oldest dropped first. Links to sites routed to
// another node scheduler are left out (their documents are fed there).
func (m *Machine) recordAnchors(c *collection, b *store.Batch, links []Link) error {
	for _, l := range links {
		a := cleanAnchor(l.Anchor)
		if a == "" {
			continue
		}
		if own, known := m.route(c.s.Name, l.Site); known && !own {
			continue
		}
		as := m.anchors(c.s.Name, l.URI)
		if slices.Contains(as, a) {
			continue
		}
		as = append(as, a)
		if len(as) > maxAnchors {
			as = as[len(as)-maxAnchors:]
		}
		if err := b.SetRaw(store.SpaceMeta, anchorKey(c.s.Name, l.URI), encodeAnchors(as)); err != nil {
			return err
		}
	}
	return nil
}

// refeedCycle returns the refresh cycle of c that resubmits every document
// (0: none).
func (m *Machine) refeedCycle(c *collection) int64 {
	if !c.refeedLoaded {
		v, ok, err := m.st.GetRaw(store.SpaceMeta, refeedKey(c.s.Name))
		if err != nil {
			m.log.Warn("nodesched: reading the refeed cycle", "collection", c.s.Name, "err", err)
			return 0
		}
		c.refeed, c.refeedLoaded = 0, true
		if ok {
			if n, k := binary.Varint(v); k > 0 {
				c.refeed = n
			}
		}
	}
	return c.refeed
}

// refeedRefresh records, after a CMD_ADM_CONF_REFRESH that refreshes the
// collection or a subcollection (an administrator's CollectionRefetch),
// that the new refresh cycle resubmits every document it fetches.
func (m *Machine) refeedRefresh(c *collection, flags cmt.RefreshFlags) error {
	if flags&(cmt.RefreshCollection|cmt.RefreshSubCollection) == 0 {
		return nil
	}
	cycle := c.front.Cycle()
	b := m.st.NewBatch()
	if err := b.SetRaw(store.SpaceMeta, refeedKey(c.s.Name), binary.AppendVarint(nil, cycle)); err != nil {
		b.Discard()
		return err
	}
	if err := b.Commit(); err != nil {
		return err
	}
	c.refeed, c.refeedLoaded = cycle, true
	return nil
}
