package nodesched

import (
	"net/url"
	"strconv"
	"time"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/filter"
	"github.com/trawl/trawl/internal/frontier"
	"github.com/trawl/trawl/internal/nodesched/crawlpipe"
	"github.com/trawl/trawl/internal/urls"
)

// addLinks queues links of own sites in the frontier (inside tx when given,
// else in a transaction of its own) and sends the others to the multinode
// scheduler as CMD_UM_URI.
func (m *Machine) addLinks(c *collection, now time.Time, links []crawlpipe.Link, tx *frontier.Tx, referrer string) error {
	if c.cur == nil && tx == nil && len(links) > 0 {
		// Not found in a document (start URIs, refetches): each link counts
		// for its own site.
		for _, l := range links {
			c.cur = c.site(l.Site)
			err := m.addLinks(c, now, []crawlpipe.Link{l}, nil, referrer)
			c.cur = nil
			if err != nil {
				return err
			}
		}
		return nil
	}
	refSite := ""
	if referrer != "" && c.cur != nil {
		refSite = c.curSite
	}
	var own []frontier.Entry
	for _, l := range links {
		if c.s.TooDeep(l.URI, l.Hops) {
			c.count("too_deep", 1) // beyond its subcollection's crawlmode depth
			continue
		}
		if refSite != "" {
			if l.Site == refSite {
				c.count("links_local", 1)
			} else {
				c.count("links_other", 1)
			}
		}
		if o, _ := m.route(c.s.Name, l.Site); o {
			own = append(own, frontier.Entry{URI: l.URI, Site: l.Site, Referrer: referrer, Hops: l.Hops, Redirects: l.Redirects,
				URIFlags: l.Flags, Extra: crawlpipe.EncodeMeta(crawlpipe.EntryMeta{Redirects: l.Redirects, Flags: l.Meta, OffLang: l.OffLang})})
			continue
		}
		m.send(MNS, &cmt.UMURI{Collection: c.s.Name, Entry: wireEntry(l, referrer, c.front.Cycle())})
		c.count("uris_to_multinode", 1)
	}
	if len(own) == 0 {
		return nil
	}
	var res frontier.AddResult
	var err error
	if tx != nil {
		res, err = tx.Add(own...)
	} else {
		res, err = c.front.Add(now, own...)
		m.pump(c)
	}
	c.count("uris_queued", int64(res.Queued))
	c.count("uris_seen_before", int64(res.Duplicate))
	c.count("uris_too_deep", int64(res.TooDeep))
	return err
}

// Extra keys of a crawl queue entry that carry what the WQE tuple has no
// field for (docs/decisions/pipeline.md).
const (
	extraHops      = "hops"
	extraRedirects = "redirects"
	extraOffLang   = "offlang" // entryMeta.OffLang (focused crawl)
)

func wireEntry(l crawlpipe.Link, referrer string, cycle int64) cmt.Entry {
	e := cmt.Entry{URI: uriStructure(l.URI), Referrer: cmt.EmptyURIStructure(), Flags: cmt.URIFlags(l.Flags) | cmt.URIFUnscreened, Cycle: cycle}
	if referrer != "" {
		e.Referrer = uriStructure(referrer)
	}
	e.Extra = []cmt.ExtraItem{{Key: cmt.StrScalar(extraHops), Value: cmt.IntScalar(int64(l.Hops))}}
	if l.Redirects > 0 {
		e.Extra = append(e.Extra, cmt.ExtraItem{Key: cmt.StrScalar(extraRedirects), Value: cmt.IntScalar(int64(l.Redirects))})
	}
	if l.OffLang > 0 {
		e.Extra = append(e.Extra, cmt.ExtraItem{Key: cmt.StrScalar(extraOffLang), Value: cmt.IntScalar(int64(l.OffLang))})
	}
	return e
}

// uriStructure fills the 14-field URI structure of a normalized URI.
func uriStructure(raw string) cmt.URIStructure {
	u, err := urlParse(raw)
	if err != nil {
		return cmt.URIStructure{URI: raw, Port: cmt.NoPort}
	}
	port := int32(cmt.NoPort)
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err == nil {
			port = int32(n)
		}
	} else if dp := urls.DefaultPort(u.Scheme); dp != "" {
		n, _ := strconv.Atoi(dp)
		port = int32(n)
	}
	cred := ""
	if u.User != nil {
		cred = u.User.String()
	}
	return cmt.URIStructure{URI: raw, Scheme: u.Scheme, Netloc: u.Host, Host: u.Hostname(), Port: port,
		Path: u.EscapedPath(), Query: u.RawQuery, Fragment: u.Fragment, Credentials: cred,
		SkipFragments: true, Parsed: true, HostIDNA: u.Hostname()}
}

// entryFromWire converts a received crawl queue entry.
func (m *Machine) entryFromWire(c *collection, e *cmt.Entry, urgent bool) (frontier.Entry, bool) {
	raw := e.URI.URI
	var nu string
	var site string
	if e.Flags&cmt.URIFIgnoreRules != 0 {
		u, err := c.s.Normalizer.Normalize(raw, nil)
		if err != nil {
			return frontier.Entry{}, false
		}
		nu, site = u.String(), urls.Site(u)
	} else {
		var u *url.URL
		var reason string
		if v := m.verdict; v != nil && v.s == c.s {
			u, reason = v.nu, v.reason // screened off the loop (screener.go)
		} else {
			u, reason = crawlpipe.ScreenReason(c.s, raw)
		}
		if reason != "" {
			c.count("uris_screened_out", 1)
			if filter.IsTimeoutReason(reason) {
				c.count("screen_timeouts", 1)
			}
			return frontier.Entry{}, false
		}
		nu, site = u.String(), urls.Site(u)
	}
	fe := frontier.Entry{URI: nu, Site: site, Referrer: e.Referrer.URI, URIFlags: uint32(e.Flags &^ cmt.URIFUnscreened),
		QueueFlags: uint8(e.QueueFlags & 0x07)}
	var meta crawlpipe.EntryMeta
	for _, x := range e.Extra {
		if x.Key.Kind != cmt.ScalarString || x.Value.Kind != cmt.ScalarInt {
			continue
		}
		switch x.Key.Str {
		case extraHops:
			fe.Hops = int(max(0, min(x.Value.Int, 1<<20)))
		case extraRedirects:
			meta.Redirects = int(max(0, min(x.Value.Int, 1<<20)))
		case extraOffLang:
			meta.OffLang = int(max(0, min(x.Value.Int, 1<<20)))
		}
	}
	fe.Extra, fe.Redirects = crawlpipe.EncodeMeta(meta), meta.Redirects
	if c.s.TooDeep(fe.URI, fe.Hops) {
		c.count("too_deep", 1)
		return frontier.Entry{}, false
	}
	if urgent {
		fe.QueueFlags |= frontier.QFUrgent | frontier.QFPrepend
	}
	return fe, true
}
