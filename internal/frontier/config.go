package frontier

import (
	"fmt"
	"time"
)

// PopScheme is workqueue_priority/pop_scheme: how a site's priority levels
// are served.
type PopScheme int

// Pop schemes (MS-FSCCFG §2.2.4.15). "default" is wrr.
const (
	PopWRR PopScheme = iota // weighted round robin by each level's share
	PopRR                   // round robin over the levels that have work
	PopPri                  // strict priority: level 1 first
)

// RefreshMode is refresh_mode (MS-FSCCFG §2.2.3).
type RefreshMode int

// Refresh modes.
const (
	RefreshScratch  RefreshMode = iota // truncate the queues, then queue the start URIs
	RefreshAppend                      // start URIs at the end of the queues
	RefreshPrepend                     // start URIs at the front of the queues
	RefreshSoft                        // a site refreshes only once its queue is empty
	RefreshAdaptive                    // start URIs plus known URIs rescheduled by score
)

// ParseRefreshMode maps the configuration string to a RefreshMode.
func ParseRefreshMode(s string) (RefreshMode, error) {
	switch s {
	case "scratch":
		return RefreshScratch, nil
	case "append":
		return RefreshAppend, nil
	case "prepend":
		return RefreshPrepend, nil
	case "soft":
		return RefreshSoft, nil
	case "adaptive":
		return RefreshAdaptive, nil
	}
	return 0, fmt.Errorf("frontier: unknown refresh_mode %q", s)
}

// ParsePopScheme maps the configuration string to a PopScheme.
func ParsePopScheme(s string) (PopScheme, error) {
	switch s {
	case "default", "wrr":
		return PopWRR, nil
	case "rr":
		return PopRR, nil
	case "pri":
		return PopPri, nil
	}
	return 0, fmt.Errorf("frontier: unknown pop_scheme %q", s)
}

// Adaptive is the adaptive section (MS-FSCCFG §2.2.4.24).
type Adaptive struct {
	RefreshCount   int // minor refresh cycles per refresh cycle: known URIs are rescheduled at the start of each (4)
	RefreshQuota   int // percent of served entries that are rescheduled (known) URIs when both kinds wait (90)
	CoverageMin    int // at least this many known URIs of a site are rescheduled per refresh (25)
	CoverageMaxPct int // at most this percent of a site's known URIs per refresh, if above CoverageMin (10)
}

// Config is everything about scheduling the frontier takes from the crawl
// configuration, as plain Go values. Zero values mean the spec's defaults
// where DefaultConfig documents one.
type Config struct {
	Collection string

	MaxSites          int           // max_sites: sites crawled at once (128)
	MaxPending        int           // max_pending: outstanding fetches per site (2)
	Delay             time.Duration // delay between fetch starts on one site (60 s); 0 is allowed
	Slots             []DelaySlot   // variable_delay: time slots with their own delay, or none at all (slots.go)
	EnforceDelayPerIP bool          // enforce_delay_per_ip: the delay also holds per IP address
	ObeyRobotsDelay   bool          // obey_robots_delay: a robots.txt Crawl-delay raises the delay
	MaxInterDocs      int           // max_inter_docs: docs from one site before yielding its slot (0: no limit)
	MaxDoc            int           // max_doc: docs per site per refresh cycle (0: no limit)
	// SiteDelay and SiteMaxDoc, when set, give a site its own delay and
	// max_doc instead of Delay and MaxDoc (the crawl subcollections that
	// cover the site); each is asked once per site while the frontier is
	// open.
	SiteDelay  func(site string) time.Duration
	SiteMaxDoc func(site string) int

	Levels        int       // workqueue_priority/levels (1)
	DefaultLevel  int       // workqueue_priority/default (1)
	StartURILevel int       // workqueue_priority/start_uri_pri (1)
	PopScheme     PopScheme // workqueue_priority/pop_scheme
	Shares        []int     // share of level i+1 under wrr (missing or <1: 1)
	// PutLevel is workqueue_priority/put_scheme include: the priority
	// level of a URI queued without one (not a start URI), 0 for the
	// default level. Nil is put_scheme default. It must be safe to call
	// from the frontier's goroutine and must not block.
	PutLevel func(uri string) int

	MaxHops         int // crawlmode DEPTH:#; -1 for FULL
	MaxURIRecursion int // max_uri_recursion (5); 0 disables the check

	WQFilter     bool    // wqfilter: exact duplicate filter on the queues (seen-set on disk)
	SMFilterBits int     // smfilter: Bloom filter bits (0: none)
	BloomFPRate  float64 // the false-positive rate the number of hash functions is chosen for (0.01)

	RefreshMode     RefreshMode
	Refresh         time.Duration // refresh period (1500 min)
	RefreshWhenIdle bool
	DBSwitch        int  // dbswitch: cycles a URI may go uncrawled (5); 0 disables the clean-site pass
	DBSwitchDelete  bool // dbswitch_delete
	Adaptive        Adaptive
	// Score ranks known URIs for adaptive rescheduling (default DefaultScore).
	Score func(KnownURI) float64
	// OnAdaptive, when set, is told each site's adaptive rescheduling
	// decision (Refresh, Reschedule and RefreshSub in adaptive mode), just
	// before its URIs are queued. It is called from the caller's goroutine,
	// must not block, and must not keep AdaptiveSite.Taken. Nil costs
	// nothing.
	OnAdaptive func(AdaptiveSite)
	// Subs are the crawl subcollections, which may start refresh rounds
	// of their own URIs inside the collection's cycle (subrefresh.go);
	// SubOf gives the index in Subs of the subcollection a URI belongs to,
	// or -1. SubOf must be set when Subs is not empty, be safe to call
	// from the frontier's goroutine and not block.
	Subs  []SubRefresh
	SubOf func(uri string) int

	MaxBackoffCounter int           // max_backoff_counter (50)
	MaxBackoffDelay   time.Duration // max_backoff_delay (600 s)

	// RequireIP makes a site resolve its IP before it is crawled (implied by
	// EnforceDelayPerIP and RequireGrant).
	RequireIP bool
	// RequireGrant makes a site ask the multinode scheduler for permission
	// to crawl its IP (CMD_UM_START_CRAWL_IP) before it is crawled.
	RequireGrant  bool
	MaxSitesPerIP int           // more sites than this on one IP are blocked (10, MS-FSCMT §3.1.5.21)
	BlockDuration time.Duration // block after a denied grant (30 min)

	HeadSize   int // queue entries kept in memory per site and level (8)
	RefillSize int // entries loaded at once when a site being served runs out of them (64)
	// SeenCacheSize bounds the seen-set cache in front of the exact
	// seen-set (entries; 0: DefaultSeenCacheSize; negative: no cache).
	SeenCacheSize int
	MaxExtraLen   int // largest Entry.Extra accepted (64 KiB)
}

