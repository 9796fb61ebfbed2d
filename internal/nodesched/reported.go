package nodesched

import (
	"encoding/binary"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/trawl/trawl/internal/feed"
	"github.com/trawl/trawl/internal/nodesched/crawlpipe"
	"github.com/trawl/trawl/internal/store"
)

// What a document's operation reports besides its content (MS-FSCCFG
// 2.2.4.7 pp/ds_meta_info, ds_max_ecl, max_dupes, ecl_override; see
// docs/decisions/feed.md):
//
//   - duplicates: the URIs whose record is a duplicate of the document
//     (status duplicate, owner the document);
//   - redirects: the URIs whose record redirects to it (status redirect,
//     Location the document; direct redirects only);
//   - mirrors: its URI on each mirror site of its site (mirror_site_files);
//   - metadata: the HTTP metadata of the response (Content-Type, ETag,
//     Last-Modified headers, and the Last-Modified date).
//
// The crawl keeps, in the crawl store's metadata space, a list per
// document and kind, and for every listed URI where it is listed:
//
//	'm' "feed/d/" lp(collection) document -> duplicates (encodeURIList)
//	'm' "feed/t/" lp(collection) document -> redirects (encodeURIList)
//	'm' "feed/e/" lp(collection) uri      -> kind ('d' or 't') document
//
// A list keeps its URIs in the order they were found, at most max_dupes
// of them that ecl_override does not match, plus at most MaxOverride that
// it matches; a URI found when its list is full is not recorded (a later
// crawl step of it records it if there is room then). An operation
// reports, of each list, the first ds_max_ecl URIs that ecl_override does
// not match and every URI it matches.
//
// A crawl step (or a duplicate server's answer, or a deletion) that
// changes where its URI is listed changes the lists in its own store
// batch; when that changes what a document already fed reports, the same
// batch feeds the document again (an update) with the new lists: at most
// once per batch per document, and only when the reported lists change,
// so a document is fed again at most about ds_max_ecl times for its
// duplicates whatever their number.

// List kinds, as stored in the reverse entries.
const (
	listDuplicates byte = 'd'
	listRedirects  byte = 't'
)

const (
	feedDupListPrefix   = "feed/d/"
	feedRedirListPrefix = "feed/t/"
	feedListedPrefix    = "feed/e/"
)

func listKey(coll string, kind byte, doc string) []byte {
	p := feedDupListPrefix
	if kind == listRedirects {
		p = feedRedirListPrefix
	}
	return append(store.AppendLP([]byte(p), coll), doc...)
}

func listedKey(coll, uri string) []byte {
	return append(store.AppendLP([]byte(feedListedPrefix), coll), uri...)
}

// encodeURIList encodes a list of URIs: a count, then each URI with its
// length (uvarints).
func encodeURIList(us []string) []byte {
	return encodeAnchors(us)
}

// decodeURIList decodes encodeURIList's output, at most max URIs of at
// most MaxListURIBytes each.
func decodeURIList(b []byte, max int) ([]string, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(max) || n > uint64(len(b)) {
		return nil, errors.New("nodesched: bad URI list")
	}
	b = b[k:]
	out := make([]string, 0, n)
	for range n {
		l, k := binary.Uvarint(b)
		if k <= 0 || l > crawlpipe.MaxListURIBytes || l > uint64(len(b)-k) {
			return nil, errors.New("nodesched: bad URI list")
		}
		out = append(out, string(b[k:k+int(l)]))
		b = b[k+int(l):]
	}
	if len(b) != 0 {
		return nil, errors.New("nodesched: bad URI list")
	}
	return out, nil
}

// listing is where a URI is listed: in the kind list of doc (kind 0: in
// none).
type listing struct {
	kind byte
	doc  string
}

// listState is the lists a batch changes, until feedCommit writes them.
type listState struct {
	coll   string
	lists  map[listing]*docList
	listed map[string]listing // uri -> where, as changed by the batch
}

type docList struct {
	orig, cur []string
}

// resetLists forgets the list changes of a batch that was not committed.
func (m *Machine) resetLists() { m.lists = nil }

func (m *Machine) listsOf(c *collection) *listState {
	if m.lists == nil || m.lists.coll != c.s.Name {
		m.lists = &listState{coll: c.s.Name, lists: map[listing]*docList{}, listed: map[string]listing{}}
	}
	return m.lists
}

