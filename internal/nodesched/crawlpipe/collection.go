package crawlpipe

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/config"
	"github.com/trawl/trawl/internal/crawllog"
	"github.com/trawl/trawl/internal/extract"
	"github.com/trawl/trawl/internal/fetch"
	"github.com/trawl/trawl/internal/filter"
	"github.com/trawl/trawl/internal/frontier"
	"github.com/trawl/trawl/internal/robots"
	"github.com/trawl/trawl/internal/urls"
	"github.com/trawl/trawl/internal/warc"
)

// Settings is everything the crawl pipeline takes from one collection's
// effective configuration (the collection with this node's Node element
// applied), compiled once per CMD_ADM_CONF_ADD/UPDATE. Workers only read it.
type Settings struct {
	Name   string
	Config *config.Collection
	Eff    *config.Effective
	// Sub names the crawl subcollection these settings are of ("" for the
	// collection's); Subs are the collection's subcollections in document
	// order (For picks one per URI).
	Sub  string
	Subs []*SubSettings
	// root is the collection's Settings when these are a subcollection's
	// (nil for the collection's own), so that For answers from either.
	root *Settings

	Filter         *filter.Filter
	Normalizer     urls.Normalizer
	ExcludeExts    urls.ExtSet
	AllowedSchemes []string
	MaxRecursion   int // max_uri_recursion (0: off)

	Depth                              int // crawlmode DEPTH:n; -1 FULL
	FwdLinks, FwdRedirects, ResetLevel bool
	MaxRedirects                       int
	HTMLRedirIsRedir                   bool
	HTMLRedirThresh                    float64
	CheckMetaRobots                    bool
	Kinds                              extract.KindSet
	AllowedTypes, URISearchMIME        []string
	ExtractLinksFromDupes              bool
	NearDuplicates                     bool           // near_duplicate_detection: band keys (extract.NearKeys) instead of the exact checksum decide duplicates
	Access                             *Access        // cookies, credentials, proxies, client certificate, FTP, logins (access.go)
	Feeds                              *Feeds         // sitemaps and RSS (extras.go)
	Score                              *adaptiveScore // adaptive refresh ranking (sitemaps.go)
	JS                                 *JavaScript    // use_javascript (javascript.go)
	Opt                                *CrawlOptions  // variable_delay, mirrors, focused, send_links_to (options.go)

	FetchOptions    fetch.Options
	Fetcher         *fetch.Fetcher
	Robots          bool // obey robots.txt
	FetchRobots     bool // fetch robots.txt (robots or use_sitemaps)
	RobotsCache     *robots.Cache
	robotsOpts      robots.CacheOptions
	ObeyRobotsDelay bool
	UseSitemaps     bool
	AgentToken      string
	Delay           time.Duration
	EnforceDelayIP  bool
	IfModifiedSince bool

	UseDupServers bool
	// DSPaused is pp/ds_paused: every content destination starts paused
	// (an administrator resumes them with CollectionResumeFeeding).
	DSPaused bool
	// DSSendLinks is pp/ds_send_links: every document is fed with the
	// hyperlinks extracted from it (feed.Operation.Links).
	DSSendLinks bool
	// Reporting is pp/ds_meta_info, ds_max_ecl, max_dupes and
	// ecl_override: what a document is fed with (reported.go).
	Reporting   Reporting
	UseMetaCsum bool
	CsumCutOff  int
	HTTPErrors  config.ErrorPolicy

	StartURIs []string
	PPDup     cmt.Collection // the ppdup section only, for PPDUP_SET_CONFIG
	Frontier  frontier.Config

	Storage *StorageSettings // diffcheck, storage and limits (storage.go, limits.go)
	// WARC writes what is fetched to WARC files (the warc section or
	// trawl run --warc; warc.go); nil when off.
	WARC *warc.Writer

	// Logs are the formats of the log section; UMLogs sends the logs
	// that have a CMD_UM_LOG code to the multinode scheduler (crawllog.go).
	Logs   crawllog.Formats
	UMLogs bool
}

