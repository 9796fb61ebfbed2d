package webfarm

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"strings"
	"time"
)

// Feature is one kind of behaviour a host of the farm can have. A host's
// features are a bit set (Features); Config.Features applies to every host
// unless Config.HostFeatures names the host.
type Feature uint32

// Features is a set of Feature bits.
type Features = Feature

// The features. Light features are cheap and bounded; the trap and slow
// features (Calendar, DeepPaths, Slow, Stall, Large) are meant for a few
// hosts only and are linked from the host's home page.
const (
	// FeatRobots serves a robots.txt with Disallow/Allow rules (three
	// variants, chosen by host index). Without it robots.txt is a 404.
	FeatRobots Feature = 1 << iota
	// FeatCrawlDelay adds "Crawl-delay: 0.5" (or 1, 2) to robots.txt.
	FeatCrawlDelay
	// FeatRobotsErrors makes robots.txt answer 404, 401, 403 or 503
	// (by host index), overriding FeatRobots.
	FeatRobotsErrors
	// FeatSitemap adds a Sitemap: line to robots.txt and serves
	// /sitemap.xml, which also lists pages linked from nowhere
	// (/hidden/N.html).
	FeatSitemap
	// FeatCrossLinks links ordinary pages to pages of other hosts and to
	// hosts outside the farm.
	FeatCrossLinks
	// FeatRedirects adds HTTP redirect chains (301/302/303/307/308,
	// some longer than 10 hops, some to other hosts), loops and an
	// endless chain.
	FeatRedirects
	// FeatMetaRefresh adds meta-refresh chains (delay 0), loops and a
	// refresh with a delay above the usual threshold (10 s).
	FeatMetaRefresh
	// FeatLinkKinds adds every kind of link of MS-FSCCFG link_extraction
	// (area, frame, iframe, img, link, script, style, embed, object,
	// comment) with targets reachable only through that kind.
	FeatLinkKinds
	// FeatDuplicates adds exact duplicates (same bytes, several URLs),
	// query-parameter permutations and near duplicates.
	FeatDuplicates
	// FeatFiles adds non-HTML documents (PDF, PNG, plain text,
	// octet-stream).
	FeatFiles
	// FeatErrors links to 404, 410, 500 and 503 (with Retry-After) URLs.
	FeatErrors
	// FeatMetaRobots marks some pages noindex, nofollow or both.
	FeatMetaRobots
	// FeatBase gives some pages a <base href> and relative links.
	FeatBase
	// FeatChanges makes pages change, appear and disappear between
	// refresh cycles (Farm.SetCycle).
	FeatChanges
	// FeatCalendar links to an infinite calendar (each month links to
	// the previous and next month and its days; each day to the next).
	FeatCalendar
	// FeatDeepPaths links to ever-deeper paths (/deep/more/more/...,
	// /deep2/a/b/a/b/...).
	FeatDeepPaths
	// FeatSlow serves three pages slowly (Config.SlowChunks chunks,
	// Config.SlowDelay apart).
	FeatSlow
	// FeatStall serves a page that sends its headers and a few bytes,
	// then hangs until the client goes away (or Config.StallMax).
	FeatStall
	// FeatLarge serves a very large HTML page (Config.LargeBytes) with a
	// link at its start and one at its end.
	FeatLarge
)

// FeatCommon is the set of light features.
const FeatCommon = FeatRobots | FeatSitemap | FeatCrossLinks | FeatRedirects | FeatMetaRefresh |
	FeatLinkKinds | FeatDuplicates | FeatFiles | FeatErrors | FeatMetaRobots | FeatBase | FeatChanges

// FeatAll is every feature.
const FeatAll = FeatCommon | FeatCrawlDelay | FeatRobotsErrors | FeatCalendar | FeatDeepPaths |
	FeatSlow | FeatStall | FeatLarge

var featureNames = []struct {
	f    Feature
	name string
}{
	{FeatRobots, "robots"}, {FeatCrawlDelay, "crawl-delay"}, {FeatRobotsErrors, "robots-errors"},
	{FeatSitemap, "sitemap"}, {FeatCrossLinks, "cross-links"}, {FeatRedirects, "redirects"},
	{FeatMetaRefresh, "meta-refresh"}, {FeatLinkKinds, "link-kinds"}, {FeatDuplicates, "duplicates"},
	{FeatFiles, "files"}, {FeatErrors, "errors"}, {FeatMetaRobots, "meta-robots"}, {FeatBase, "base"},
	{FeatChanges, "changes"}, {FeatCalendar, "calendar"}, {FeatDeepPaths, "deep-paths"},
	{FeatSlow, "slow"}, {FeatStall, "stall"}, {FeatLarge, "large"},
}

// String lists the feature names, comma-separated.
func (f Feature) String() string {
	var parts []string
	for _, fn := range featureNames {
		if f&fn.f != 0 {
			parts = append(parts, fn.name)
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ",")
}

// ParseFeatures parses a comma-separated list of feature names, plus
// "common", "all" and "none".
func ParseFeatures(s string) (Features, error) {
	var f Features
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(strings.ToLower(p))
		switch p {
		case "", "none":
			continue
		case "common":
			f |= FeatCommon
			continue
		case "all":
			f |= FeatAll
			continue
		}
		found := false
		for _, fn := range featureNames {
			if fn.name == p {
				f |= fn.f
				found = true
			}
		}
		if !found {
			return 0, fmt.Errorf("webfarm: unknown feature %q", p)
		}
	}
	return f, nil
}

