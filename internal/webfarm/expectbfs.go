package webfarm

import (
	"fmt"
	"net/url"
	"sort"
	"strings"
)

// Expect returns, sorted, the exact set of distinct URLs a correct crawl
// of the farm under c requests. This is the contract crawlers are tested
// against:
//
//  1. The start URLs are discovered at depth 0 with redirect count 0.
//  2. A discovered URL (after sort_query_params when set) is a candidate
//     when it is http, on a farm host and port, its depth is <= MaxDepth
//     (unless FULL), its redirect count is <= MaxRedirects, it passes the
//     include/exclude domain and URI rules, exclude_exts, max_uri_recursion
//     and MaxURILength. Depth and redirect count are the minimum over all
//     ways the URL is discovered.
//  3. The first candidate of a host makes the crawler fetch that host's
//     /robots.txt when Robots or UseSitemaps is set; robots.txt is then in
//     the set. With UseSitemaps, each Sitemap: URL of a 200 robots.txt on
//     the same host that passes the URI rules of step 2 (and robots) is
//     fetched too, and the URLs it lists are discovered at depth 0.
//  4. With Robots, a candidate disallowed by robots.txt is not fetched:
//     RFC 9309 rules for UserAgent (longest match wins, Allow wins a tie);
//     robots.txt 401/403 allows all when RobotsAuthIgnore, else disallows
//     all; other 4xx allow all; 5xx disallow all.
//  5. Every other candidate is fetched (is in the set), whatever its
//     status. Errors (404, 410, 500, 503), slow, stalled and non-HTML
//     responses end there: a stalled response counts as fetched.
//  6. A 3xx response with a Location discovers the target at the same
//     depth with redirect count + 1 (if the target is on another host,
//     only with FwdRedirects).
//  7. A 200 text/html response whose type matches AllowedTypes and
//     URISearchMIME yields links (a 304 counts as the unchanged 200):
//     with CutOff > 0 and a larger body, none when !Truncate, else those
//     ending within CutOff bytes. If HTMLRedirIsRedir and it has a meta
//     refresh with delay <= HTMLRedirThreshold, it is a redirect (step 6,
//     whatever LinkKinds says) and yields nothing else. Otherwise, with
//     CheckMetaRobots and a robots META nofollow, it yields nothing;
//     else every link whose kind is in LinkKinds is discovered with
//     redirect count 0 at depth + 1, or at depth 0 when it leads to another
//     host and ResetLevel is set; links to another host only with FwdLinks.
//
// Duplicates do not change the set: the farm's duplicate documents have no
// links. Retries of the same URL are not distinct URLs.
func (f *Farm) Expect(c Crawl) ([]string, error) {
	e, err := f.newExpecter(c)
	if err != nil {
		return nil, err
	}
	if err := e.run(); err != nil {
		return nil, err
	}
	out := make([]string, 0, len(e.fetched))
	for u := range e.fetched {
		out = append(out, u)
	}
	sort.Strings(out)
	return out, nil
}

type expecter struct {
	f                   *Farm
	c                   Crawl
	pre                 []string
	inDom, exDom        *compiledRules
	inURI, exURI        *compiledRules
	exts                []string
	fetched             map[string]bool
	perHost             []int
	contacted           []bool
	robots              []*Robots
	robotsStatus        []int
	best                map[string]state
	queue               []item
	limit               int
	includeDomainsEmpty bool
	includeURIsEmpty    bool
}

type state struct{ depth, redirs int }

type item struct {
	url string
	state
}

func (f *Farm) newExpecter(c Crawl) (*expecter, error) {
	if f.Port() == 0 {
		return nil, fmt.Errorf("webfarm: expect: the port is not chosen yet (start the farm first)")
	}
	e := &expecter{
		f: f, c: c, pre: *f.prefix.Load(),
		fetched:   map[string]bool{},
		perHost:   make([]int, len(f.hosts)),
		contacted: make([]bool, len(f.hosts)),
		robots:    make([]*Robots, len(f.hosts)),
		best:      map[string]state{},
		limit:     c.Limit,
	}
	e.robotsStatus = make([]int, len(f.hosts))
	if e.limit <= 0 {
		e.limit = 5000000
	}
	var err error
	if e.inDom, err = compileRules(c.IncludeDomains, true); err != nil {
		return nil, err
	}
	if e.exDom, err = compileRules(c.ExcludeDomains, true); err != nil {
		return nil, err
	}
	if e.inURI, err = compileRules(c.IncludeURIs, false); err != nil {
		return nil, err
	}
	if e.exURI, err = compileRules(c.ExcludeURIs, false); err != nil {
		return nil, err
	}
	e.includeDomainsEmpty = c.IncludeDomains.empty()
	e.includeURIsEmpty = c.IncludeURIs.empty()
	for _, x := range c.ExcludeExts {
		e.exts = append(e.exts, strings.ToLower(strings.TrimSpace(x)))
	}
	return e, nil
}

