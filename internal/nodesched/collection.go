package nodesched

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/config"
	"github.com/trawl/trawl/internal/extract"
	"github.com/trawl/trawl/internal/fetch"
	"github.com/trawl/trawl/internal/filter"
	"github.com/trawl/trawl/internal/frontier"
	"github.com/trawl/trawl/internal/robots"
	"github.com/trawl/trawl/internal/urls"
)

// Settings is everything the crawl pipeline takes from one collection's
// effective configuration (the collection with this node's Node element
// applied), compiled once per CMD_ADM_CONF_ADD/UPDATE. Workers only read it.
type Settings struct {
	Name   string
	Config *config.Collection
	Eff    *config.Effective

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
	NearDuplicates                     bool           // near_duplicate_detection asked (not honoured; see docs/decisions.md)
	Access                             *Access        // cookies, credentials, proxies, client certificate, FTP, logins (access.go)
	Feeds                              *Feeds         // sitemaps and RSS (extras.go)
	Score                              *adaptiveScore // adaptive refresh ranking (sitemaps.go)
	JS                                 *JavaScript    // use_javascript (javascript.go)
	Opt                                *crawlOptions  // variable_delay, mirrors, focused, send_links_to (options.go)

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
	UseMetaCsum   bool
	CsumCutOff    int
	HTTPErrors    config.ErrorPolicy

	StartURIs []string
	PPDup     cmt.Collection // the ppdup section only, for PPDUP_SET_CONFIG
	Frontier  frontier.Config

	Storage *storageSettings // diffcheck, storage and limits (storage.go, limits.go)
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
}

// Compile builds the Settings of collection c for node env.NodeID.
func Compile(c *config.Collection, env Env) (*Settings, error) {
	eff := c.Effective("", env.NodeID)
	s := &Settings{Name: c.Name, Config: c, Eff: eff}
	var err error
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
	// routing and filters (docs/decisions.md).
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
	s.UseMetaCsum = eff.UseMetaCsum()
	s.CsumCutOff = eff.CsumCutOff()
	s.HTTPErrors = eff.HTTPErrors()
	s.StartURIs = eff.StartURIs()
	s.PPDup = ppdupSection(c)

	fc := frontier.DefaultConfig(c.Name)
	fc.MaxSites = eff.MaxSites()
	fc.MaxPending = eff.MaxPending()
	fc.Delay = s.Delay
	fc.EnforceDelayPerIP = s.EnforceDelayIP
	fc.ObeyRobotsDelay = s.ObeyRobotsDelay
	if v, ok := eff.MaxInterDocs(); ok {
		fc.MaxInterDocs = v
	}
	fc.MaxDoc = eff.MaxDoc()
	wq := eff.WorkqueuePriority()
	fc.Levels, fc.DefaultLevel, fc.StartURILevel = wq.Levels, wq.Default, wq.StartURIPri
	if ps, err := frontier.ParsePopScheme(wq.PopScheme); err == nil {
		fc.PopScheme = ps
	}
	if err := compileLevels(eff, &fc); err != nil {
		return nil, fmt.Errorf("nodesched: collection %s: %w", c.Name, err)
	}
	fc.MaxHops = s.Depth
	// max_uri_recursion is checked by the pipeline with urls.PathRecursion,
	// the rule the webfarm contract states; the frontier's own check is off.
	fc.MaxURIRecursion = 0
	fc.WQFilter = eff.Wqfilter()
	fc.SMFilterBits = eff.Smfilter()
	if rm, err := frontier.ParseRefreshMode(eff.RefreshMode()); err == nil {
		fc.RefreshMode = rm
	}
	if r := eff.Refresh(); r > 0 {
		fc.Refresh = time.Duration(r * float64(time.Minute))
	}
	fc.RefreshWhenIdle = eff.RefreshWhenIdle()
	fc.DBSwitch = eff.Dbswitch()
	fc.DBSwitchDelete = eff.DbswitchDelete()
	ad := eff.Adaptive()
	fc.Adaptive = frontier.Adaptive{RefreshCount: ad.RefreshCount, RefreshQuota: ad.RefreshQuota, CoverageMin: ad.CoverageMin, CoverageMaxPct: ad.CoverageMaxPct}
	fc.MaxBackoffCounter = eff.MaxBackoffCounter()
	fc.MaxBackoffDelay = time.Duration(eff.MaxBackoffDelay()) * time.Second
	fc.RequireIP = true
	fc.RequireGrant = true
	s.Frontier = fc
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

// withFreshRobots returns a copy of s with an empty robots.txt cache: every
// refresh cycle reads each site's robots.txt again (the webfarm contract
// counts it as fetched in every cycle, and a new cycle should see changed
// rules). Jobs in flight keep the settings they were served with.
func (s *Settings) withFreshRobots() *Settings {
	ns := *s
	ns.RobotsCache = robots.NewCache(s.robotsOpts)
	return &ns
}
