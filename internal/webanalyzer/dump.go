package webanalyzer

import (
	"bufio"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/trawl/trawl/internal/extract"
	"github.com/trawl/trawl/internal/store"
	"github.com/trawl/trawl/internal/urls"
)

// The input tables a link dump writes (layouts in the package comment).
const (
	TableLinks   = "links"
	TableNoLinks = "no_links"
	TableURIMap  = "urimap"
	TableSiteMap = "sitemap"
	TableURIEq   = "urieq"
	TableEqRepr  = "eqrepr"
	TableDelete  = "delete"
)

// InputTables lists the dump's tables in a fixed order.
var InputTables = []string{TableLinks, TableNoLinks, TableURIMap, TableSiteMap, TableURIEq, TableEqRepr, TableDelete}

// StampFile is the file of a dump directory holding the dump's time (Unix
// nanoseconds): the next incremental dump takes records fetched after it.
const StampFile = "stamp"

// URLHash is the key of a URL in every table: the first 8 bytes of the MD5
// of the URL, in 16 lowercase hexadecimal digits.
func URLHash(u string) string {
	h := md5.Sum([]byte(u))
	return hex.EncodeToString(h[:8])
}

// EncodeText makes free text (anchor text, URLs in lists) one field: the
// query escaping of net/url (SP becomes '+'), "-" for the empty text.
func EncodeText(s string) string {
	if s == "" {
		return "-"
	}
	return url.QueryEscape(s)
}

// DecodeText is EncodeText's inverse.
func DecodeText(s string) string {
	if s == "-" {
		return ""
	}
	d, err := url.QueryUnescape(s)
	if err != nil {
		return s
	}
	return d
}

// Stamp formats a time as a TIMESTAMP field: Unix nanoseconds, 19 digits.
func Stamp(t time.Time) string { return fmt.Sprintf("%019d", t.UnixNano()) }

// DumpOptions configure a link dump.
type DumpOptions struct {
	Collection string
	// Since, when not zero, dumps only the records whose last fetch (or
	// first sighting) is after it: an incremental dump.
	Since time.Time
	// Now is the dump's time, written to StampFile.
	Now time.Time
}

// DumpStats counts what a dump wrote.
type DumpStats struct {
	Collection                                         string
	Pages, Links, NoLinks, Equivalences, Deletes, URLs int
}

// Dump writes the input tables of collection's link graph from a crawl
// store into dir (created if missing). Each table is written under a
// temporary name and renamed when complete.
func Dump(st *store.Store, dir string, o DumpOptions) (DumpStats, error) {
	var ds DumpStats
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return ds, fmt.Errorf("webanalyzer: %w", err)
	}
	w := map[string]*tableWriter{}
	for _, t := range InputTables {
		tw, err := newTableWriter(filepath.Join(dir, t))
		if err != nil {
			return ds, err
		}
		defer tw.abort()
		w[t] = tw
	}
	seen := map[string]bool{}
	known := func(u, site string) {
		h := URLHash(u)
		if seen[h] {
			return
		}
		seen[h] = true
		ds.URLs++
		w[TableURIMap].rec(h, u)
		w[TableSiteMap].rec(h, site)
	}
	classes := map[string][]string{} // representative -> members
	norm := urls.Normalizer{MaxLength: urls.DefaultMaxLength}
	err := st.URIs(o.Collection, "", func(r *store.URIRecord) error {
		t := r.LastFetched
		if t.IsZero() {
			t = r.FirstSeen
		}
		if !o.Since.IsZero() && !t.After(o.Since) {
			return nil
		}
		ts := Stamp(t)
		h := URLHash(r.URI)
		switch r.Status {
		case store.StatusFetched, store.StatusNotModified:
			body, ok, err := st.Document(o.Collection, r.URI)
			if err != nil || !ok {
				return err
			}
			known(r.URI, r.Site)
			ds.Pages++
			n := 0
			for _, l := range pageLinks(norm, r, body) {
				known(l.to, l.site)
				intra := "0"
				if l.site == r.Site {
					intra = "1"
				}
				w[TableLinks].rec(h, URLHash(l.to), intra, ts, EncodeText(l.anchor))
				n++
			}
			ds.Links += n
			if n == 0 {
				w[TableNoLinks].rec(h, ts, r.URI)
				ds.NoLinks++
			}
		case store.StatusDuplicate, store.StatusRedirect:
			repr := r.Owner
			if r.Status == store.StatusRedirect {
				var err error
				if repr, err = norm.NormalizeString(r.Location, r.URI); err != nil {
					return nil
				}
			}
			if repr == "" || repr == r.URI {
				return nil
			}
			known(r.URI, r.Site)
			if u, err := url.Parse(repr); err == nil {
				known(repr, urls.Site(u))
			}
			w[TableURIEq].rec(URLHash(repr), h, ts)
			classes[repr] = append(classes[repr], r.URI)
			ds.Equivalences++
		case store.StatusDeleted:
			w[TableDelete].rec(h, ts)
			ds.Deletes++
		}
		return nil
	})
	if err != nil {
		return ds, fmt.Errorf("webanalyzer: dump: %w", err)
	}
	reprs := make([]string, 0, len(classes))
	for r := range classes {
		reprs = append(reprs, r)
	}
	sort.Strings(reprs)
	ts := Stamp(o.Now)
	for _, r := range reprs {
		m := classes[r]
		sort.Strings(m)
		enc := make([]string, len(m))
		for i, u := range m {
			enc[i] = url.QueryEscape(u)
		}
		w[TableEqRepr].rec(URLHash(r), ts, r, strings.Join(enc, ","))
	}
	for _, t := range InputTables {
		if err := w[t].close(); err != nil {
			return ds, err
		}
	}
	stamp := strconv.FormatInt(o.Now.UnixNano(), 10) + "\n"
	if err := os.WriteFile(filepath.Join(dir, StampFile), []byte(stamp), 0o644); err != nil {
		return ds, fmt.Errorf("webanalyzer: %w", err)
	}
	return ds, nil
}

