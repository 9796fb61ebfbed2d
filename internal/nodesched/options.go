package nodesched

import (
	"sort"
	"time"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/nodesched/crawlpipe"
	"github.com/trawl/trawl/internal/store"
	"github.com/trawl/trawl/internal/urls"
)

// stepOptions does, in the step's batch, what the options keep of a step:
// the mirrors met, the links of duplicates and the links sent elsewhere. It
// returns the links the step queues in its own collection.
func (m *Machine) stepOptions(c *collection, b *store.Batch, rec *store.URIRecord, o *crawlpipe.Outcome, links []crawlpipe.Link) ([]crawlpipe.Link, error) {
	s := c.s
	for _, mi := range sortedKeys(o.Mirrors) {
		k := crawlpipe.MirrorMetaPrefix + s.Name + "\x00" + mi
		if _, ok, err := m.st.Meta(k); err != nil {
			return nil, err
		} else if !ok {
			if err := b.PutMeta(k, []byte(o.Mirrors[mi])); err != nil {
				return nil, err
			}
			m.log.Info("nodesched: mirror site crawled as its preferred site", "collection", s.Name, "mirror", mi, "site", o.Mirrors[mi])
		}
		c.count("links_mirror", 1)
	}
	if o.Unwanted != "" {
		c.count("focused_excluded", 1)
	}
	if len(o.Links) == 0 || o.Location != "" {
		return links, nil
	}
	if !s.ExtractLinksFromDupes && m.isDuplicate(s, rec) {
		c.count("links_dupes_dropped", int64(len(o.Links)))
		return links[:len(links)-len(o.Links)], nil
	}
	if s.Opt != nil && s.Opt.SendTo != "" {
		var send []crawlpipe.Link
		keep := links[:len(links)-len(o.Links)]
		for _, l := range o.Links {
			if l.Flags&uint32(cmt.URIFSitemap) != 0 {
				keep = append(keep, l) // a sitemap of the site is not a hyperlink of a document
				continue
			}
			send = append(send, l)
		}
		m.sendLinks = append(m.sendLinks, pendingLinks{to: s.Opt.SendTo, from: s.Name, referrer: rec.URI, links: send})
		c.count("links_sent_to_collection", int64(len(send)))
		return keep, nil
	}
	return links, nil
}

// isDuplicate reports whether the document of rec is a duplicate: marked so
// by the store's checksum owners (without duplicate servers), or, with
// duplicate servers, whose checksum this node already knows another owner of
// (the duplicate server's verdict arrives after the step).
func (m *Machine) isDuplicate(s *crawlpipe.Settings, rec *store.URIRecord) bool {
	if rec.Status == store.StatusDuplicate {
		return true
	}
	if !rec.HasChecksum || rec.Status != store.StatusFetched || m.stepOwner == rec.URI {
		return false
	}
	owner, ok, err := m.st.ChecksumOwner(s.Name, rec.Checksum)
	if err != nil || !ok || owner == rec.URI {
		return false
	}
	_, alive, _ := m.st.URI(s.Name, owner)
	return alive
}

// pendingLinks are links of a committed step for another collection
// (send_links_to).
type pendingLinks struct {
	to, from, referrer string
	links              []crawlpipe.Link
}

// flushSendLinks hands the links of send_links_to to their collection: its
// frontier when it is crawled on this node (screened by its rules), else the
// multinode scheduler, which routes them in that collection.
func (m *Machine) flushSendLinks(now time.Time) error {
	pend := m.sendLinks
	m.sendLinks = nil
	for _, p := range pend {
		t := m.colls[p.to]
		if t == nil {
			for _, l := range p.links {
				m.send(MNS, &cmt.UMURI{Collection: p.to, Entry: wireEntry(l, p.referrer, 0)})
			}
			continue
		}
		if t.state == cmt.StateRemoving || t.state == cmt.StateBlocked {
			continue
		}
		var ok []crawlpipe.Link
		for _, l := range p.links {
			nu, pass := crawlpipe.Screen(t.s, l.URI)
			if !pass {
				continue
			}
			l.URI, l.Site = nu.String(), urls.Site(nu)
			ok = append(ok, l)
		}
		sort.SliceStable(ok, func(a, b int) bool { return ok[a].Site < ok[b].Site })
		if err := m.addLinks(t, now, ok, nil, p.referrer); err != nil {
			return err
		}
	}
	return nil
}

// minorRefresh starts an adaptive minor refresh cycle (refresh_count): the
// best known URIs of each site are queued again.
func (m *Machine) minorRefresh(c *collection, now time.Time) error {
	n, err := c.front.Reschedule(now)
	c.count("adaptive_rescheduled", int64(n))
	m.log.Info("nodesched: adaptive minor refresh cycle", "collection", c.s.Name, "rescheduled", n)
	m.pump(c)
	return err
}
