package crawlpipe

import (
	"net/url"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/extract"
	"github.com/trawl/trawl/internal/urls"
)

// pageLinks screens the links extracted from the page u (hops from a start
// URI; offLang for focused crawling) and adds those to follow to
// out.Links, each once; the screened ones are recorded with their reason.
func pageLinks(out *Outcome, s *Settings, u *url.URL, res *extract.Result, hops, offLang int) {
	base := LinkBase(u, res)
	seen := map[string]bool{}
	for _, l := range res.Links {
		// One parse resolves and normalizes the link (the WHATWG URL
		// rules, as browsers resolve it); net/url parses the result once.
		var nu *url.URL
		ns, err := s.Normalizer.NormalizeRef(l.URL, base)
		if err == nil {
			nu, err = url.Parse(ns)
		}
		if err != nil {
			// The log names a link that does not normalize as resolved.
			if t, err := res.Resolve(u, l.URL); err == nil {
				if ts := t.String(); !seen[ts] {
					seen[ts] = true
					out.screened(ts, "invalid URI")
				}
			}
			continue
		}
		// ns survives the net/url round trip (docs/decisions/urls.md); it
		// is printed again only when unmirroring changed the host.
		if mi := s.unmirror(nu); mi != "" {
			if out.Mirrors == nil {
				out.Mirrors = map[string]string{}
			}
			out.Mirrors[mi] = nu.Host
			ns = nu.String()
		}
		if _, reason := screenURL(s, nu, ns); reason != "" {
			if !seen[ns] {
				seen[ns] = true
				out.screened(ns, reason)
			}
			continue
		}
		if seen[ns] {
			continue
		}
		lh := hops + 1
		if !sameHost(u, nu) {
			if !s.FwdLinks {
				seen[ns] = true
				out.screened(ns, "fwdlinks")
				continue
			}
			if s.ResetLevel {
				lh = 0
			}
		}
		var flags uint32
		if l.Kind == extract.KindMetaRefresh {
			flags |= uint32(cmt.URIFMetaRefresh)
		}
		var meta uint8
		if discoveredChannel(s, l) {
			meta = metaFeedChannel
		}
		seen[ns] = true
		out.Links = append(out.Links, Link{URI: ns, Site: urls.Site(nu), Hops: lh, Flags: flags, Meta: meta, Anchor: l.Anchor, OffLang: offLang})
	}
}

// LinkBase is the base the links of res, extracted from the document at u,
// resolve against: u, or the document's <base href> resolved against u. It
// is nil when that does not parse; then only absolute links resolve.
func LinkBase(u *url.URL, res *extract.Result) *urls.Base {
	b := u
	if res.Base != "" {
		if r, err := u.Parse(res.Base); err == nil {
			b = r
		}
	}
	base, err := urls.ParseBase(b.String())
	if err != nil {
		return nil
	}
	return base
}
