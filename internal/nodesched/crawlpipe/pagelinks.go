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
	seen := map[string]bool{}
	for _, l := range res.Links {
		t, err := res.Resolve(u, l.URL)
		if err != nil {
			continue
		}
		if mi := s.unmirror(t); mi != "" {
			if out.Mirrors == nil {
				out.Mirrors = map[string]string{}
			}
			out.Mirrors[mi] = t.Host
		}
		ts := t.String()
		nu, reason := ScreenReason(s, ts)
		if reason != "" {
			if !seen[ts] {
				seen[ts] = true
				out.screened(ts, reason)
			}
			continue
		}
		ns := nu.String()
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
