package index

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/custom"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/keyword"
	"github.com/blevesearch/bleve/v2/analysis/token/lowercase"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search/query"
	"github.com/cockroachdb/pebble"
	"github.com/trawl/trawl/internal/clicks"
	"go.etcd.io/bbolt"
)

// Field names of the index.
const (
	FieldURL        = "url"
	FieldSite       = "site"
	FieldDomains    = "domains"
	FieldTitle      = "title"
	FieldBody       = "body"
	FieldAnchor     = "anchor"
	FieldSummary    = "summary"
	FieldMIME       = "mime"
	FieldType       = "type"
	FieldModified   = "modified"
	FieldCollection = "collection"
	FieldLang       = "lang"
	FieldRank       = "rank"
	// FieldLinks, FieldDuplicates, FieldRedirects and FieldMirrors are
	// the URIs a crawler reports with a document (MS-FSCCFG
	// pp/ds_send_links and pp/ds_meta_info): stored and searchable as
	// exact values.
	FieldLinks      = "links"
	FieldDuplicates = "duplicates"
	FieldRedirects  = "redirects"
	FieldMirrors    = "mirrors"
)

// textAnalyzer is the analyzer of the text fields: Unicode word boundaries
// (UAX #29) and lower case, no stop words and no stemming, so that phrases
// and words in any language match as written (see docs/decisions/index.md).
// Its tokenizer is wordsTokenizer (bleve's "unicode" tokenizer's words,
// found faster in ASCII text); an index created before keeps "unicode" in
// its stored mapping, with the same words.
const textAnalyzer = "trawl_text"

// summaryBytes caps the stored summary shown when no snippet matches.
const summaryBytes = 300

// ErrClosed is returned by an Index after Close.
var ErrClosed = errors.New("index: closed")

// ErrNoIndex is returned by Open when the directory holds no index and
// Options.Create is false.
var ErrNoIndex = errors.New("index: no index")

// Doc is one document as the index sees it.
type Doc struct {
	URL        string
	Collection string
	Title      string
	// Body is the extracted text.
	Body string
	// Description, if set, is the summary shown when no snippet matches
	// (else the start of Body).
	Description string
	// Anchor is the anchor text of links pointing to the document.
	Anchor   string
	MIME     string
	Modified time.Time
	Language string
	// Rank is a static rank (link analysis); scores are multiplied by
	// 1+Rank. Zero by default.
	Rank float64
	// Links are the hyperlinks of the document; Duplicates the URIs of
	// documents with the same content; Redirects the URIs redirected to
	// it; Mirrors its URIs on mirror sites (absolute URIs, as the
	// crawler reports them).
	Links, Duplicates, Redirects, Mirrors []string
}

// Op is one operation for Apply: an add or update (Remove false) replaces the
// document with the same collection and URL; a remove deletes it; a
// partial update (Fields) sets only its rank and anchor text.
type Op struct {
	Remove bool
	// Fields makes the op a partial update: only Doc.Rank and Doc.Anchor
	// (and Collection and URL) are used, merged into the stored document,
	// and Version orders it among the document's partial updates only
	// (fields.go).
	Fields bool
	// Version orders the operations on one document: an op whose version
	// is not greater than the last one applied to that document is
	// skipped. Versions must be positive.
	Version uint64
	// Doc is the document; a remove uses only Collection and URL.
	Doc Doc
}

// ApplyResult says what Apply did.
type ApplyResult struct {
	// Applied counts the ops that changed the index; Skipped those whose
	// version was not newer than the document's (a resend, or stale).
	Applied, Skipped int
	// NoDocument counts the partial updates recorded for a document that
	// is not in the index (it takes them when it is added).
	NoDocument int
}

// Options configure Open.
type Options struct {
	// Create makes a new index when dir holds none.
	Create bool
	// ReadOnly opens the index for searching only.
	ReadOnly bool
	// LockTimeout bounds the wait for another process's lock on the index
	// (default 2s).
	LockTimeout time.Duration
	// RerankWindow is how many of the best hits by text score are re-sorted
	// by score*(1+rank) (default 100).
	RerankWindow int
	// Partitions is the number of partitions of a new index (default 1,
	// at most MaxPartitions): batches are applied to them in parallel
	// and searches query them all (partition.go).
	Partitions int
	// Clicks, if set, is the click relevance (internal/clicks): a URL's
	// score for a query it was clicked for is multiplied by its Boost.
	Clicks *clicks.Relevance
}