func (e *expecter) discover(u string, s state) {
	if e.c.SortQueryParams {
		u = SortQuery(u)
	}
	if old, ok := e.best[u]; ok && old.depth <= s.depth && old.redirs <= s.redirs {
		return
	} else if ok {
		s = state{min(old.depth, s.depth), min(old.redirs, s.redirs)}
	}
	e.best[u] = s
	e.queue = append(e.queue, item{u, s})
}

func (e *expecter) run() error {
	for _, u := range e.c.StartURLs {
		nu, err := normalizeURL(u)
		if err != nil {
			return fmt.Errorf("webfarm: start URL %q: %w", u, err)
		}
		e.discover(nu, state{})
	}
	for len(e.queue) > 0 {
		it := e.queue[0]
		e.queue = e.queue[1:]
		if cur := e.best[it.url]; cur != it.state {
			continue // a better state was queued after this one
		}
		if err := e.visit(it); err != nil {
			return err
		}
		if len(e.fetched) > e.limit {
			return fmt.Errorf("%w: more than %d URLs (a trap is not bounded by the crawl's limits)", ErrUnbounded, e.limit)
		}
	}
	if e.c.MaxDoc > 0 {
		for h, n := range e.perHost {
			if n > e.c.MaxDoc {
				return fmt.Errorf("%w: %s has %d URLs to fetch, max_doc is %d", ErrOrderDependent, e.f.hosts[h].name, n, e.c.MaxDoc)
			}
		}
	}
	return nil
}

// candidate applies the filters of step 2 and returns the host index.
func (e *expecter) candidate(u string, s state) (h int, path, query string, ok bool) {
	if e.c.MaxDepth >= 0 && s.depth > e.c.MaxDepth {
		return 0, "", "", false
	}
	if s.redirs > e.c.MaxRedirects {
		return 0, "", "", false
	}
	if e.c.MaxURILength > 0 && len(u) > e.c.MaxURILength {
		return 0, "", "", false
	}
	h, path, query, err := e.f.split(u)
	if err != nil {
		return 0, "", "", false
	}
	name := e.f.hosts[h].name
	if (!e.includeDomainsEmpty && !e.inDom.match(name)) || e.exDom.match(name) {
		return 0, "", "", false
	}
	if (!e.includeURIsEmpty && !e.inURI.match(u)) || e.exURI.match(u) {
		return 0, "", "", false
	}
	lp := strings.ToLower(path)
	for _, x := range e.exts {
		if x != "" && strings.HasSuffix(lp, x) {
			return 0, "", "", false
		}
	}
	if e.c.MaxURIRecursion >= 0 && URIRecursion(path) > e.c.MaxURIRecursion {
		return 0, "", "", false
	}
	return h, path, query, true
}

func (e *expecter) fetch(u string, h int, counts bool) {
	if !e.fetched[u] {
		e.fetched[u] = true
		if counts {
			e.perHost[h]++
		}
	}
}

// contact performs step 3 for host h.
func (e *expecter) contact(h int) {
	if e.contacted[h] {
		return
	}
	e.contacted[h] = true
	if !e.c.Robots && !e.c.UseSitemaps {
		return
	}
	ru := e.pre[h] + "/robots.txt"
	e.fetch(ru, h, false)
	r := e.f.describe(h, "/robots.txt", "", e.c.Cycle)
	e.robotsStatus[h] = r.Status
	if r.Status == 200 {
		e.robots[h] = ParseRobots(r.Body)
	}
	if !e.c.UseSitemaps || e.robots[h] == nil {
		return
	}
	for _, sm := range e.robots[h].Sitemaps {
		nu, err := normalizeURL(sm)
		if err != nil {
			continue
		}
		sh, path, query, ok := e.candidate(nu, state{})
		if !ok || sh != h || !e.allowed(h, path, query) {
			continue
		}
		e.fetch(nu, h, false)
		res := e.f.describe(h, path, query, e.c.Cycle)
		if res.Status != 200 {
			continue
		}
		for _, l := range res.Links {
			if l.Kind == KindSitemap {
				e.discover(l.URL, state{})
			}
		}
	}
}