// Config describes a farm. The zero value is not usable; start from
// DefaultConfig.
type Config struct {
	// Seed makes the farm: the same Config always serves the same bytes.
	Seed int64
	// Hosts is the number of virtual sites (1..65024).
	Hosts int
	// PagesPerHost is the number of ordinary HTML pages of each host
	// (page 0 is the home page "/"); 1..40000.
	PagesPerHost int
	// SharedIPHosts is how many hosts have no address of their own: host
	// Hosts-SharedIPHosts+j shares the address of host j. At most Hosts/2.
	SharedIPHosts int
	// Domain is the domain of every host name: site0000.<Domain>.
	// Default "farm.test".
	Domain string
	// Port is the TCP port of every host. 0 picks one port that is free
	// on every address. The URLs of the farm contain it (":80" is left out).
	Port int
	// Features apply to every host not named in HostFeatures.
	Features Features
	// HostFeatures overrides Features for the hosts it names (by index).
	HostFeatures map[int]Features
	// LargeBytes is the size of the large page (FeatLarge). Default 4 MiB.
	LargeBytes int64
	// SlowChunks and SlowDelay shape the slow pages: the body is sent in
	// SlowChunks pieces, SlowDelay apart. Defaults 5 and 100ms.
	SlowChunks int
	SlowDelay  time.Duration
	// StallMax ends a stalled response after this long (0: never; the
	// response ends when the client goes away or the farm stops).
	StallMax time.Duration
	// CalendarStart is the month the calendar trap is entered at.
	// Default January 2024.
	CalendarStart time.Time
	// RobotsAgent is the product token some robots.txt files address a
	// group to. Default "trawl".
	RobotsAgent string
	// Epoch is the Last-Modified time of version 0 of every document;
	// each later version adds a day. Default 2024-01-01T00:00:00Z.
	Epoch time.Time
	// LogCap bounds the request log kept in memory (0: keep all). When
	// full, the oldest entries are dropped (and counted).
	LogCap int
	// LogWriter, when set, receives every request as a JSON line.
	LogWriter io.Writer
	// Logger receives operational messages. Default: discard.
	Logger *slog.Logger
	// Now is the clock for the request log. Default time.Now.
	Now func() time.Time
}

// DefaultConfig returns a farm of hosts sites with pagesPerHost ordinary
// pages each: every host has FeatCommon, and one host in ten has one
// heavier feature, by index modulo 10: 1 calendar, 2 deep paths, 3 slow
// and large pages, 4 a stalled page, 5 a Crawl-delay, 6 robots.txt
// errors. Two hosts in twenty share an address with another host.
func DefaultConfig(seed int64, hosts, pagesPerHost int) Config {
	c := Config{
		Seed:          seed,
		Hosts:         hosts,
		PagesPerHost:  pagesPerHost,
		SharedIPHosts: hosts / 10,
		Port:          8080,
		Features:      FeatCommon,
		HostFeatures:  map[int]Features{},
	}
	extra := map[int]Features{
		1: FeatCalendar, 2: FeatDeepPaths, 3: FeatSlow | FeatLarge, 4: FeatStall,
		5: FeatCrawlDelay, 6: FeatRobotsErrors,
	}
	for i := 0; i < hosts; i++ {
		if e, ok := extra[i%10]; ok {
			c.HostFeatures[i] = FeatCommon | e
		}
	}
	return c
}

// maxHosts is the number of 127.1.x.y addresses the farm uses.
const maxHosts = 256 * 254

func (c *Config) normalize() error {
	if c.Hosts < 1 || c.Hosts > maxHosts {
		return fmt.Errorf("webfarm: hosts %d out of range 1..%d", c.Hosts, maxHosts)
	}
	if c.PagesPerHost < 1 || c.PagesPerHost > 40000 {
		return fmt.Errorf("webfarm: pages per host %d out of range 1..40000", c.PagesPerHost)
	}
	if c.SharedIPHosts < 0 || c.SharedIPHosts > c.Hosts/2 {
		return fmt.Errorf("webfarm: shared-IP hosts %d out of range 0..%d", c.SharedIPHosts, c.Hosts/2)
	}
	if c.Port < 0 || c.Port > 65535 {
		return fmt.Errorf("webfarm: port %d out of range", c.Port)
	}
	if c.Domain == "" {
		c.Domain = "farm.test"
	}
	c.Domain = strings.ToLower(strings.Trim(c.Domain, "."))
	for _, r := range c.Domain {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '.') {
			return fmt.Errorf("webfarm: bad domain %q", c.Domain)
		}
	}
	for h := range c.HostFeatures {
		if h < 0 || h >= c.Hosts {
			return fmt.Errorf("webfarm: host feature override for host %d out of range", h)
		}
	}
	if c.LargeBytes == 0 {
		c.LargeBytes = 4 << 20
	}
	if c.LargeBytes < 4096 {
		return errors.New("webfarm: large bytes must be at least 4096")
	}
	if c.SlowChunks <= 0 {
		c.SlowChunks = 5
	}
	if c.SlowDelay <= 0 {
		c.SlowDelay = 100 * time.Millisecond
	}
	if c.CalendarStart.IsZero() {
		c.CalendarStart = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	if c.RobotsAgent == "" {
		c.RobotsAgent = "trawl"
	}
	if c.Epoch.IsZero() {
		c.Epoch = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.LogCap < 0 {
		return errors.New("webfarm: negative log cap")
	}
	return nil
}

// hostFeatureList returns the per-host features in index order.
func (c *Config) hostFeatureList() []Features {
	out := make([]Features, c.Hosts)
	for i := range out {
		out[i] = c.Features
	}
	keys := make([]int, 0, len(c.HostFeatures))
	for k := range c.HostFeatures {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	for _, k := range keys {
		out[k] = c.HostFeatures[k]
	}
	return out
}
