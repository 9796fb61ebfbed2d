package nodesched

import (
	"github.com/trawl/trawl/internal/nodesched/crawlpipe"
	"github.com/trawl/trawl/internal/store"
)

// stepExtras writes what sitemaps.go and extras.go keep of a step into its
// batch.
func (m *Machine) stepExtras(c *collection, b *store.Batch, o *crawlpipe.Outcome) error {
	m.accessFailures(c, o)
	if o.RenderErr != nil {
		c.count("errors_javascript", 1)
		m.log.Warn("nodesched: javascript rendering failed, links taken from the HTML as fetched", "collection", c.s.Name, "site", o.Job.Fetch.Site, "uri", o.Job.Fetch.URI, "err", o.RenderErr)
	}
	return crawlpipe.PutSitemapInfo(b, c.s.Name, o.SitemapEntries)
}

// afterStep runs, once a step is committed, what needs batches of its own:
// del_expired_links deletes the stored URIs of expired channel items.
func (m *Machine) afterStep(c *collection, o *crawlpipe.Outcome) error {
	if len(o.Expired) == 0 {
		return nil
	}
	bySite := map[string][]string{}
	for _, l := range o.Expired {
		if own, _ := m.route(c.s.Name, l.Site); !own {
			continue
		}
		if _, ok, err := m.st.URI(c.s.Name, l.URI); err != nil || !ok {
			continue
		}
		bySite[l.Site] = append(bySite[l.Site], l.URI)
	}
	for _, site := range sortedKeys(bySite) {
		m.log.Info("nodesched: RSS items expired, deleted", "collection", c.s.Name, "channel", o.Job.Fetch.URI, "site", site, "uris", len(bySite[site]))
		if err := m.deleteList(c, site, bySite[site], false); err != nil {
			return err
		}
	}
	return nil
}