// Index is an open full-text index: one or more partitions (bleve indexes
// with their version sidecars), documents placed by a hash of their ID.
// Its methods are safe for concurrent use.
type Index struct {
	parts  []*part
	search bleve.Index // the only partition, or an alias over all of them
	opts   Options
	dir    string
	mu     sync.Mutex // guards closed
	closed bool
}

// part is one partition: a bleve index and its document versions.
type part struct {
	b    bleve.Index
	vers *pebble.DB // document versions (versions.go); nil when read-only and none were written
	ro   bool
	mu   sync.Mutex // serializes Apply's version check and batch
	// unsaved holds the versions of batches given to bleve whose versions
	// are not yet in vers (guarded by mu): the version check of a later
	// Apply sees them.
	unsaved map[string]uint64
	// unsavedFields is the same for partial-update records (fields.go).
	unsavedFields map[string]fieldsRec
	wrote         bool // a batch went in since Open: close settles first (guarded by mu)
	closed        bool
}

// Open opens the index in dir, creating it when opts.Create is set (with
// opts.Partitions partitions; an existing index keeps the number it was
// created with, see partition.go).
func Open(dir string, opts Options) (*Index, error) {
	if opts.LockTimeout <= 0 {
		opts.LockTimeout = 2 * time.Second
	}
	if opts.RerankWindow <= 0 {
		opts.RerankWindow = 100
	}
	dirs, err := partitionDirs(dir, opts)
	if err != nil {
		return nil, err
	}
	ix := &Index{opts: opts, dir: dir}
	for _, d := range dirs {
		p, err := openPart(d, opts)
		if err != nil {
			for _, q := range ix.parts {
				_ = q.close()
			}
			return nil, err
		}
		ix.parts = append(ix.parts, p)
	}
	if len(ix.parts) == 1 {
		ix.search = ix.parts[0].b
	} else {
		bs := make([]bleve.Index, len(ix.parts))
		for i, p := range ix.parts {
			bs[i] = p.b
		}
		ix.search = bleve.NewIndexAlias(bs...)
	}
	return ix, nil
}

// openPart opens (or creates) one partition in dir.
func openPart(dir string, opts Options) (*part, error) {
	// unsafe_batch: Batch returns once the batch is searchable, not once
	// it is persisted; Apply waits for the persisted callback instead,
	// with the partition unlocked, so that the next batch is analysed and
	// built while this one is written (see doc.go).
	cfg := map[string]interface{}{"bolt_timeout": opts.LockTimeout.String(), "unsafe_batch": true}
	if opts.ReadOnly {
		cfg["read_only"] = true
	}
	var (
		b   bleve.Index
		err error
	)
	if _, statErr := os.Stat(filepath.Join(dir, "index_meta.json")); statErr == nil {
		b, err = bleve.OpenUsing(dir, cfg)
	} else if !errors.Is(statErr, os.ErrNotExist) {
		return nil, fmt.Errorf("index: %w", statErr)
	} else if !opts.Create || opts.ReadOnly {
		return nil, fmt.Errorf("%w in %s", ErrNoIndex, dir)
	} else {
		var m *mapping.IndexMappingImpl
		m, err = newMapping()
		if err != nil {
			return nil, err
		}
		b, err = bleve.NewUsing(dir, m, bleve.Config.DefaultIndexType, bleve.Config.DefaultKVStore, cfg)
	}
	if err != nil {
		if errors.Is(err, bbolt.ErrTimeout) { // another process holds root.bolt's lock
			return nil, fmt.Errorf("index: %s is in use by another process (use its search API): %w", dir, err)
		}
		return nil, fmt.Errorf("index: open %s: %w", dir, err)
	}
	p := &part{b: b, ro: opts.ReadOnly, unsaved: map[string]uint64{}, unsavedFields: map[string]fieldsRec{}}
	if p.vers, err = openVersions(dir, opts.ReadOnly); err != nil {
		b.Close()
		return nil, err
	}
	return p, nil
}

