package extract

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/html/charset"
)

// SitemapFormat is the format a sitemap turned out to be.
type SitemapFormat int

// The sitemap formats.
const (
	FormatURLSet       SitemapFormat = iota // sitemaps.org <urlset>
	FormatSitemapIndex                      // sitemaps.org <sitemapindex>
	FormatText                              // one URL per line
	FormatRSS                               // RSS 2.0 or RSS 1.0 (RDF)
	FormatAtom                              // Atom <feed>
)

func (f SitemapFormat) String() string {
	return [...]string{"urlset", "sitemapindex", "text", "rss", "atom"}[f]
}

// SitemapURL is one entry of a sitemap or feed.
type SitemapURL struct {
	Loc        string
	LastMod    time.Time // zero when absent or unparseable
	ChangeFreq string    // lower case: always, hourly, daily, weekly, monthly, yearly, never
	Priority   float64   // 0..1; -1 when absent
}

// Sitemap is a parsed sitemap: URLs for a urlset, text sitemap or feed;
// Sitemaps for a sitemap index.
type Sitemap struct {
	Format    SitemapFormat
	URLs      []SitemapURL
	Sitemaps  []SitemapURL
	Truncated bool // MaxURLs or MaxBytes was reached
}

// SitemapOptions cap sitemap parsing. The defaults are the limits of the
// sitemaps.org protocol: 50,000 URLs and 50 MiB uncompressed.
type SitemapOptions struct {
	MaxURLs  int
	MaxBytes int64
}

const maxValueBytes = 8 << 10

// ParseSitemap parses an XML sitemap or sitemap index, a text sitemap, an
// RSS or Atom feed, gzip-compressed or not. Namespaces are not checked
// (elements are matched by local name) and external entities are never
// resolved. On malformed XML it returns what it read before the error,
// and the error.
func ParseSitemap(body []byte, o SitemapOptions) (*Sitemap, error) {
	if o.MaxURLs <= 0 {
		o.MaxURLs = 50000
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = 50 << 20
	}
	sm := &Sitemap{}
	if len(body) >= 2 && body[0] == 0x1f && body[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			return sm, fmt.Errorf("extract: sitemap: %w", err)
		}
		b, err := io.ReadAll(io.LimitReader(zr, o.MaxBytes+1))
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
			return sm, fmt.Errorf("extract: sitemap: %w", err)
		}
		body = b
	}
	if int64(len(body)) > o.MaxBytes {
		body = body[:o.MaxBytes]
		sm.Truncated = true
	}
	body = bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))
	if t := bytes.TrimLeft(body, " \t\r\n"); len(t) > 0 && t[0] == '<' {
		return sm, parseXMLSitemap(t, sm, o)
	}
	sm.Format = FormatText
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || len(line) > 4096 {
			continue
		}
		if u, err := url.Parse(line); err != nil || !u.IsAbs() || u.Host == "" {
			continue
		}
		if len(sm.URLs) >= o.MaxURLs {
			sm.Truncated = true
			break
		}
		sm.URLs = append(sm.URLs, SitemapURL{Loc: line, Priority: -1})
	}
	return sm, nil
}

type smState struct {
	sm      *Sitemap
	o       SitemapOptions
	entry   *SitemapURL // the open url / sitemap / item / entry
	entryEl string
	depth   int // depth of the open entry element
	field   string
	text    []byte // character data of the current field
	direct  []byte // character data directly inside the entry
	hasLoc  bool
}

