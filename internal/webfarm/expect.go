package webfarm

import (
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/dlclark/regexp2"
)

// Resource is what the farm answers for a URL, computed without serving.
type Resource struct {
	URL         string
	Status      int
	ContentType string
	// Location is the resolved target of a redirect.
	Location string
	// Links lists the document's links in document order.
	Links []Link
	// Size is the decoded body size.
	Size int64
	// NoIndex and NoFollow reflect a robots META tag.
	NoIndex, NoFollow bool
	// ETag and LastModified are the validators ("" and zero when none).
	ETag         string
	LastModified time.Time
	// RetryAfter is the Retry-After of a 503, in seconds.
	RetryAfter int
	// Slow and Stalled mark the slow and the stalled responses.
	Slow, Stalled bool
	// Body is the decoded body; for the large page only its first part
	// (up to and including the first link) is kept.
	Body []byte
}

// Describe returns what the farm serves for rawURL in refresh cycle cycle.
func (f *Farm) Describe(rawURL string, cycle int) (Resource, error) {
	h, path, query, err := f.split(rawURL)
	if err != nil {
		return Resource{}, err
	}
	return f.describe(h, path, query, cycle), nil
}

// split parses a farm URL into host index, path and query.
func (f *Farm) split(rawURL string) (int, string, string, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return 0, "", "", fmt.Errorf("webfarm: %w", err)
	}
	if u.Scheme != "http" {
		return 0, "", "", fmt.Errorf("webfarm: %q is not an http URL", rawURL)
	}
	h, ok := f.byName[lowerASCII(u.Hostname())]
	port := u.Port()
	if port == "" {
		port = "80"
	}
	if !ok || port != strconv.Itoa(f.Port()) {
		return 0, "", "", fmt.Errorf("webfarm: %q is not on the farm", rawURL)
	}
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	return h, path, u.RawQuery, nil
}

func (f *Farm) describe(h int, path, query string, cycle int) Resource {
	g := &gen{}
	g.reset(f, h, true)
	rs := f.resolve(h, path, query, cycle)
	d := f.render(g, &rs)
	full := (*f.prefix.Load())[h] + path
	if query != "" {
		full += "?" + query
	}
	r := Resource{
		URL: full, Status: d.status, ContentType: d.ctype, Location: d.locURL,
		Links: g.links, Size: int64(len(g.buf)), NoIndex: d.noindex, NoFollow: d.nofollow,
		RetryAfter: d.retryAfter, Slow: rs.kind == rSlow, Stalled: rs.kind == rStall,
		Body: g.buf,
	}
	if rs.kind == rStall {
		r.Size = stallLength
	}
	if rs.kind == rBig && d.status == 200 {
		r.Size = d.size
		g.buf = nil
		g.links = nil
		f.bigTail(g)
		off := d.size - int64(len(g.buf))
		for _, l := range g.links {
			l.End += off
			r.Links = append(r.Links, l)
		}
	}
	if d.status == 200 && d.version >= 0 {
		r.ETag = f.etag(h, path, query, d.version)
		r.LastModified = f.lastModified(h, path, d.version)
	}
	return r
}

// Rules are MS-FSCCFG include/exclude rules (sections 2.2.4.1-2.2.4.4):
// a name or URI matches when it equals an Exact entry, starts with a
// Prefix, ends with a Suffix, or contains a match of a Regexp (.NET
// syntax, unanchored). Domain rules compare host names case-insensitively;
// URI rules compare the normalized URI as is. Empty include rules match
// everything; empty exclude rules match nothing.
type Rules struct {
	Exact, Prefix, Suffix, Regexp []string
}

func (r Rules) empty() bool {
	return len(r.Exact)+len(r.Prefix)+len(r.Suffix)+len(r.Regexp) == 0
}

type compiledRules struct {
	r    Rules
	fold bool
	res  []*regexp2.Regexp
}

func compileRules(r Rules, fold bool) (*compiledRules, error) {
	c := &compiledRules{r: r, fold: fold}
	for _, e := range r.Regexp {
		opt := regexp2.None
		if fold {
			opt = regexp2.IgnoreCase
		}
		re, err := regexp2.Compile(e, opt)
		if err != nil {
			return nil, fmt.Errorf("webfarm: rule regexp %q: %w", e, err)
		}
		c.res = append(c.res, re)
	}
	return c, nil
}

func (c *compiledRules) match(s string) bool {
	norm := func(x string) string {
		if c.fold {
			return strings.ToLower(x)
		}
		return x
	}
	s = norm(s)
	for _, e := range c.r.Exact {
		if s == norm(e) {
			return true
		}
	}
	for _, e := range c.r.Prefix {
		if strings.HasPrefix(s, norm(e)) {
			return true
		}
	}
	for _, e := range c.r.Suffix {
		if strings.HasSuffix(s, norm(e)) {
			return true
		}
	}
	for _, re := range c.res {
		if ok, err := re.MatchString(s); err == nil && ok {
			return true
		}
	}
	return false
}

