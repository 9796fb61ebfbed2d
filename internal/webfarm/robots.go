package webfarm

import (
	"strconv"
	"strings"
)

// robots.txt: what the farm serves, and an RFC 9309 parser and matcher that
// the expectation model uses to decide what a polite crawler may fetch.

// robotsStatus returns the status robots.txt of host h answers with.
func (f *Farm) robotsStatus(h int) int {
	switch {
	case f.has(h, FeatRobotsErrors):
		return [...]int{404, 401, 403, 503}[h%4]
	case f.has(h, FeatRobots), f.has(h, FeatSitemap):
		return 200
	}
	return 404
}

// crawlDelay is the Crawl-delay of host h (FeatCrawlDelay).
func (f *Farm) crawlDelay(h int) (string, float64) {
	switch h % 3 {
	case 0:
		return "0.5", 0.5
	case 1:
		return "1", 1
	}
	return "2", 2
}

func (f *Farm) renderRobots(g *gen, h int) doc {
	st := f.robotsStatus(h)
	if st != 200 {
		return f.renderError(g, st)
	}
	g.s("# robots.txt for ")
	g.s(f.hosts[h].name)
	g.s(" (trawl webfarm)\n")
	delay := ""
	if f.has(h, FeatCrawlDelay) {
		delay, _ = f.crawlDelay(h)
	}
	if !f.has(h, FeatRobots) {
		g.s("User-agent: *\nDisallow:\n")
		if delay != "" {
			g.s("Crawl-delay: " + delay + "\n")
		}
	} else {
		switch h % 3 {
		case 0:
			g.s("User-agent: otherbot\nDisallow: /\n\nUser-agent: *\nDisallow: /private/\nDisallow: /shop/\nAllow: /shop/1\nDisallow: /*.pdf$   # no PDF files\n")
			if delay != "" {
				g.s("Crawl-delay: " + delay + "\n")
			}
		case 1:
			g.s("User-agent: *\nDisallow: /\n\nuser-agent: ")
			g.s(strings.ToUpper(f.cfg.RobotsAgent))
			g.s("\ndisallow: /archive/\nallow: /archive/1\nDISALLOW: /nf/\n")
			if delay != "" {
				g.s("crawl-delay: " + delay + "\n")
			}
		default:
			g.s("User-agent: *\nDisallow: /docs/\nAllow: /docs/*3.html$\nDisallow: /err/\nDisallow: /redir/*/h2\nDisallow: /*?c=\nAllow: /help/\nDisallow: /help/\n")
			if delay != "" {
				g.s("Crawl-delay: " + delay + "\n")
			}
		}
	}
	if f.has(h, FeatSitemap) {
		g.s("\nSitemap: ")
		g.s(g.pre[h])
		g.s("/sitemap.xml\n")
	}
	return doc{status: 200, ctype: ctText, version: 0}
}

func (f *Farm) renderSitemap(g *gen, h, c int) {
	g.s("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n")
	entry := func(version int) {
		g.s("<url><loc>")
		g.buf = append(g.buf, g.pre[h]...)
		g.buf = append(g.buf, g.tp...)
		g.s("</loc>")
		g.mark(KindSitemap, h, 0)
		g.s("<lastmod>")
		g.buf = f.cfg.Epoch.AddDate(0, 0, version).AppendFormat(g.buf, "2006-01-02")
		g.s("</lastmod></url>\n")
	}
	for n := 0; n < f.pages(); n++ {
		if !f.born(h, n, c) || f.dead(h, n, c) {
			continue
		}
		g.tpPage(h, n)
		entry(f.textVersion(h, n, c))
	}
	for i := 0; i < f.hiddenCount(); i++ {
		g.tpNum("/hidden/", i, ".html")
		entry(0)
	}
	g.s("</urlset>\n")
}

// Robots is a parsed robots.txt (RFC 9309).
type Robots struct {
	groups []robotsGroup
	// Sitemaps lists the Sitemap: URLs in file order.
	Sitemaps []string
}

type robotsGroup struct {
	agents []string // lower-case product tokens
	rules  []robotsRule
	delay  string
}

type robotsRule struct {
	allow   bool
	pattern string
}