// settle waits, up to limit, until bleve's background persister and merger
// have caught up with the last batch (the index's root epoch is both
// persisted and merged). With unsafe_batch the persister writes after
// Batch returns; closing the index while it waits for the introducer to
// apply a persisted segment races inside bleve (scorch's
// persistSnapshotDirect iterates the segment map the introducer is
// deleting from, bleve v2.5.7 and v2.6.3 alike). Waiting first also means
// a clean close leaves every batch on disk.
func (p *part) settle(limit time.Duration) {
	deadline := time.Now().Add(limit)
	for {
		idx, _ := p.b.StatsMap()["index"].(map[string]interface{})
		active, ok := idx["index_bgthreads_active"].(bool)
		if !ok || !active || time.Now().After(deadline) {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func newMapping() (*mapping.IndexMappingImpl, error) {
	im := bleve.NewIndexMapping()
	if err := im.AddCustomAnalyzer(textAnalyzer, map[string]interface{}{
		"type":          custom.Name,
		"tokenizer":     wordsTokenizer,
		"token_filters": []string{lowercase.Name},
	}); err != nil {
		return nil, fmt.Errorf("index: mapping: %w", err)
	}
	text := func(store bool) *mapping.FieldMapping {
		f := bleve.NewTextFieldMapping()
		f.Analyzer = textAnalyzer
		f.Store = store
		f.IncludeTermVectors = store // highlighting needs locations
		f.IncludeInAll = false
		return f
	}
	kw := func(store bool) *mapping.FieldMapping {
		f := bleve.NewKeywordFieldMapping()
		f.Analyzer = keyword.Name
		f.Store = store
		f.IncludeInAll = false
		f.IncludeTermVectors = false
		return f
	}
	dm := bleve.NewDocumentStaticMapping()
	dm.AddFieldMappingsAt(FieldURL, kw(true))
	dm.AddFieldMappingsAt(FieldSite, kw(true))
	dm.AddFieldMappingsAt(FieldDomains, kw(false))
	dm.AddFieldMappingsAt(FieldTitle, text(true))
	dm.AddFieldMappingsAt(FieldBody, text(true))
	dm.AddFieldMappingsAt(FieldAnchor, text(false))
	summary := bleve.NewTextFieldMapping()
	summary.Index = false
	summary.Store = true
	summary.IncludeInAll = false
	summary.IncludeTermVectors = false
	summary.DocValues = false
	dm.AddFieldMappingsAt(FieldSummary, summary)
	dm.AddFieldMappingsAt(FieldMIME, kw(true))
	dm.AddFieldMappingsAt(FieldType, kw(true))
	// The date and the rank are shown and re-score hits (read back as
	// stored fields); no query searches them, so they are not indexed: a
	// number is indexed as 16 prefix-coded terms with doc values, which
	// made a third of bleve's batch work per document (docs/decisions/index.md).
	modified := bleve.NewDateTimeFieldMapping()
	modified.IncludeInAll = false
	modified.Index = false
	modified.DocValues = false
	dm.AddFieldMappingsAt(FieldModified, modified)
	dm.AddFieldMappingsAt(FieldCollection, kw(true))
	dm.AddFieldMappingsAt(FieldLang, kw(true))
	rank := bleve.NewNumericFieldMapping()
	rank.IncludeInAll = false
	rank.Index = false
	rank.DocValues = false
	dm.AddFieldMappingsAt(FieldRank, rank)
	for _, f := range []string{FieldLinks, FieldDuplicates, FieldRedirects, FieldMirrors} {
		m := kw(true)
		m.DocValues = false
		dm.AddFieldMappingsAt(f, m)
	}
	im.DefaultMapping = dm
	im.DefaultAnalyzer = textAnalyzer
	im.StoreDynamic = false
	im.IndexDynamic = false
	im.DocValuesDynamic = false
	return im, nil
}

// Close closes the index.
func (ix *Index) Close() error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.closed {
		return nil
	}
	ix.closed = true
	var err error
	for _, p := range ix.parts {
		err = errors.Join(err, p.close())
	}
	return err
}

func (p *part) close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	p.closed = true
	if p.wrote {
		p.settle(10 * time.Second)
	}
	err := p.b.Close()
	if p.vers != nil {
		err = errors.Join(err, p.vers.Close())
	}
	if err != nil {
		return fmt.Errorf("index: close: %w", err)
	}
	return nil
}

// DocID is the bleve document identifier of a URL in a collection.
func DocID(collection, rawURL string) string {
	return collection + "\x1f" + rawURL
}

func versionKey(id string) []byte { return append([]byte("v\x00"), id...) }

// pendingDoc is what one Apply does to one document: its content op and
// its partial update (Version 0: none), over its stored versions.
type pendingDoc struct {
	op     Op
	ver    uint64 // the content version
	fop    Op
	rec    fieldsRec // the partial-update record (fop's when set)
	hasRec bool
}

// apply applies ops, all of this partition, as Apply says.
func (p *part) apply(ctx context.Context, ops []Op) (ApplyResult, error) {
	var res ApplyResult
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return res, ErrClosed
	}
	latest, order, err := p.plan(ops, &res)
	if err != nil {
		p.mu.Unlock()
		return ApplyResult{}, err
	}
	batch, applied, appliedF, err := p.build(latest, order, &res)
	if err != nil {
		p.mu.Unlock()
		return ApplyResult{}, err
	}
	if batch.Size() == 0 {
		// Only records of partial updates for documents not indexed.
		err := p.saveVersions(applied, appliedF)
		p.mu.Unlock()
		if err != nil {
			return ApplyResult{}, err
		}
		return res, nil
	}
	persisted := make(chan error, 1)
	batch.SetPersistedCallback(func(err error) {
		select {
		case persisted <- err:
		default:
		}
	})
	err = p.b.Batch(batch)
	if err == nil {
		p.wrote = true
		for _, a := range applied {
			p.unsaved[a.id] = a.ver
		}
		for _, a := range appliedF {
			p.unsavedFields[a.id] = a.rec
		}
	}
	p.mu.Unlock()
	if err != nil {
		return ApplyResult{}, fmt.Errorf("index: batch: %w", err)
	}
	defer p.forget(applied, appliedF)
	select {
	case err := <-persisted:
		if err != nil {
			return ApplyResult{}, fmt.Errorf("index: persist: %w", err)
		}
	case <-ctx.Done():
		return ApplyResult{}, fmt.Errorf("index: waiting for persistence: %w", ctx.Err())
	}
	if err := p.saveVersions(applied, appliedF); err != nil {
		return ApplyResult{}, err
	}
	return res, nil
}

