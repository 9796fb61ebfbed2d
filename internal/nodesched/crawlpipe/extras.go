package crawlpipe

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/url"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/config"
	"github.com/trawl/trawl/internal/extract"
	"github.com/trawl/trawl/internal/fetch"
	"github.com/trawl/trawl/internal/filter"
	"github.com/trawl/trawl/internal/urls"
)

// Feeds are the collection's sitemap and RSS settings (MS-FSCCFG
// use_sitemaps, adaptive/sitemap_weights, the rss section).
type Feeds struct {
	// Fetcher fetches sitemaps and RSS channels: the collection's fetcher
	// without the allowed_types check.
	Fetcher *fetch.Fetcher
	RSS     config.RSSSection
	// Channels are the normalized RSS start URIs (rss start_uris and
	// start_uri_files).
	Channels map[string]bool
	// screen is the collection's settings without exclude_exts, to screen
	// sitemap URLs (a sitemap is often .xml.gz, and .gz is excluded by
	// default).
	screen *Settings
	// noRules is a filter without include or exclude rules, for the
	// items of channels with ignore_rules.
	noRules *filter.Filter
}

// ScreenSitemap screens the URL of a sitemap (robots.txt Sitemap line or
// sitemap index entry): every rule but exclude_exts applies.
func ScreenSitemap(s *Settings, raw string) (*url.URL, bool) {
	if s.Feeds != nil && s.Feeds.screen != nil {
		return Screen(s.Feeds.screen, raw)
	}
	return Screen(s, raw)
}

// metaFeedItem marks (EntryMeta.Flags) a URI found in an RSS channel.
const metaFeedItem = 1

// metaFeedChannel marks (EntryMeta.Flags) an RSS channel found by rss
// auto_discover: a <link rel="alternate"> with a feed type in a crawled
// page. It is fetched and read as the rss start URIs are.
const metaFeedChannel = 4

// discoveredChannel reports whether a link of a page names a feed that rss
// auto_discover makes a channel of.
func discoveredChannel(s *Settings, l extract.Link) bool {
	if s.Feeds == nil || !s.Feeds.RSS.AutoDiscover || l.Kind != extract.KindLink || !isFeedType(l.Type) {
		return false
	}
	for _, r := range strings.Fields(l.Rel) {
		if r == "alternate" {
			return true
		}
	}
	return false
}

// maxStartURIFileBytes caps a start_uri_files file.
const maxStartURIFileBytes = 64 << 20

// compileExtras compiles the options of sitemaps.go and extras.go into s.
func compileExtras(s *Settings, eff *config.Effective, fo fetch.Options) error {
	ffo := fo
	ffo.AllowedTypes = nil
	var err error
	f := &Feeds{RSS: eff.RSS(), Channels: map[string]bool{}}
	if f.Fetcher, err = fetch.New(ffo); err != nil {
		return fmt.Errorf("feed fetcher: %w", err)
	}
	if f.noRules, err = filter.New(filter.Config{}); err != nil {
		return err
	}
	s.Feeds = f
	ns := *s
	ns.ExcludeExts = urls.ExtSet{}
	f.screen = &ns
	if err := compileJavaScript(s, eff); err != nil {
		return err
	}
	s.Score = newAdaptiveScore(s.Name, eff, s.URISearchMIME)
	s.Frontier.Score = s.Score.Score

	for _, file := range eff.StartURIFiles() {
		us, err := readURIFile(file)
		if err != nil {
			return fmt.Errorf("start_uri_files: %w", err)
		}
		s.StartURIs = append(s.StartURIs, us...)
	}
	channels := append([]string(nil), f.RSS.StartURIs...)
	for _, file := range f.RSS.StartURIFiles {
		us, err := readURIFile(file)
		if err != nil {
			return fmt.Errorf("rss start_uri_files: %w", err)
		}
		channels = append(channels, us...)
	}
	for _, raw := range channels {
		if nu, err := s.Normalizer.Normalize(strings.TrimSpace(raw), nil); err == nil {
			f.Channels[nu.String()] = true
			s.StartURIs = append(s.StartURIs, nu.String())
		}
	}
	return nil
}

