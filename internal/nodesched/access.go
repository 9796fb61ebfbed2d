package nodesched

import (
	"github.com/trawl/trawl/internal/fetch"
	"github.com/trawl/trawl/internal/nodesched/crawlpipe"
	"github.com/trawl/trawl/internal/robots"
)

// accessFailures counts and logs what kept the crawl out of a document:
// a proxy that could not be reached or refused the request, a form login
// that failed, credentials the site or proxy refused (401 or 407 after the
// crawl answered the challenge, counted as errors_auth). Each goes on with
// the rest of the crawl; the statistics map the counters to skip codes
// (internal/stats DocSkipCounters). A robots.txt download that got no
// response is counted and logged the same way (robotsFailed).
func (m *Machine) accessFailures(c *collection, o *crawlpipe.Outcome) {
	j := o.Job
	if o.RobotsFailed != nil {
		m.robotsFailed(c, o)
	}
	switch {
	case o.Err != nil && o.Kind == fetch.KindProxy:
		m.log.Warn("nodesched: proxy failed, document not fetched", "collection", c.s.Name, "site", j.Fetch.Site, "uri", j.Fetch.URI, "err", o.Err)
	case o.Err != nil && o.Kind == fetch.KindLogin:
		m.log.Warn("nodesched: form login failed, document not fetched", "collection", c.s.Name, "site", j.Fetch.Site, "uri", j.Fetch.URI, "err", o.Err)
	case o.Err == nil && (o.Status == 401 || o.Status == 407):
		c.count("errors_auth", 1)
		what := "site"
		if o.Status == 407 {
			what = "proxy"
		}
		m.log.Warn("nodesched: authentication refused by the "+what, "collection", c.s.Name, "site", j.Fetch.Site, "uri", j.Fetch.URI, "status", o.Status)
	}
}

// robotsFailed counts and logs a robots.txt download that got no response
// (the step that tried it carries it, once per attempt: the cache keeps
// the outcome robots.CacheOptions.ErrorTTL): a connection failure, timeout or network
// error is counted under its errors_<kind> like a document's (an
// unreachable proxy as errors_proxy, skip code co), for the collection and
// the site, and a WARN line names the site and says what became of its
// URIs. Other failures (too many redirects: "unavailable", allow all) are
// not errors of the site's connection and are not counted.
func (m *Machine) robotsFailed(c *collection, o *crawlpipe.Outcome) {
	f, j := o.RobotsFailed, o.Job
	k := fetch.KindOf(f.Err)
	if cls := k.ErrorClass(); cls != "net" && cls != "ttl" {
		return
	}
	c.count("errors_"+k.String(), 1)
	msg := "nodesched: robots.txt unreachable"
	if k == fetch.KindProxy {
		msg = "nodesched: proxy failed, robots.txt not fetched through it"
	}
	then := "the site's URIs are skipped as robots-denied until robots.txt is fetched again"
	switch {
	case f.Rules == nil:
	case f.Rules.Mode == robots.ModeAllowAll:
		then = "robots.txt ignored (robots_tout_ignore): the site is crawled"
	case f.Rules.Mode == robots.ModeRules:
		then = "the site's last robots.txt still applies"
	}
	m.log.Warn(msg, "collection", c.s.Name, "site", j.Fetch.Site, "uri", f.URL, "kind", k.String(), "then", then, "err", f.Err)
}