// plan decides, per document, which of ops apply (p.mu held): the last op
// per document wins when its version is the highest, content ops compared
// with the document's content version, partial updates with its record's.
func (p *part) plan(ops []Op, res *ApplyResult) (map[string]*pendingDoc, []string, error) {
	r, err := p.b.Advanced()
	if err != nil {
		return nil, nil, fmt.Errorf("index: %w", err)
	}
	reader, err := r.Reader()
	if err != nil {
		return nil, nil, fmt.Errorf("index: reader: %w", err)
	}
	defer reader.Close()
	latest := make(map[string]*pendingDoc, len(ops))
	order := make([]string, 0, len(ops))
	for _, op := range ops {
		if op.Version == 0 {
			return nil, nil, fmt.Errorf("index: op for %q has version 0", op.Doc.URL)
		}
		if op.Doc.URL == "" {
			return nil, nil, errors.New("index: op without URL")
		}
		id := DocID(op.Doc.Collection, op.Doc.URL)
		pd, ok := latest[id]
		if !ok {
			stored, inBatch := p.unsaved[id]
			var err error
			if !inBatch {
				stored, err = p.version(reader.GetInternal, id)
			}
			if err != nil {
				return nil, nil, fmt.Errorf("index: version of %q: %w", op.Doc.URL, err)
			}
			pd = &pendingDoc{ver: stored}
			if pd.rec, pd.hasRec, err = p.fields(id); err != nil {
				return nil, nil, err
			}
			latest[id] = pd
			order = append(order, id)
		}
		cur, curVer := &pd.op, pd.ver
		if op.Fields {
			cur, curVer = &pd.fop, pd.rec.ver
		}
		if op.Version <= curVer {
			res.Skipped++
			continue
		}
		if cur.Version != 0 {
			res.Skipped++ // superseded inside this batch
		}
		*cur = op
		if op.Fields {
			pd.rec, pd.hasRec = fieldsRec{ver: op.Version, rank: op.Doc.Rank, anchor: op.Doc.Anchor}, true
		} else {
			pd.ver = op.Version
		}
	}
	return latest, order, nil
}