// ReadFileCapped reads a file of at most max bytes; a larger one is an
// error, found without reading more than max+1 bytes of it.
func ReadFileCapped(name string, max int64) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s: larger than %d bytes", name, max)
	}
	return b, nil
}

// readURIFile reads one URI per line; blank lines and lines starting with
// '#' are skipped.
func readURIFile(name string) ([]string, error) {
	b, err := ReadFileCapped(name, maxStartURIFileBytes)
	if err != nil {
		return nil, err
	}
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		out = append(out, line)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return out, nil
}

// isChannel reports whether the job fetches an RSS channel: an rss start
// URI, or one auto_discover found.
func isChannel(s *Settings, j *Job) bool {
	return s.Feeds != nil && (s.Feeds.Channels[j.Fetch.URI] || (s.Feeds.RSS.AutoDiscover && j.Meta.Flags&metaFeedChannel != 0))
}

// fetcherFor is the fetcher of a job: sitemaps and channels are fetched
// without the allowed_types check.
func fetcherFor(s *Settings, j *Job) *fetch.Fetcher {
	if s.Feeds != nil && (j.Fetch.URIFlags&uint32(cmt.URIFSitemap) != 0 || isChannel(s, j)) {
		return s.Feeds.Fetcher
	}
	return s.Fetcher
}

// isFeedType reports an RSS or Atom media type.
func isFeedType(ct string) bool {
	switch ct {
	case "application/rss+xml", "application/atom+xml", "application/rdf+xml":
		return true
	}
	return false
}

// channel turns a fetched RSS channel into the step's links: its items
// newer than max_link_age minutes (0: any age), the newest max_link_count
// (0: all), one hop further; with del_expired_links the expired items'
// URIs are deleted. The channel itself is indexed only with index_feed.
func (p *Pipeline) channel(out *Outcome, body []byte, now time.Time) {
	s := out.Job.S
	rss := s.Feeds.RSS
	if !out.HasChecksum {
		out.Checksum, out.HasChecksum = extract.ChecksumBytes(body, s.CsumCutOff), true
	}
	out.NoIndex = !rss.IndexFeed
	out.Channel = true
	sm, err := extract.ParseSitemap(body, extract.SitemapOptions{})
	if err != nil && len(sm.URLs) == 0 {
		return
	}
	items := sm.URLs
	sort.SliceStable(items, func(a, b int) bool { return items[a].LastMod.After(items[b].LastMod) })
	hops := out.Job.Fetch.Hops
	kept := 0
	var flags uint32
	if rss.IgnoreRules {
		flags = uint32(cmt.URIFIgnoreRules)
	}
	for _, it := range items {
		nu, ok := screenFeedItem(p, s, it.Loc, rss.IgnoreRules)
		if !ok {
			continue
		}
		expired := rss.MaxLinkAge > 0 && !it.LastMod.IsZero() && now.Sub(it.LastMod) > time.Duration(rss.MaxLinkAge)*time.Minute
		if !expired && rss.MaxLinkCount > 0 && kept >= rss.MaxLinkCount {
			expired = true
		}
		if expired {
			if rss.DelExpiredLinks {
				out.Expired = append(out.Expired, Link{URI: nu.String(), Site: urls.Site(nu)})
			}
			continue
		}
		kept++
		out.Links = append(out.Links, Link{URI: nu.String(), Site: urls.Site(nu), Hops: hops + 1, Meta: metaFeedItem, Flags: flags})
	}
}

// screenFeedItem screens the URI of a channel item. With rss ignore_rules
// the include and exclude rules (MS-FSCCFG 2.2.4.1 to 2.2.4.4) do not
// apply to it ("crawl all documents referenced by the RSS channel"); the
// scheme, extension and recursion checks still do, and the link carries
// URIFIgnoreRules so that the node it is routed to does not screen it
// either.
func screenFeedItem(p *Pipeline, s *Settings, raw string, ignoreRules bool) (*url.URL, bool) {
	if !ignoreRules {
		return p.screen(s, raw)
	}
	ns := *s
	ns.Filter = s.Feeds.noRules
	return Screen(&ns, raw)
}