// Crawl holds the crawl behaviours that decide which URLs of the farm a
// correct crawler fetches. Field comments name the MS-FSCCFG parameter.
type Crawl struct {
	// StartURLs (start_uris) are fetched at depth 0.
	StartURLs []string
	// Cycle is the farm's refresh cycle during the crawl (the crawl is a
	// "scratch" refresh: the crawler starts again from the start URIs).
	Cycle int
	// IncludeDomains, ExcludeDomains, IncludeURIs, ExcludeURIs are the
	// include_domains, exclude_domains, include_uris, exclude_uris sections.
	IncludeDomains, ExcludeDomains, IncludeURIs, ExcludeURIs Rules
	// ExcludeExts (exclude_exts): a URL whose path ends, ignoring case,
	// with one of these is not fetched.
	ExcludeExts []string
	// AllowedTypes (allowed_types) and URISearchMIME (uri_search_mime):
	// links are extracted only from documents whose media type matches
	// both ("*" allowed for a whole field).
	AllowedTypes, URISearchMIME []string
	// LinkKinds (link_extraction): the kinds of links followed.
	LinkKinds LinkKinds
	// Robots (robots): obey robots.txt. RobotsAuthIgnore
	// (robots_auth_ignore): a 401/403 robots.txt allows everything
	// (otherwise nothing). UserAgent is the product token matched against
	// User-agent lines.
	Robots           bool
	RobotsAuthIgnore bool
	UserAgent        string
	// UseSitemaps (use_sitemaps): read the Sitemap: lines of robots.txt
	// and follow the sitemaps' URLs.
	UseSitemaps bool
	// CheckMetaRobots (check_meta_robots): do not follow the links of a
	// page with a robots META "nofollow" (noindex pages are still fetched
	// and their links followed).
	CheckMetaRobots bool
	// MaxRedirects (max_redirects): a URL reached through more than this
	// many consecutive redirects is not fetched.
	MaxRedirects int
	// HTMLRedirIsRedir (html_redir_is_redir) and HTMLRedirThreshold
	// (hmtl_redir_threshold): a meta refresh with a delay <= threshold is a
	// redirect.
	HTMLRedirIsRedir   bool
	HTMLRedirThreshold int
	// MaxDepth is crawlmode mode DEPTH:n (n), or -1 for FULL.
	MaxDepth int
	// FwdLinks, FwdRedirects, ResetLevel are crawlmode's fwdlinks,
	// fwdredirects and reset_level. "Another domain" means another host name.
	FwdLinks, FwdRedirects, ResetLevel bool
	// MaxURIRecursion (max_uri_recursion): a URL whose path repeats a run
	// of segments more than this many times in a row is not fetched
	// (negative: no limit). See URIRecursion.
	MaxURIRecursion int
	// MaxURILength, when > 0, drops URLs longer than this (no MS-FSCCFG
	// parameter; a crawler's own URL length cap).
	MaxURILength int
	// CutOff (cut_off, 0 = none) and Truncate (truncate): a document
	// larger than CutOff is truncated to CutOff bytes (links ending past
	// it are lost) or, without Truncate, discarded (no links).
	CutOff   int64
	Truncate bool
	// SortQueryParams (sort_query_params): sort query parameters by key.
	SortQueryParams bool
	// MaxDoc (max_doc, per site; 0 = none). If a site has more URLs to
	// fetch than this, which ones a crawler fetches depends on its order:
	// Expect fails with ErrOrderDependent.
	MaxDoc int
	// Limit stops Expect with ErrUnbounded when more URLs than this would
	// be fetched (a trap not bounded by the crawl). Default 5,000,000.
	Limit int
}

// ErrUnbounded reports a crawl that a trap makes (practically) infinite.
var ErrUnbounded = errors.New("webfarm: crawl is unbounded")

// ErrOrderDependent reports a crawl whose fetched set depends on order.
var ErrOrderDependent = errors.New("webfarm: max_doc binds, the fetched set depends on crawl order")

// DefaultExcludeExts is MS-FSCCFG's default exclude_exts.
var DefaultExcludeExts = strings.Split(".jpg,.jpeg,.ico,.tif,.png,.bmp,.gif,.wmf,.avi,.mpg,.wmv,.wma,.ram,.asx,.ASF,.mp3,.wav,.ogg,.ra,.aac,.m4a,.zip,.gz,.vmarc,.z,.tar,.iso,.img,.rpm,.cab,.rar,.ace,.hqx,.swf,.exe,.java,.jar,.prz,.wrl,.midr,.css,.ps,.ttf,.mso,.dvi", ",")