// Env is what compiling settings needs from the outside world: the dialer the
// fetchers use (so DNS comes from the multinode scheduler), a shared
// transport, and the clock of the robots cache.
type Env struct {
	Dial      func(ctx context.Context, network, addr string) (net.Conn, error)
	Transport *http.Transport
	Now       func() time.Time
	NodeID    string
	// Key decrypts "!ENC!" passwords (passwd, proxy, ftp_acct, login
	// parameters); nil when the node has no key file.
	Key *config.Key
	// TLSConfig is the base TLS configuration of collections with a client
	// certificate (nil: the system roots).
	TLSConfig *tls.Config
	// WARC returns the WARC writer of a collection's warc section (nil
	// when it is off); nil: no WARC writing on this node.
	WARC func(config.WarcSection) (*warc.Writer, error)
}

// SubSettings is a crawl subcollection (SubDomain, MS-FSCCFG 2.2.4.33 and
// 2.2.5) compiled: the URIs its own include and exclude rules contain are
// crawled with its Settings (the subcollection's parameters over the
// collection's; the Node element still wins).
type SubSettings struct {
	// URIs matches a URI against all four rule sets of the subcollection;
	// Sites matches a site against its domain rules only (nil when it has
	// none), for what is decided per site: max_doc, which the spec exempts
	// from include_uris and exclude_uris, and the frontier's delay.
	URIs, Sites *filter.Filter
	*Settings
}

// For returns the settings of uri: those of the first subcollection (in
// document order) whose rules contain it, else the collection's (also
// when s is a subcollection's).
func (s *Settings) For(uri string) *Settings {
	if s.root != nil {
		s = s.root
	}
	for _, sub := range s.Subs {
		if ok, _ := sub.URIs.Allowed(uri, netip.Addr{}); ok {
			return sub.Settings
		}
	}
	return s
}

// jsFor is use_javascript for site: that of the first subcollection whose
// domain rules allow the site, else the collection's. Like max_doc it is
// decided per site: MS-FSCCFG 2.2.4.33 exempts use_javascript from
// include_uris and exclude_uris (docs/decisions/subcollections.md).
func (s *Settings) jsFor(site string) *JavaScript {
	if s.root != nil {
		s = s.root
	}
	for _, sub := range s.Subs {
		if sub.Sites != nil && sub.siteCovered(site) {
			return sub.JS
		}
	}
	return s.JS
}

// Compile builds the Settings of collection c for node env.NodeID, with
// those of its subcollections.
func Compile(c *config.Collection, env Env) (*Settings, error) {
	s, err := compileEff(c, c.Effective("", env.NodeID), env)
	if err != nil {
		return nil, err
	}
	if len(c.SubCollections) == 0 {
		return s, nil
	}
	seen := map[string]bool{}
	for _, u := range s.StartURIs {
		seen[u] = true
	}
	for _, sc := range c.SubCollections {
		sub, err := compileEff(c, c.Effective(sc.Name, env.NodeID), env)
		if err != nil {
			return nil, fmt.Errorf("%w (subcollection %s)", err, sc.Name)
		}
		sub.Sub = sc.Name // its own robots.txt cache: fetched with its headers
		sub.root = s
		scope := c.SubScope(sc)
		ss := &SubSettings{Settings: sub}
		if ss.URIs, err = scope.Filter(); err != nil {
			return nil, fmt.Errorf("nodesched: collection %s: subcollection %s: %w", c.Name, sc.Name, err)
		}
		if scope.IncludeDomains.Present || scope.ExcludeDomains.Present {
			scope.IncludeURIs, scope.ExcludeURIs = config.RuleSet{}, config.RuleSet{}
			if ss.Sites, err = scope.Filter(); err != nil {
				return nil, fmt.Errorf("nodesched: collection %s: subcollection %s: %w", c.Name, sc.Name, err)
			}
		}
		s.Subs = append(s.Subs, ss)
		// Its own refresh rounds (frontier.SubRefresh): every subcollection
		// is listed, so that an operator can refetch it; those that set a
		// refresh (lower than the collection's) also start rounds of their own.
		fs := frontier.SubRefresh{Name: sc.Name, Mode: sub.Frontier.RefreshMode}
		if r := sc.Get("refresh"); r != nil && r.Value.Real > 0 {
			fs.Period = sub.Frontier.Refresh
		}
		s.Frontier.Subs = append(s.Frontier.Subs, fs)
		for _, u := range sub.StartURIs {
			if !seen[u] {
				seen[u] = true
				s.StartURIs = append(s.StartURIs, u)
			}
		}
		// The frontier keeps the widest depth; the node scheduler applies
		// each subcollection's own (Settings.depthFor).
		if sub.Depth < 0 || s.Frontier.MaxHops < 0 {
			s.Frontier.MaxHops = -1
		} else {
			s.Frontier.MaxHops = max(s.Frontier.MaxHops, sub.Depth)
		}
	}
	s.Frontier.SiteDelay = s.siteDelay
	s.Frontier.SiteMaxDoc = s.siteMaxDoc
	s.Frontier.SubOf = s.SubIndex
	return s, nil
}