// ReadStamp returns the time a dump directory's StampFile holds.
func ReadStamp(dir string) (time.Time, error) {
	b, err := os.ReadFile(filepath.Join(dir, StampFile))
	if err != nil {
		return time.Time{}, fmt.Errorf("webanalyzer: %w", err)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("webanalyzer: %s: %w", StampFile, err)
	}
	return time.Unix(0, n), nil
}

type pageLink struct{ to, site, anchor string }

// pageLinks extracts a page's links as the crawl follows them: resolved,
// normalized, without fragments, each target once (the first anchor text
// wins), anchors only (no images, scripts or style sheets).
func pageLinks(norm urls.Normalizer, r *store.URIRecord, body []byte) []pageLink {
	ct := strings.ToLower(r.ContentType)
	if ct != "" && !strings.Contains(ct, "html") && !strings.Contains(ct, "wml") {
		return nil
	}
	base, err := url.Parse(r.URI)
	if err != nil {
		return nil
	}
	res := extract.Extract(body, extract.Options{ContentType: r.ContentType})
	if res.Robots.NoFollow {
		return nil
	}
	var out []pageLink
	seen := map[string]bool{}
	for _, l := range res.Links {
		if l.Kind != extract.KindA && l.Kind != extract.KindArea || l.NoFollow {
			continue
		}
		t, err := res.Resolve(base, l.URL)
		if err != nil || (t.Scheme != "http" && t.Scheme != "https") {
			continue
		}
		nu, err := norm.Normalize(t.String(), nil)
		if err != nil {
			continue
		}
		s := nu.String()
		if seen[s] {
			continue
		}
		seen[s] = true
		out = append(out, pageLink{to: s, site: urls.Site(nu), anchor: l.Anchor})
	}
	return out
}

// tableWriter writes one table file under a temporary name.
type tableWriter struct {
	path string
	f    *os.File
	b    *bufio.Writer
	err  error
}

func newTableWriter(path string) (*tableWriter, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return nil, fmt.Errorf("webanalyzer: %w", err)
	}
	return &tableWriter{path: path, f: f, b: bufio.NewWriterSize(f, 64<<10)}, nil
}

func (t *tableWriter) rec(fields ...string) {
	for i, f := range fields {
		if i > 0 {
			t.b.WriteByte(' ')
		}
		t.b.WriteString(f)
	}
	if err := t.b.WriteByte('\n'); err != nil && t.err == nil {
		t.err = err
	}
}

func (t *tableWriter) close() error {
	if t.f == nil {
		return t.err
	}
	err := t.err
	if e := t.b.Flush(); err == nil {
		err = e
	}
	if e := t.f.Close(); err == nil {
		err = e
	}
	if err == nil {
		err = os.Rename(t.f.Name(), t.path)
	}
	if err != nil {
		os.Remove(t.f.Name())
		err = fmt.Errorf("webanalyzer: %s: %w", t.path, err)
	}
	t.f = nil
	return err
}

func (t *tableWriter) abort() {
	if t.f != nil {
		t.f.Close()
		os.Remove(t.f.Name())
		t.f = nil
	}
}