// list returns the current kind list of doc: the batch's, or the store's.
func (m *Machine) list(c *collection, kind byte, doc string) []string {
	if ls := m.lists; ls != nil && ls.coll == c.s.Name {
		if l := ls.lists[listing{kind, doc}]; l != nil {
			return l.cur
		}
	}
	return m.storedList(c, kind, doc)
}

func (m *Machine) storedList(c *collection, kind byte, doc string) []string {
	if !m.mayExist(c, kind, doc) { // keyfilter.go
		return nil
	}
	v, ok, err := m.st.GetRaw(store.SpaceMeta, listKey(c.s.Name, kind, doc))
	if err != nil || !ok {
		return nil
	}
	us, err := decodeURIList(v, c.s.Reporting.MaxDupes+crawlpipe.MaxOverride+maxDupesSlack)
	if err != nil {
		m.log.Warn("nodesched: reported URI list", "collection", c.s.Name, "uri", doc, "err", err)
		return nil
	}
	return us
}

// maxDupesSlack lets a list recorded under a larger max_dupes decode after
// max_dupes was lowered.
const maxDupesSlack = 1 << 16

// listedAt returns where uri is listed.
func (m *Machine) listedAt(c *collection, uri string) listing {
	ls := m.listsOf(c)
	if l, ok := ls.listed[uri]; ok {
		return l
	}
	if !m.mayExist(c, famListed, uri) { // keyfilter.go
		return listing{}
	}
	v, ok, err := m.st.GetRaw(store.SpaceMeta, listedKey(c.s.Name, uri))
	if err != nil || !ok || len(v) < 1 || (v[0] != listDuplicates && v[0] != listRedirects) {
		return listing{}
	}
	return listing{v[0], string(v[1:])}
}

// setListed records that uri is (now) listed at to (kind 0: nowhere): it
// leaves the list it was in and joins to's if there is room.
func (m *Machine) setListed(c *collection, uri string, to listing) {
	if to.kind != 0 && (to.doc == "" || to.doc == uri) {
		to = listing{}
	}
	from := m.listedAt(c, uri)
	if from == to {
		return
	}
	ls := m.listsOf(c)
	edit := func(at listing) *docList {
		l := ls.lists[at]
		if l == nil {
			cur := m.storedList(c, at.kind, at.doc)
			l = &docList{orig: cur, cur: slices.Clone(cur)}
			ls.lists[at] = l
		}
		return l
	}
	if from.kind != 0 {
		l := edit(from)
		l.cur = slices.DeleteFunc(l.cur, func(u string) bool { return u == uri })
	}
	ls.listed[uri] = listing{}
	if to.kind == 0 {
		return
	}
	l := edit(to)
	if slices.Contains(l.cur, uri) {
		ls.listed[uri] = to
		return
	}
	r := &c.s.Reporting
	over, plain := 0, 0
	for _, u := range l.cur {
		if r.Overrides(u) {
			over++
		} else {
			plain++
		}
	}
	if (r.Overrides(uri) && over < crawlpipe.MaxOverride) || (!r.Overrides(uri) && plain < r.MaxDupes) {
		l.cur = append(l.cur, uri)
		ls.listed[uri] = to
	}
}

// listStep updates where the URI of a crawl step is listed, from its new
// record: a duplicate under its owner, a redirect under its target. A
// failed fetch (possibly transient) and a duplicate waiting for its
// duplicate server's answer (keep) leave it where it was.
func (m *Machine) listStep(c *collection, rec *store.URIRecord, keep bool) {
	if keep || rec.Status == store.StatusError {
		return
	}
	m.setListed(c, rec.URI, listingOf(rec))
}

func listingOf(rec *store.URIRecord) listing {
	switch {
	case rec.Status == store.StatusDuplicate && rec.Owner != "":
		return listing{listDuplicates, rec.Owner}
	case rec.Status == store.StatusRedirect && rec.Location != "":
		return listing{listRedirects, rec.Location}
	}
	return listing{}
}

// reportLists sets the duplicates, redirects and mirrors op reports, and
// drops its metadata unless ds_meta_info asks for it.
func (m *Machine) reportLists(c *collection, op *feed.Operation) {
	r := &c.s.Reporting
	op.Duplicates, op.Redirects, op.Mirrors = nil, nil, nil
	if r.Duplicates {
		op.Duplicates = r.Report(m.list(c, listDuplicates, op.URI))
	}
	if r.Redirects {
		op.Redirects = r.Report(m.list(c, listRedirects, op.URI))
	}
	if r.Mirrors {
		op.Mirrors = c.s.MirrorURIs(op.URI)
	}
	if !r.Metadata {
		op.Meta.Headers, op.Meta.LastModified = nil, time.Time{}
	}
}