// build makes the bleve batch of a plan (p.mu held): content ops take the
// document's partial-update record; a partial update alone re-indexes the
// stored document with it, or only records it when there is none.
func (p *part) build(latest map[string]*pendingDoc, order []string, res *ApplyResult) (*bleve.Batch, []appliedVersion, []appliedFields, error) {
	var alone []string
	for _, id := range order {
		if pd := latest[id]; pd.op.Version == 0 && pd.fop.Version != 0 {
			alone = append(alone, id)
		}
	}
	stored, err := p.storedDocs(alone)
	if err != nil {
		return nil, nil, nil, err
	}
	batch := p.b.NewBatch()
	applied := make([]appliedVersion, 0, len(order))
	var appliedF []appliedFields
	for _, id := range order {
		pd := latest[id]
		if pd.op.Version != 0 {
			res.Applied++
			if pd.op.Remove {
				batch.Delete(id)
			} else {
				d := pd.op.Doc
				if pd.hasRec {
					d = withFields(d, pd.rec)
				}
				if err := batch.Index(id, fields(d)); err != nil {
					return nil, nil, nil, fmt.Errorf("index: %q: %w", pd.op.Doc.URL, err)
				}
			}
			applied = append(applied, appliedVersion{id, pd.op.Version})
			if p.vers == nil {
				var v [8]byte
				binary.BigEndian.PutUint64(v[:], pd.op.Version)
				batch.SetInternal(versionKey(id), v[:])
			}
		}
		if pd.fop.Version == 0 {
			continue
		}
		appliedF = append(appliedF, appliedFields{id, pd.rec})
		switch f, ok := stored[id]; {
		case pd.op.Version != 0 && !pd.op.Remove:
			res.Applied++
		case pd.op.Version == 0 && ok:
			if err := batch.Index(id, refields(f, pd.rec)); err != nil {
				return nil, nil, nil, fmt.Errorf("index: %q: %w", pd.fop.Doc.URL, err)
			}
			res.Applied++
		default:
			res.NoDocument++
		}
	}
	return batch, applied, appliedF, nil
}

// forget drops the versions and records of applied and appliedF from
// unsaved and unsavedFields, unless a later batch has replaced them.
func (p *part) forget(applied []appliedVersion, appliedF []appliedFields) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, a := range applied {
		if p.unsaved[a.id] == a.ver {
			delete(p.unsaved, a.id)
		}
	}
	for _, a := range appliedF {
		if p.unsavedFields[a.id].ver == a.rec.ver {
			delete(p.unsavedFields, a.id)
		}
	}
}

// fields is the bleve document of d.
func fields(d Doc) map[string]interface{} {
	site := Site(d.URL)
	summary := d.Description
	if summary == "" {
		summary = d.Body
	}
	m := map[string]interface{}{
		FieldURL:        d.URL,
		FieldSite:       site,
		FieldDomains:    Domains(site),
		FieldTitle:      d.Title,
		FieldBody:       d.Body,
		FieldAnchor:     d.Anchor,
		FieldSummary:    truncate(summary, summaryBytes),
		FieldMIME:       NormalizeMIME(d.MIME),
		FieldType:       TypeOf(d.MIME),
		FieldCollection: d.Collection,
		FieldLang:       strings.ToLower(d.Language),
		FieldRank:       d.Rank,
	}
	if !d.Modified.IsZero() {
		m[FieldModified] = d.Modified.UTC()
	}
	for f, v := range map[string][]string{FieldLinks: d.Links, FieldDuplicates: d.Duplicates, FieldRedirects: d.Redirects, FieldMirrors: d.Mirrors} {
		if len(v) > 0 {
			m[f] = v
		}
	}
	return m
}

// truncate cuts s to at most n bytes on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Site is the lower-case host name of rawURL without port or trailing dot,
// or "" when rawURL has none.
func Site(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
}

// Domains returns host and each of its parent domains: a.b.example.com gives
// a.b.example.com, b.example.com, example.com and com. An IP address gives
// itself only.
func Domains(host string) []string {
	if host == "" {
		return nil
	}
	if strings.Contains(host, ":") || isIPv4(host) {
		return []string{host}
	}
	var out []string
	for s := host; s != ""; {
		out = append(out, s)
		i := strings.IndexByte(s, '.')
		if i < 0 {
			break
		}
		s = s[i+1:]
	}
	return out
}