// DefaultAllowedTypes is MS-FSCCFG's default allowed_types.
var DefaultAllowedTypes = []string{"text/html", "text/plain", "application/msword", "application/msexcel", "application/pt", "application/pdf"}

// DefaultURISearchMIME is MS-FSCCFG's default uri_search_mime.
var DefaultURISearchMIME = []string{"text/html", "text/vnd.wap.xml", "text/wml", "text/x-wap.wml", "x-application/wml", "text/x-hdml"}

// DefaultCrawl is the crawl --expect and --write-config describe: the
// MS-FSCCFG defaults, the farm's home pages as start URIs, the farm's
// domain as the only included domain, and the calendar trap bounded to
// the year of Config.CalendarStart by an exclude_uris regexp.
func (f *Farm) DefaultCrawl() Crawl {
	return Crawl{
		StartURLs:          f.StartURLs(),
		Cycle:              f.Cycle(),
		IncludeDomains:     Rules{Suffix: []string{"." + f.cfg.Domain}},
		ExcludeURIs:        Rules{Regexp: []string{CalendarExclude(f.cfg.CalendarStart.Year())}},
		ExcludeExts:        append([]string(nil), DefaultExcludeExts...),
		AllowedTypes:       append([]string(nil), DefaultAllowedTypes...),
		URISearchMIME:      append([]string(nil), DefaultURISearchMIME...),
		LinkKinds:          DefaultLinkKinds,
		Robots:             true,
		RobotsAuthIgnore:   true,
		UserAgent:          f.cfg.RobotsAgent,
		CheckMetaRobots:    true,
		MaxRedirects:       10,
		HTMLRedirIsRedir:   true,
		HTMLRedirThreshold: 3,
		MaxDepth:           -1,
		FwdLinks:           true,
		FwdRedirects:       false,
		ResetLevel:         true,
		MaxURIRecursion:    5,
		Truncate:           true,
		MaxDoc:             100000,
	}
}

// CalendarExclude returns a regexp (valid in .NET and RE2 syntax) matching
// calendar URLs of every year but year (1..9999).
func CalendarExclude(year int) string {
	y := string(append4(nil, year))
	alts := make([]string, 0, 4)
	for i := 0; i < 4; i++ {
		alts = append(alts, y[:i]+"[^"+y[i:i+1]+"]")
	}
	return "/cal/(" + strings.Join(alts, "|") + ")"
}

// URIRecursion returns the largest number of times a run of one or more
// path segments repeats back to back in the path of rawURL ("/a/b/a/b/c"
// gives 2, "/deep/more/more/more/" 3, a path without repetition 1). Empty
// segments and the query are ignored.
func URIRecursion(rawURL string) int {
	p := rawURL
	if i := strings.Index(p, "://"); i >= 0 {
		p = p[i+3:]
		if j := strings.IndexByte(p, '/'); j >= 0 {
			p = p[j:]
		} else {
			p = "/"
		}
	}
	if i := strings.IndexAny(p, "?#"); i >= 0 {
		p = p[:i]
	}
	var segs []string
	for _, s := range strings.Split(p, "/") {
		if s != "" {
			segs = append(segs, s)
		}
	}
	best := 1
	if len(segs) == 0 {
		return 1
	}
	for l := 1; l*2 <= len(segs); l++ {
		for i := 0; i+2*l <= len(segs); i++ {
			reps := 1
			for j := i + l; j+l <= len(segs) && equalSegs(segs[i:i+l], segs[j:j+l]); j += l {
				reps++
			}
			best = max(best, reps)
		}
	}
	return best
}

func equalSegs(a, b []string) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// SortQuery sorts the '&'-separated parameters of rawURL's query by key
// (the text before '='), keeping the order of equal keys, as
// sort_query_params asks.
func SortQuery(rawURL string) string {
	i := strings.IndexByte(rawURL, '?')
	if i < 0 {
		return rawURL
	}
	params := strings.Split(rawURL[i+1:], "&")
	key := func(p string) string { k, _, _ := strings.Cut(p, "="); return k }
	sort.SliceStable(params, func(a, b int) bool { return key(params[a]) < key(params[b]) })
	return rawURL[:i+1] + strings.Join(params, "&")
}

// mimeMatch matches a media type against patterns with whole-field "*".
func mimeMatch(ct string, patterns []string) bool {
	mt, _, _ := strings.Cut(ct, ";")
	mt = strings.ToLower(strings.TrimSpace(mt))
	typ, sub, _ := strings.Cut(mt, "/")
	for _, p := range patterns {
		pt, ps, _ := strings.Cut(strings.ToLower(strings.TrimSpace(p)), "/")
		if (pt == "*" || pt == typ) && (ps == "*" || ps == sub) {
			return true
		}
	}
	return false
}