// flushLists writes the lists the batch b changed and returns ops with
// the documents whose reported lists changed fed again: an operation of
// the batch for such a document gets the new lists; a document fed
// earlier gets an update (unless the batch removes it).
func (m *Machine) flushLists(c *collection, b *store.Batch, ops []feed.Operation) ([]feed.Operation, error) {
	ls := m.lists
	m.lists = nil
	if ls == nil || ls.coll != c.s.Name || (len(ls.lists) == 0 && len(ls.listed) == 0) {
		return ops, nil
	}
	name := c.s.Name
	for _, uri := range sortedKeys(ls.listed) {
		at := ls.listed[uri]
		var err error
		if at.kind == 0 {
			err = b.DeleteRaw(store.SpaceMeta, listedKey(name, uri))
		} else {
			c.keyAdded(famListed, uri)
			err = b.SetRaw(store.SpaceMeta, listedKey(name, uri), append([]byte{at.kind}, at.doc...))
		}
		if err != nil {
			return ops, err
		}
	}
	r := &c.s.Reporting
	var dirty []string
	seen := map[string]bool{}
	keys := make([]listing, 0, len(ls.lists))
	for at := range ls.lists {
		keys = append(keys, at)
	}
	slices.SortFunc(keys, func(a, b listing) int {
		if c := strings.Compare(a.doc, b.doc); c != 0 {
			return c
		}
		return int(a.kind) - int(b.kind)
	})
	for _, at := range keys {
		l := ls.lists[at]
		if slices.Equal(l.orig, l.cur) {
			continue
		}
		var err error
		if len(l.cur) == 0 {
			err = b.DeleteRaw(store.SpaceMeta, listKey(name, at.kind, at.doc))
		} else {
			c.keyAdded(at.kind, at.doc)
			err = b.SetRaw(store.SpaceMeta, listKey(name, at.kind, at.doc), encodeURIList(l.cur))
		}
		if err != nil {
			return ops, err
		}
		on := (at.kind == listDuplicates && r.Duplicates) || (at.kind == listRedirects && r.Redirects)
		if on && !seen[at.doc] && !slices.Equal(r.Report(l.orig), r.Report(l.cur)) {
			seen[at.doc] = true
			dirty = append(dirty, at.doc)
		}
	}
	if !m.cfg.Feeds || len(dirty) == 0 {
		return ops, nil
	}
	m.lists = ls // reportLists reads the batch's lists
	defer func() { m.lists = nil }()
	for _, doc := range dirty {
		i := slices.IndexFunc(ops, func(op feed.Operation) bool { return op.URI == doc })
		if i >= 0 {
			if ops[i].Kind != feed.Remove {
				m.reportLists(c, &ops[i])
			}
			continue
		}
		op, ok, err := m.refeedListed(c, b, doc)
		if err != nil {
			return ops, err
		}
		if ok {
			ops = append(ops, op)
			c.stats["pp_relisted"]++
		}
	}
	return ops, nil
}

// refeedListed returns the update of a document fed earlier whose reported
// lists changed, if it is still fed as it is stored.
func (m *Machine) refeedListed(c *collection, b *store.Batch, doc string) (feed.Operation, bool, error) {
	fed, sum, err := m.mark(c.s.Name, doc)
	if err != nil || !fed {
		return feed.Operation{}, false, err
	}
	rec, ok, err := m.st.URI(c.s.Name, doc)
	if err != nil || !ok || (rec.Status != store.StatusFetched && rec.Status != store.StatusNotModified) ||
		string(checksumOf(rec)) != string(sum) {
		return feed.Operation{}, false, err
	}
	body, ok, err := m.st.Document(c.s.Name, doc)
	if err != nil || !ok {
		return feed.Operation{}, false, err
	}
	ops, err := m.feedPresent(c, b, rec, body, nil, 0, true)
	if err != nil || len(ops) != 1 {
		return feed.Operation{}, false, err
	}
	return ops[0], true, nil
}

// forgetLists deletes every list of a removed collection in b.
func forgetLists(b *store.Batch, coll string) error {
	for _, p := range []string{feedDupListPrefix, feedRedirListPrefix, feedListedPrefix} {
		if err := b.DeletePrefix(store.SpaceMeta, store.AppendLP([]byte(p), coll)); err != nil {
			return err
		}
	}
	return nil
}