// SubIndex is the index in s.Subs of the subcollection For(uri) picks, or
// -1 for the collection's own URIs.
func (s *Settings) SubIndex(uri string) int {
	if s.root != nil {
		s = s.root
	}
	for i, sub := range s.Subs {
		if ok, _ := sub.URIs.Allowed(uri, netip.Addr{}); ok {
			return i
		}
	}
	return -1
}

// siteCovered reports whether a subcollection may hold URIs of site: its
// domain rules allow the site, or it has none.
func (sub *SubSettings) siteCovered(site string) bool {
	if sub.Sites == nil {
		return true
	}
	ok, _ := sub.Sites.Allowed("http://"+site+"/", netip.Addr{})
	return ok
}

// siteDelay is the frontier's delay for site: the smallest delay of the
// collection and of the subcollections that may hold URIs of the site.
// Each request still waits its own URI's delay in the pipeline's pacer.
func (s *Settings) siteDelay(site string) time.Duration {
	d := s.Delay
	for _, sub := range s.Subs {
		if sub.Delay < d && sub.siteCovered(site) {
			d = sub.Delay
		}
	}
	return d
}

// siteMaxDoc is max_doc for site: that of the first subcollection whose
// domain rules allow the site (include_uris and exclude_uris do not count
// for max_doc, MS-FSCCFG 2.2.4.33), else the collection's.
func (s *Settings) siteMaxDoc(site string) int {
	for _, sub := range s.Subs {
		if sub.Sites != nil && sub.siteCovered(site) {
			return sub.Frontier.MaxDoc
		}
	}
	return s.Frontier.MaxDoc
}

// TooDeep reports whether a link of hops is beyond the crawlmode depth of
// the settings its URI falls under (the frontier keeps only the widest).
func (s *Settings) TooDeep(uri string, hops int) bool {
	if len(s.Subs) == 0 {
		return false
	}
	d := s.For(uri).Depth
	return d >= 0 && hops > d
}