// DefaultConfig returns the spec's defaults.
func DefaultConfig(collection string) Config {
	return Config{
		Collection: collection, MaxSites: 128, MaxPending: 2, Delay: 60 * time.Second,
		EnforceDelayPerIP: true, Levels: 1, DefaultLevel: 1, StartURILevel: 1, PopScheme: PopWRR,
		MaxHops: -1, MaxURIRecursion: 5, WQFilter: true, RefreshMode: RefreshScratch,
		Refresh: 1500 * time.Minute, DBSwitch: 5,
		Adaptive:          Adaptive{RefreshCount: 4, RefreshQuota: 90, CoverageMin: 25, CoverageMaxPct: 10},
		MaxBackoffCounter: 50, MaxBackoffDelay: 600 * time.Second,
	}
}

func (c *Config) setDefaults() error {
	if c.Collection == "" {
		return fmt.Errorf("frontier: empty collection name")
	}
	if c.MaxSites <= 0 {
		c.MaxSites = 128
	}
	if c.MaxPending <= 0 {
		c.MaxPending = 2
	}
	if c.Delay < 0 {
		return fmt.Errorf("frontier: negative delay %v", c.Delay)
	}
	if c.Levels <= 0 {
		c.Levels = 1
	}
	if c.Levels > 250 {
		return fmt.Errorf("frontier: %d priority levels, at most 250", c.Levels)
	}
	clamp := func(v int) int {
		if v < 1 {
			return 1
		}
		if v > c.Levels {
			return c.Levels
		}
		return v
	}
	c.DefaultLevel = clamp(c.DefaultLevel)
	c.StartURILevel = clamp(c.StartURILevel)
	if c.BloomFPRate <= 0 || c.BloomFPRate >= 1 {
		c.BloomFPRate = 0.01
	}
	if c.Refresh <= 0 {
		c.Refresh = 1500 * time.Minute
	}
	if c.Adaptive.RefreshQuota < 0 || c.Adaptive.RefreshQuota > 100 {
		return fmt.Errorf("frontier: refresh_quota %d is not a percentage", c.Adaptive.RefreshQuota)
	}
	if len(c.Subs) > 0 && c.SubOf == nil {
		return fmt.Errorf("frontier: subcollections without SubOf")
	}
	if c.Score == nil {
		c.Score = DefaultScore
	}
	if c.MaxBackoffDelay <= 0 {
		c.MaxBackoffDelay = 600 * time.Second
	}
	if c.EnforceDelayPerIP || c.RequireGrant {
		c.RequireIP = true
	}
	if c.MaxSitesPerIP <= 0 {
		c.MaxSitesPerIP = 10
	}
	if c.BlockDuration <= 0 {
		c.BlockDuration = 30 * time.Minute
	}
	if c.HeadSize <= 0 {
		c.HeadSize = 8
	}
	if c.RefillSize <= 0 {
		c.RefillSize = 64
	}
	if c.MaxExtraLen <= 0 {
		c.MaxExtraLen = 64 << 10
	}
	return nil
}

func (c *Config) share(level int) int {
	if level-1 < len(c.Shares) && c.Shares[level-1] > 0 {
		return c.Shares[level-1]
	}
	return 1
}