func isIPv4(h string) bool {
	for _, c := range h {
		if (c < '0' || c > '9') && c != '.' {
			return false
		}
	}
	return true
}

// NormalizeMIME lower-cases a MIME type and drops its parameters.
func NormalizeMIME(m string) string {
	if i := strings.IndexByte(m, ';'); i >= 0 {
		m = m[:i]
	}
	return strings.ToLower(strings.TrimSpace(m))
}

// TypeOf returns the family of a MIME type, as type: filters name it: html,
// pdf, text, office, xml or other.
func TypeOf(mime string) string {
	m := NormalizeMIME(mime)
	switch {
	case m == "text/html" || m == "application/xhtml+xml" || m == "text/vnd.wap.wml":
		return "html"
	case m == "application/pdf" || m == "application/x-pdf":
		return "pdf"
	case strings.HasPrefix(m, "application/vnd.openxmlformats-officedocument.") ||
		strings.HasPrefix(m, "application/vnd.ms-") || m == "application/msword" ||
		strings.HasPrefix(m, "application/vnd.oasis.opendocument."):
		return "office"
	case m == "text/xml" || m == "application/xml" || strings.HasSuffix(m, "+xml"):
		return "xml"
	case strings.HasPrefix(m, "text/"):
		return "text"
	}
	return "other"
}

// Count returns the number of documents in the index.
func (ix *Index) Count() (uint64, error) {
	n, err := ix.search.DocCount()
	if err != nil {
		return 0, fmt.Errorf("index: count: %w", err)
	}
	return n, nil
}

// Stored is a document as stored in the index.
type Stored struct {
	URL, Collection, Title, Body, MIME, Type, Site, Language string
	Modified                                                 time.Time
	Rank                                                     float64
	Links, Duplicates, Redirects, Mirrors                    []string
	// Version is the last version applied to the document (also after a
	// remove, when Found is false).
	Version uint64
	// Anchor is the anchor text of the last partial update, FieldsVersion
	// its version (0: none; also when Found is false).
	Anchor        string
	FieldsVersion uint64
	Found         bool
}

// Lookup returns the stored document for a URL in a collection.
func (ix *Index) Lookup(ctx context.Context, collection, rawURL string) (Stored, error) {
	id := DocID(collection, rawURL)
	var st Stored
	p := ix.partOf(id)
	v, err := p.version(p.b.GetInternal, id)
	if err != nil {
		return st, fmt.Errorf("index: lookup: %w", err)
	}
	st.Version = v
	rec, _, err := p.savedFields(id)
	if err != nil {
		return st, fmt.Errorf("index: lookup: %w", err)
	}
	st.Anchor, st.FieldsVersion = rec.anchor, rec.ver
	req := bleve.NewSearchRequest(query.NewDocIDQuery([]string{id}))
	req.Fields = []string{"*"}
	res, err := p.b.SearchInContext(ctx, req)
	if err != nil {
		return st, fmt.Errorf("index: lookup: %w", err)
	}
	if len(res.Hits) == 0 {
		return st, nil
	}
	f := res.Hits[0].Fields
	st.Found = true
	st.URL, st.Collection, st.Title = str(f[FieldURL]), str(f[FieldCollection]), str(f[FieldTitle])
	st.Body, st.MIME, st.Type = str(f[FieldBody]), str(f[FieldMIME]), str(f[FieldType])
	st.Site, st.Language = str(f[FieldSite]), str(f[FieldLang])
	st.Modified = date(f[FieldModified])
	st.Rank = num(f[FieldRank])
	st.Links, st.Duplicates, st.Redirects = strs(f[FieldLinks]), strs(f[FieldDuplicates]), strs(f[FieldRedirects])
	st.Mirrors = strs(f[FieldMirrors])
	return st, nil
}

// strs returns a stored field of one or more strings.
func strs(v interface{}) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []interface{}:
		out := make([]string, 0, len(x))
		for _, e := range x {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

func str(v interface{}) string {
	s, _ := v.(string)
	return s
}

func num(v interface{}) float64 {
	f, _ := v.(float64)
	return f
}

func date(v interface{}) time.Time {
	s, ok := v.(string)
	if !ok {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t
}
