package index

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search/query"
	"github.com/cockroachdb/pebble"
)

// Partial updates (Op.Fields) carry a document's link analysis, its rank
// and anchor text, without its content. Their record lives in the
// versions sidecar beside the document's version, one key per document:
//
//	fieldsKey(DocID) -> version(8, big endian) rank(8, IEEE 754 big endian) anchor text
//
// The record has its own version (the partial updates' sequence), so a
// partial update is compared only with the partial updates before it and
// a content operation only with the content operations before it: a rank
// update is never skipped as stale because content came later, and never
// makes a later content update look stale. Every document written takes
// its rank and anchor text from the record when there is one: a content
// update keeps the last rank and anchor text (the record's anchor text
// replaces the one the crawl sent with the operation: link analysis sees
// every link from other sites, and the anchor field is not stored, so a
// partial update could not keep the crawl's anyway), and a partial update
// re-indexes the stored fields with the new rank and anchor text (bleve
// has no partial update: the stored fields are read back and the document
// indexed again). A partial update for a document not in the index only writes
// the record, which the document takes when it is added; a remove deletes
// the document and keeps the record, so a page that comes back has its
// last rank until the next analysis.
type fieldsRec struct {
	ver    uint64
	rank   float64
	anchor string
}

func fieldsKey(id string) []byte { return append([]byte("f\x00"), id...) }

func (r fieldsRec) encode() []byte {
	b := make([]byte, 0, 16+len(r.anchor))
	b = binary.BigEndian.AppendUint64(b, r.ver)
	b = binary.BigEndian.AppendUint64(b, math.Float64bits(r.rank))
	return append(b, r.anchor...)
}

func decodeFieldsRec(id string, b []byte) (fieldsRec, error) {
	if len(b) < 16 {
		return fieldsRec{}, fmt.Errorf("index: fields of %q: %d bytes", id, len(b))
	}
	return fieldsRec{ver: binary.BigEndian.Uint64(b), rank: math.Float64frombits(binary.BigEndian.Uint64(b[8:])),
		anchor: string(b[16:])}, nil
}

// fields returns the partial-update record of document id (ok false: none),
// the unsaved one of a batch under way first (p.mu held).
func (p *part) fields(id string) (fieldsRec, bool, error) {
	if r, ok := p.unsavedFields[id]; ok {
		return r, true, nil
	}
	return p.savedFields(id)
}

// savedFields returns the partial-update record of document id saved in
// the sidecar.
func (p *part) savedFields(id string) (fieldsRec, bool, error) {
	if p.vers == nil {
		return fieldsRec{}, false, nil
	}
	v, closer, err := p.vers.Get(fieldsKey(id))
	if err == pebble.ErrNotFound {
		return fieldsRec{}, false, nil
	}
	if err != nil {
		return fieldsRec{}, false, fmt.Errorf("index: fields of %q: %w", id, err)
	}
	defer closer.Close()
	r, err := decodeFieldsRec(id, v)
	return r, err == nil, err
}

// storedDocs returns the stored fields of the documents ids that are in
// the partition, by ID.
func (p *part) storedDocs(ids []string) (map[string]map[string]interface{}, error) {
	out := make(map[string]map[string]interface{}, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	req := bleve.NewSearchRequestOptions(query.NewDocIDQuery(ids), len(ids), 0, false)
	req.Fields = []string{"*"}
	res, err := p.b.Search(req)
	if err != nil {
		return nil, fmt.Errorf("index: reading stored documents: %w", err)
	}
	for _, h := range res.Hits {
		out[h.ID] = h.Fields
	}
	return out, nil
}

// refields rebuilds the bleve document of stored fields f (as a search
// returns them) with rank and anchor text from r: what fields made of the
// original Doc, the unstored domains derived again from the site.
func refields(f map[string]interface{}, r fieldsRec) map[string]interface{} {
	site := str(f[FieldSite])
	m := map[string]interface{}{
		FieldURL:        str(f[FieldURL]),
		FieldSite:       site,
		FieldDomains:    Domains(site),
		FieldTitle:      str(f[FieldTitle]),
		FieldBody:       str(f[FieldBody]),
		FieldAnchor:     r.anchor,
		FieldSummary:    str(f[FieldSummary]),
		FieldMIME:       str(f[FieldMIME]),
		FieldType:       str(f[FieldType]),
		FieldCollection: str(f[FieldCollection]),
		FieldLang:       str(f[FieldLang]),
		FieldRank:       r.rank,
	}
	if t := date(f[FieldModified]); !t.IsZero() {
		m[FieldModified] = t.UTC()
	}
	for _, k := range []string{FieldLinks, FieldDuplicates, FieldRedirects, FieldMirrors} {
		if v := strs(f[k]); len(v) > 0 {
			m[k] = v
		}
	}
	return m
}

// withFields gives d the rank and anchor text of its partial-update record.
func withFields(d Doc, r fieldsRec) Doc {
	d.Rank, d.Anchor = r.rank, r.anchor
	return d
}
