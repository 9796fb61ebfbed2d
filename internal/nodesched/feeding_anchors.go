package nodesched

import (
	"cmp"
	"encoding/binary"
	"errors"
	"hash/maphash"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/nodesched/crawlpipe"
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

// Anchor texts are recorded without reading anything: each (target, text)
// pair is its own key (pairKey), written blind by the crawl step that found
// the link, its value the step's time and the link's position (uvarints),
// so a text seen again moves up. A read-modify-write of each target's list
// (feed/a/, one key per target) cost a point read per link, about a tenth
// of the main job's CPU. The pairs of a target are read when it is fed:
// the newest maxAnchors texts go with its operation and the older pairs are
// deleted in the same batch (a target never fed keeps a pair for each
// distinct text linking to it). Lists written before this layout are read too
// (collection.oldAnchors says whether any exist) and rewritten as pairs
// when their target is fed.

func pairCollPrefix(coll string) []byte { return store.AppendLP([]byte(feedPairPrefix), coll) }

func pairPrefix(coll, uri string) []byte { return store.AppendLP(pairCollPrefix(coll), uri) }

// pairKey is the key of a pair: its target's pairPrefix, then the text.
func pairKey(prefix []byte, text string) []byte {
	return append(prefix[:len(prefix):len(prefix)], text...)
}

// anchorPair is one recorded (target, text) pair; at orders the pairs of a
// target: the time of the step, then the position of the link.
type anchorPair struct {
	text   string
	at, ix uint64
	old    bool // from a target list (feed/a/)
}

func pairValue(at int64, ix int) []byte {
	return binary.AppendUvarint(binary.AppendUvarint(nil, uint64(at)), uint64(ix))
}

// anchors returns the anchor texts recorded for uri, oldest first, at most
// maxAnchors (nil when none; a record that does not decode is skipped:
// anchors only help ranking).
func (m *Machine) anchors(coll, uri string) []string {
	c := m.colls[coll]
	if c == nil {
		return nil
	}
	as, _ := m.feedAnchors(c, nil, uri)
	return as
}

// feedAnchors returns what anchors returns; with b, it also deletes in b
// the pairs beyond the newest maxAnchors and rewrites an old list as pairs.
func (m *Machine) feedAnchors(c *collection, b *store.Batch, uri string) ([]string, error) {
	var ps []anchorPair
	p := pairPrefix(c.s.Name, uri)
	err := m.st.IterRaw(store.SpaceMeta, p, func(k, v []byte) error {
		at, n := binary.Uvarint(v)
		ix, n2 := binary.Uvarint(v[max(n, 0):])
		if n <= 0 || n2 <= 0 {
			m.log.Warn("nodesched: anchor record", "collection", c.s.Name, "uri", uri)
			return nil
		}
		ps = append(ps, anchorPair{text: string(k[len(p):]), at: at, ix: ix})
		return nil
	})
	if err != nil {
		return nil, err
	}
	old, err := m.oldAnchors(c, uri)
	if err != nil {
		return nil, err
	}
	for i, a := range old {
		if !slices.ContainsFunc(ps, func(q anchorPair) bool { return q.text == a }) {
			ps = append(ps, anchorPair{text: a, ix: uint64(i), old: true})
		}
	}
	slices.SortFunc(ps, func(x, y anchorPair) int {
		if x.at != y.at {
			return cmp.Compare(x.at, y.at)
		}
		if x.ix != y.ix {
			return cmp.Compare(x.ix, y.ix)
		}
		return strings.Compare(x.text, y.text)
	})
	drop := max(len(ps)-maxAnchors, 0)
	if b != nil {
		for i, q := range ps {
			var err error
			switch {
			case i < drop && !q.old:
				err = b.DeleteRaw(store.SpaceMeta, pairKey(p, q.text))
			case i >= drop && q.old:
				err = b.SetRaw(store.SpaceMeta, pairKey(p, q.text), pairValue(0, int(q.ix)))
			}
			if err != nil {
				return nil, err
			}
		}
		if len(old) > 0 {
			if err := b.DeleteRaw(store.SpaceMeta, anchorKey(c.s.Name, uri)); err != nil {
				return nil, err
			}
		}
	}
	var out []string
	for _, q := range ps[drop:] {
		out = append(out, q.text)
	}
	return out, nil
}

// oldAnchors returns uri's anchor list in the layout before pairs, if the
// collection has any.
func (m *Machine) oldAnchors(c *collection, uri string) ([]string, error) {
	if !c.oldAnchorsKnown {
		c.oldAnchors, c.oldAnchorsKnown = false, true
		err := m.st.IterRaw(store.SpaceMeta, anchorPrefix(c.s.Name), func(_, _ []byte) error {
			c.oldAnchors = true
			return store.ErrStop
		})
		if err != nil {
			c.oldAnchorsKnown = false
			return nil, err
		}
	}
	if !c.oldAnchors {
		return nil, nil
	}
	v, ok, err := m.st.GetRaw(store.SpaceMeta, anchorKey(c.s.Name, uri))
	if err != nil || !ok {
		return nil, err
	}
	as, err := decodeAnchors(v)
	if err != nil {
		m.log.Warn("nodesched: anchor record", "collection", c.s.Name, "uri", uri, "err", err)
		return nil, nil
	}
	return as, nil
}

// recordAnchors puts in b the anchor texts of links (found by one crawl
// step) under their targets, one key per pair. Links to sites routed to
// another node scheduler are left out (their documents are fed there).
//
// Most links of a real site repeat a pair already recorded (its navigation
// is on every page), so a pair in c.anchorsSeen is not written again: it
// keeps the time it was first seen while the process remembers it.
func (m *Machine) recordAnchors(c *collection, b *store.Batch, links []crawlpipe.Link) error {
	at := m.now.UnixNano()
	for i, l := range links {
		a := cleanAnchor(l.Anchor)
		if a == "" {
			continue
		}
		fp := pairPrint(l.URI, a)
		if c.anchorsSeen.has(fp) || slices.Contains(m.stepAnchors, fp) {
			continue
		}
		if own, known := m.route(c.s.Name, l.Site); known && !own {
			continue
		}
		m.stepAnchors = append(m.stepAnchors, fp)
		if err := b.SetRaw(store.SpaceMeta, pairKey(pairPrefix(c.s.Name, l.URI), a), pairValue(at, i)); err != nil {
			return err
		}
	}
	return nil
}

// anchorSet holds fingerprints of (target, anchor text) pairs recorded
// by committed steps, so that they are not written again. It is emptied
// when it holds maxAnchorsSeen and lost on restart: a pair not in it is
// only written again.
type anchorSet map[uint64]struct{}

// maxAnchorsSeen bounds an anchorSet (about 8 MiB when full).
const maxAnchorsSeen = 1 << 19

var anchorSeed = maphash.MakeSeed()

// pairPrint is the fingerprint of a target and an anchor text.
func pairPrint(uri, text string) uint64 {
	var h maphash.Hash
	h.SetSeed(anchorSeed)
	h.WriteString(uri)
	h.WriteByte(0)
	h.WriteString(text)
	return h.Sum64()
}

func (s anchorSet) has(fp uint64) bool {
	_, ok := s[fp]
	return ok
}

// add adds the pairs of a committed step.
func (s *anchorSet) add(fps []uint64) {
	if len(fps) == 0 {
		return
	}
	if *s == nil || len(*s)+len(fps) > maxAnchorsSeen {
		*s = make(anchorSet, 1024)
	}
	for _, fp := range fps {
		(*s)[fp] = struct{}{}
	}
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