// allowed applies step 4.
func (e *expecter) allowed(h int, path, query string) bool {
	if !e.c.Robots {
		return true
	}
	st := e.robotsStatus[h]
	switch {
	case st == 200:
		pq := path
		if query != "" {
			pq += "?" + query
		}
		return e.robots[h].Allowed(e.c.UserAgent, pq)
	case st == 401 || st == 403:
		return e.c.RobotsAuthIgnore
	case st >= 500:
		return false
	}
	return true
}

func (e *expecter) visit(it item) error {
	h, path, query, ok := e.candidate(it.url, it.state)
	if !ok {
		return nil
	}
	e.contact(h)
	if !e.allowed(h, path, query) {
		return nil
	}
	e.fetch(it.url, h, true)
	r := e.f.describe(h, path, query, e.c.Cycle)
	switch {
	case r.Status >= 300 && r.Status < 400 && r.Location != "":
		e.redirect(h, r.Location, it.state)
		return nil
	case r.Status != 200:
		return nil
	}
	if !mimeMatch(r.ContentType, []string{"text/html"}) || !mimeMatch(r.ContentType, e.c.AllowedTypes) ||
		!mimeMatch(r.ContentType, e.c.URISearchMIME) {
		return nil
	}
	links := r.Links
	if e.c.CutOff > 0 && r.Size > e.c.CutOff {
		if !e.c.Truncate {
			return nil
		}
		kept := links[:0:0]
		for _, l := range links {
			if l.End <= e.c.CutOff {
				kept = append(kept, l)
			}
		}
		links = kept
	}
	if e.c.HTMLRedirIsRedir {
		for _, l := range links {
			if l.Kind == KindMetaRefresh && l.Delay <= e.c.HTMLRedirThreshold {
				e.redirect(h, l.URL, it.state)
				return nil
			}
		}
	}
	if e.c.CheckMetaRobots && r.NoFollow {
		return nil
	}
	for _, l := range links {
		if !e.c.LinkKinds.Has(l.Kind) {
			continue
		}
		lh := e.hostOf(l.URL)
		if lh < 0 {
			continue // not on the farm: never fetched from it
		}
		s := state{depth: it.depth + 1}
		if lh != h {
			if !e.c.FwdLinks {
				continue
			}
			if e.c.ResetLevel {
				s.depth = 0
			}
		}
		e.discover(l.URL, s)
	}
	return nil
}

func (e *expecter) redirect(h int, target string, s state) {
	th := e.hostOf(target)
	if th < 0 || (th != h && !e.c.FwdRedirects) {
		return
	}
	e.discover(target, state{depth: s.depth, redirs: s.redirs + 1})
}

// hostOf returns the farm host of a normalized URL, or -1.
func (e *expecter) hostOf(u string) int {
	rest, ok := strings.CutPrefix(u, "http://")
	if !ok {
		return -1
	}
	if i := strings.IndexAny(rest, "/?"); i >= 0 {
		rest = rest[:i]
	}
	name, port, _ := strings.Cut(rest, ":")
	if port == "" {
		port = "80"
	}
	h, ok := e.f.byName[name]
	if !ok || port != itoa(e.f.Port()) {
		return -1
	}
	return h
}

// normalizeURL lower-cases scheme and host, drops the default port and
// the fragment, removes dot segments and gives an empty path "/".
func normalizeURL(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", err
	}
	u = u.ResolveReference(&url.URL{}) // removes dot segments
	u.Scheme = strings.ToLower(u.Scheme)
	host := strings.ToLower(u.Hostname())
	if p := u.Port(); p != "" && !(u.Scheme == "http" && p == "80") {
		host += ":" + p
	}
	u.Host = host
	u.Fragment, u.RawFragment = "", ""
	if u.Path == "" {
		u.Path = "/"
	}
	return u.String(), nil
}