// compileEff builds the Settings of c under eff (the collection's or a
// subcollection's layers).
func compileEff(c *config.Collection, eff *config.Effective, env Env) (*Settings, error) {
	s := &Settings{Name: c.Name, Config: c, Eff: eff}
	var err error
	if env.WARC != nil {
		if s.WARC, err = env.WARC(eff.Warc()); err != nil {
			return nil, fmt.Errorf("nodesched: collection %s: warc: %w", c.Name, err)
		}
	}
	if s.Filter, err = eff.Scope().Filter(); err != nil {
		return nil, fmt.Errorf("nodesched: collection %s: %w", c.Name, err)
	}
	var rw *urls.Rewriter
	if rules := eff.RewriteRules(); len(rules) > 0 {
		if rw, err = urls.NewRewriter(rules, urls.DefaultMatchTimeout); err != nil {
			return nil, fmt.Errorf("nodesched: collection %s: rewrite_rules: %w", c.Name, err)
		}
	}
	s.Normalizer = urls.Normalizer{SortQuery: eff.SortQueryParams(), MaxLength: urls.DefaultMaxLength, Rewrite: rw}
	s.ExcludeExts = urls.NewExtSet(eff.ExcludeExts())
	s.AllowedSchemes = eff.AllowedSchemes()
	s.MaxRecursion = eff.MaxURIRecursion()
	cm := eff.Crawlmode()
	mode, err := config.ParseCrawlMode(cm.Mode)
	if err != nil {
		return nil, fmt.Errorf("nodesched: collection %s: crawlmode: %w", c.Name, err)
	}
	s.Depth = mode.Depth
	if mode.Full {
		s.Depth = -1
	}
	s.FwdLinks, s.FwdRedirects, s.ResetLevel = cm.Fwdlinks, cm.Fwdredirects, cm.ResetLevel
	s.MaxRedirects = eff.MaxRedirects()
	s.HTMLRedirIsRedir = eff.HTMLRedirIsRedir()
	s.HTMLRedirThresh = float64(eff.HTMLRedirThresh())
	s.CheckMetaRobots = eff.CheckMetaRobots()
	le := eff.LinkExtraction()
	kinds := map[string]bool{"a": le.A, "action": le.Action, "area": le.Area, "card": le.Card, "comment": le.Comment,
		"embed": le.Embed, "frame": le.Frame, "go": le.Go, "img": le.Img, "layer": le.Layer, "link": le.Link,
		"meta": le.Meta, "meta_refresh": le.MetaRefresh, "object": le.Object, "script": le.Script,
		"script_java": le.ScriptJava, "style": le.Style}
	if s.Kinds, err = extract.KindsFromConfig(kinds); err != nil {
		return nil, fmt.Errorf("nodesched: collection %s: link_extraction: %w", c.Name, err)
	}
	s.AllowedTypes = eff.AllowedTypes()
	s.URISearchMIME = eff.URISearchMIME()
	s.ExtractLinksFromDupes = eff.ExtractLinksFromDupes()
	s.NearDuplicates = eff.NearDuplicateDetection()

	hdr, err := fetch.ParseHeaderLines(eff.Headers())
	if err != nil {
		return nil, fmt.Errorf("nodesched: collection %s: headers: %w", c.Name, err)
	}
	ua := hdr.Get("User-Agent")
	if ua == "" {
		ua = "trawl"
	}
	ua = strings.ReplaceAll(ua, "<version>", "1.0")
	hdr.Set("User-Agent", ua)
	fo := fetch.DefaultOptions()
	fo.UserAgent = ua
	fo.Headers = hdr
	fo.Timeout = time.Duration(eff.FetchTimeout()) * time.Second
	if co, ok := eff.CutOff(); ok && co > 0 {
		fo.CutOff = int64(co)
	} else {
		fo.CutOff = 0
	}
	fo.Truncate = eff.Truncate()
	fo.AcceptCompression = eff.AcceptCompression()
	fo.HTTP10 = !eff.UseHTTP11() // use_http_1_1 off: HTTP/1.0, no keep-alive, no compression
	fo.AllowedTypes = s.AllowedTypes
	fo.ForceMimeDetection = eff.ForceMimetypeDetection()
	// Redirects are not followed inside a fetch: every hop is a crawl queue
	// entry of its own, so that it gets its site's politeness, robots.txt,
	// routing and filters (docs/decisions/pipeline.md).
	fo.MaxRedirects = 0
	fo.Dial = env.Dial
	fo.Transport = env.Transport
	if s.Access, err = compileAccess(c, eff, env, &fo); err != nil {
		return nil, fmt.Errorf("nodesched: collection %s: %w", c.Name, err)
	}
	s.FetchOptions = fo
	if s.Fetcher, err = fetch.New(fo); err != nil {
		return nil, fmt.Errorf("nodesched: collection %s: %w", c.Name, err)
	}
	s.Robots = eff.Robots()
	s.UseSitemaps = eff.UseSitemaps()
	s.FetchRobots = s.Robots || s.UseSitemaps
	s.AgentToken = robots.ProductToken(ua)
	s.ObeyRobotsDelay = eff.ObeyRobotsDelay()
	rf, err := fetch.New(robots.FetcherOptions(fo, time.Duration(eff.RobotsTimeout())*time.Second))
	if err != nil {
		return nil, fmt.Errorf("nodesched: collection %s: robots fetcher: %w", c.Name, err)
	}
	s.robotsOpts = robots.CacheOptions{
		Token:  s.AgentToken,
		TTL:    time.Duration(eff.RobotsTTL()) * time.Second,
		Policy: robots.Policy{AuthIgnore: eff.RobotsAuthIgnore(), TimeoutIgnore: eff.RobotsToutIgnore()},
		Now:    env.Now,
		Load:   robots.FetchLoader(rf),
	}
	s.RobotsCache = robots.NewCache(s.robotsOpts)
	s.Delay = time.Duration(eff.Delay() * float64(time.Second))
	s.EnforceDelayIP = eff.EnforceDelayPerIP()
	s.IfModifiedSince = eff.IfModifiedSince()
	pp := eff.PP()
	s.UseDupServers = pp.UseDupservers
	s.DSPaused = pp.DSPaused
	s.DSSendLinks = pp.DSSendLinks
	if s.Reporting, err = CompileReporting(pp); err != nil {
		return nil, fmt.Errorf("nodesched: collection %s: %w", c.Name, err)
	}
	s.UseMetaCsum = eff.UseMetaCsum()
	s.CsumCutOff = eff.CsumCutOff()
	s.HTTPErrors = eff.HTTPErrors()
	s.StartURIs = eff.StartURIs()
	s.PPDup = ppdupSection(c)

	if s.Frontier, err = compileFrontier(c.Name, s, eff); err != nil { // frontierconf.go
		return nil, err
	}
	s.Logs, s.UMLogs = crawllog.FormatsOf(eff.Log()), eff.Umlogs()
	if err := compileExtras(s, eff, fo); err != nil {
		return nil, fmt.Errorf("nodesched: collection %s: %w", c.Name, err)
	}
	if err := compileOptions(s, eff); err != nil {
		return nil, fmt.Errorf("nodesched: collection %s: %w", c.Name, err)
	}
	if err := compileStorage(s, eff); err != nil {
		return nil, fmt.Errorf("nodesched: collection %s: %w", c.Name, err)
	}
	return s, nil
}