// maxRobotsBytes is the part of a robots.txt that is parsed (RFC 9309
// section 2.5: at least 500 kibibytes).
const maxRobotsBytes = 500 << 10

// ParseRobots parses a robots.txt body. It never fails: unknown or broken
// lines are ignored, as RFC 9309 asks.
func ParseRobots(data []byte) *Robots {
	if len(data) > maxRobotsBytes {
		data = data[:maxRobotsBytes]
	}
	r := &Robots{}
	var cur *robotsGroup
	inAgents := false
	for len(data) > 0 {
		var line []byte
		if i := indexAny(data, "\r\n"); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			line, data = data, nil
		}
		s := string(line)
		if i := strings.IndexByte(s, '#'); i >= 0 {
			s = s[:i]
		}
		key, val, ok := strings.Cut(s, ":")
		if !ok {
			continue
		}
		key = strings.ToLower(strings.TrimSpace(key))
		val = strings.TrimSpace(val)
		switch key {
		case "user-agent":
			if !inAgents || cur == nil {
				r.groups = append(r.groups, robotsGroup{})
				cur = &r.groups[len(r.groups)-1]
			}
			inAgents = true
			cur.agents = append(cur.agents, strings.ToLower(val))
		case "allow", "disallow":
			inAgents = false
			if cur == nil || val == "" {
				continue
			}
			cur.rules = append(cur.rules, robotsRule{allow: key == "allow", pattern: val})
		case "crawl-delay":
			inAgents = false
			if cur != nil {
				cur.delay = val
			}
		case "sitemap":
			r.Sitemaps = append(r.Sitemaps, val)
		}
	}
	return r
}

func indexAny(b []byte, chars string) int {
	for i, c := range b {
		if strings.IndexByte(chars, c) >= 0 {
			return i
		}
	}
	return -1
}

// groupsFor returns the groups that apply to a product token: those that
// name it (case-insensitively), else those for "*".
func (r *Robots) groupsFor(agent string) []*robotsGroup {
	agent = strings.ToLower(agent)
	var named, star []*robotsGroup
	for i := range r.groups {
		g := &r.groups[i]
		for _, a := range g.agents {
			if a == agent {
				named = append(named, g)
				break
			}
			if a == "*" {
				star = append(star, g)
				break
			}
		}
	}
	if len(named) > 0 {
		return named
	}
	return star
}

// Allowed reports whether agent may fetch pathQuery (the path and query of
// a URL): the longest matching rule wins, Allow wins a tie, and no
// matching rule allows. /robots.txt is always allowed.
func (r *Robots) Allowed(agent, pathQuery string) bool {
	if pathQuery == "/robots.txt" {
		return true
	}
	best, allow := -1, true
	for _, g := range r.groupsFor(agent) {
		for _, rule := range g.rules {
			if !robotsMatch(rule.pattern, pathQuery) {
				continue
			}
			l := len(rule.pattern)
			if l > best || (l == best && rule.allow) {
				best, allow = l, rule.allow
			}
		}
	}
	return allow
}

// CrawlDelay returns the Crawl-delay that applies to agent, in seconds.
func (r *Robots) CrawlDelay(agent string) (float64, bool) {
	for _, g := range r.groupsFor(agent) {
		if g.delay != "" {
			if v, err := strconv.ParseFloat(g.delay, 64); err == nil && v >= 0 {
				return v, true
			}
		}
	}
	return 0, false
}

// robotsMatch matches an RFC 9309 path pattern ("*" any sequence, a final
// "$" the end) against a path.
func robotsMatch(pattern, path string) bool {
	anchored := strings.HasSuffix(pattern, "$")
	if anchored {
		pattern = pattern[:len(pattern)-1]
	}
	parts := strings.Split(pattern, "*")
	if !strings.HasPrefix(path, parts[0]) {
		return false
	}
	pos := len(parts[0])
	if len(parts) == 1 {
		return !anchored || pos == len(path)
	}
	for i := 1; i < len(parts); i++ {
		p := parts[i]
		if i == len(parts)-1 && anchored {
			return len(path)-pos >= len(p) && strings.HasSuffix(path, p)
		}
		j := strings.Index(path[pos:], p)
		if j < 0 {
			return false
		}
		pos += j + len(p)
	}
	return true
}