func parseXMLSitemap(body []byte, sm *Sitemap, o SitemapOptions) error {
	d := xml.NewDecoder(bytes.NewReader(body))
	d.Strict = true
	d.CharsetReader = charset.NewReaderLabel
	st := &smState{sm: sm, o: o}
	depth := 0
	rootSeen := false
	for {
		tok, err := d.Token()
		if err == io.EOF {
			st.closeEntry()
			if !rootSeen {
				return errors.New("extract: sitemap: no root element")
			}
			return nil
		}
		if err != nil {
			st.closeEntry()
			return fmt.Errorf("extract: sitemap: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			name := strings.ToLower(t.Name.Local)
			if !rootSeen {
				rootSeen = true
				switch name {
				case "urlset":
					sm.Format = FormatURLSet
				case "sitemapindex":
					sm.Format = FormatSitemapIndex
				case "rss", "rdf":
					sm.Format = FormatRSS
				case "feed":
					sm.Format = FormatAtom
				default:
					return fmt.Errorf("extract: sitemap: unknown root element <%s>", t.Name.Local)
				}
				continue
			}
			if st.entry == nil {
				if st.isEntry(name) {
					st.entry = &SitemapURL{Priority: -1}
					st.entryEl, st.depth = name, depth
					st.direct, st.hasLoc = st.direct[:0], false
					if sm.Format == FormatRSS {
						for _, a := range t.Attr {
							if a.Name.Local == "about" {
								st.entry.Loc = strings.TrimSpace(a.Value)
							}
						}
					}
				}
				continue
			}
			if depth == st.depth+1 {
				st.field, st.text = name, st.text[:0]
				if sm.Format == FormatAtom && name == "link" && !st.hasLoc {
					var href, rel string
					for _, a := range t.Attr {
						switch a.Name.Local {
						case "href":
							href = a.Value
						case "rel":
							rel = a.Value
						}
					}
					if href != "" && (rel == "" || rel == "alternate") {
						st.entry.Loc, st.hasLoc = strings.TrimSpace(href), true
					}
				}
			}
		case xml.EndElement:
			if st.entry != nil {
				if depth == st.depth {
					st.closeEntry()
				} else if depth == st.depth+1 {
					st.endField()
				}
			}
			depth--
			if len(sm.URLs)+len(sm.Sitemaps) >= o.MaxURLs {
				sm.Truncated = true
				return nil
			}
		case xml.CharData:
			if st.entry == nil {
				continue
			}
			switch depth {
			case st.depth:
				if len(st.direct) < maxValueBytes {
					st.direct = append(st.direct, t...)
				}
			case st.depth + 1:
				if len(st.text) < maxValueBytes {
					st.text = append(st.text, t...)
				}
			}
		}
	}
}

func (st *smState) isEntry(name string) bool {
	switch st.sm.Format {
	case FormatURLSet:
		return name == "url"
	case FormatSitemapIndex:
		return name == "sitemap"
	case FormatRSS:
		return name == "item"
	case FormatAtom:
		return name == "entry"
	}
	return false
}

func (st *smState) endField() {
	v := strings.TrimSpace(string(st.text))
	e := st.entry
	switch st.sm.Format {
	case FormatURLSet, FormatSitemapIndex:
		switch st.field {
		case "loc":
			e.Loc, st.hasLoc = v, true
		case "lastmod":
			e.LastMod = parseDate(v)
		case "changefreq":
			e.ChangeFreq = strings.ToLower(v)
		case "priority":
			if p, err := strconv.ParseFloat(v, 64); err == nil && p >= 0 && p <= 1 {
				e.Priority = p
			}
		}
	case FormatRSS:
		switch st.field {
		case "link":
			if v != "" {
				e.Loc, st.hasLoc = v, true
			}
		case "guid":
			if !st.hasLoc && (strings.HasPrefix(v, "http://") || strings.HasPrefix(v, "https://")) {
				e.Loc = v
			}
		case "pubdate", "date":
			e.LastMod = parseDate(v)
		}
	case FormatAtom:
		switch st.field {
		case "updated", "published":
			if e.LastMod.IsZero() || st.field == "updated" {
				e.LastMod = parseDate(v)
			}
		}
	}
	st.field = ""
}

func (st *smState) closeEntry() {
	e := st.entry
	if e == nil {
		return
	}
	st.entry = nil
	if e.Loc == "" {
		// <sitemap>http://...</sitemap> without <loc>, as some sites write.
		e.Loc = strings.TrimSpace(string(st.direct))
	}
	if e.Loc == "" || len(e.Loc) > 4096 {
		return
	}
	if st.sm.Format == FormatSitemapIndex {
		st.sm.Sitemaps = append(st.sm.Sitemaps, *e)
	} else {
		st.sm.URLs = append(st.sm.URLs, *e)
	}
}

var dateLayouts = []string{
	time.RFC3339Nano, "2006-01-02T15:04:05Z0700", "2006-01-02T15:04Z07:00", "2006-01-02T15:04:05",
	"2006-01-02T15:04", "2006-01-02", "2006-01", "2006",
	time.RFC1123Z, time.RFC1123, "Mon, 2 Jan 2006 15:04:05 -0700", "Mon, 2 Jan 2006 15:04:05 MST",
	"Mon, 02 Jan 06 15:04:05 -0700", "02 Jan 2006 15:04:05 -0700", "02 Jan 06 15:04:05 -0700",
	"Mon, 02 Jan 2006 15:04:05 GMT", time.RFC822Z, time.RFC822,
}

// parseDate reads W3C datetimes (sitemaps, Atom) and RFC 822 dates (RSS).
func parseDate(s string) time.Time {
	s = strings.TrimSpace(s)
	for _, l := range dateLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t.UTC()
		}
	}
	return time.Time{}
}