// ppdupSection is the collection reduced to its ppdup section, the PKT_DATA
// entry of PPDUP_SET_CONFIG (example 4.5).
func ppdupSection(c *config.Collection) cmt.Collection {
	out := cmt.Collection{Name: c.Name}
	if c.Root == nil {
		return out
	}
	sec := c.Root.Child("ppdup")
	if sec == nil {
		return out
	}
	for _, p := range sec.Params {
		if !p.Set {
			continue
		}
		switch p.Value.Type {
		case config.Integer:
			out.Attribs = append(out.Attribs, cmt.IntAttrib(p.Name, p.Value.Int))
		case config.Boolean:
			out.Attribs = append(out.Attribs, cmt.BoolAttrib(p.Name, p.Value.Bool))
		case config.Real:
			out.Attribs = append(out.Attribs, cmt.RealAttrib(p.Name, p.Value.Real))
		case config.ListString:
			out.Attribs = append(out.Attribs, cmt.ListAttrib(p.Name, p.Value.List...))
		default:
			out.Attribs = append(out.Attribs, cmt.StrAttrib(p.Name, p.Value.Text))
		}
	}
	return out
}

// WithFreshRobots returns a copy of s with an empty robots.txt cache: every
// refresh cycle reads each site's robots.txt again (the webfarm contract
// counts it as fetched in every cycle, and a new cycle should see changed
// rules). Jobs in flight keep the settings they were served with.
func (s *Settings) WithFreshRobots() *Settings {
	ns := *s
	ns.RobotsCache = robots.NewCache(s.robotsOpts)
	ns.Subs = make([]*SubSettings, len(s.Subs))
	for i, sub := range s.Subs {
		nsub := *sub
		nsub.Settings = sub.WithFreshRobots()
		nsub.Settings.root = &ns
		ns.Subs[i] = &nsub
	}
	if len(ns.Subs) > 0 {
		ns.Frontier.SiteDelay, ns.Frontier.SiteMaxDoc, ns.Frontier.SubOf = ns.siteDelay, ns.siteMaxDoc, ns.SubIndex
	}
	return &ns
}
