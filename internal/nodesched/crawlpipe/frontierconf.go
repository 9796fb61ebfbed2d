package crawlpipe

import (
	"fmt"
	"time"

	"github.com/trawl/trawl/internal/config"
	"github.com/trawl/trawl/internal/frontier"
)

// compileFrontier builds the frontier configuration of collection name
// under eff, from its settings s compiled so far (depth, delays).
func compileFrontier(name string, s *Settings, eff *config.Effective) (frontier.Config, error) {
	fc := frontier.DefaultConfig(name)
	fc.MaxSites = eff.MaxSites()
	fc.MaxPending = eff.MaxPending()
	fc.Delay = s.Delay
	fc.EnforceDelayPerIP = s.EnforceDelayIP
	fc.ObeyRobotsDelay = s.ObeyRobotsDelay
	if v, ok := eff.MaxInterDocs(); ok {
		fc.MaxInterDocs = v
	}
	fc.MaxDoc = eff.MaxDoc()
	wq := eff.WorkqueuePriority()
	fc.Levels, fc.DefaultLevel, fc.StartURILevel = wq.Levels, wq.Default, wq.StartURIPri
	if ps, err := frontier.ParsePopScheme(wq.PopScheme); err == nil {
		fc.PopScheme = ps
	}
	if err := compileLevels(eff, &fc); err != nil {
		return fc, fmt.Errorf("nodesched: collection %s: %w", name, err)
	}
	fc.MaxHops = s.Depth
	// max_uri_recursion is checked by the pipeline with urls.PathRecursion,
	// the rule the webfarm contract states; the frontier's own check is off.
	fc.MaxURIRecursion = 0
	fc.WQFilter = eff.Wqfilter()
	fc.SMFilterBits = eff.Smfilter()
	if rm, err := frontier.ParseRefreshMode(eff.RefreshMode()); err == nil {
		fc.RefreshMode = rm
	}
	if r := eff.Refresh(); r > 0 {
		fc.Refresh = time.Duration(r * float64(time.Minute))
	}
	fc.RefreshWhenIdle = eff.RefreshWhenIdle()
	fc.DBSwitch = eff.Dbswitch()
	fc.DBSwitchDelete = eff.DbswitchDelete()
	ad := eff.Adaptive()
	fc.Adaptive = frontier.Adaptive{RefreshCount: ad.RefreshCount, RefreshQuota: ad.RefreshQuota, CoverageMin: ad.CoverageMin, CoverageMaxPct: ad.CoverageMaxPct}
	// cachesize: the seen-set cache (screened URIs; 0 turns it off) and
	// the queue entries of one site held in memory (wqcache).
	cs := eff.Cachesize()
	if cs.Screened != nil {
		fc.SeenCacheSize = *cs.Screened
		if fc.SeenCacheSize == 0 {
			fc.SeenCacheSize = -1
		}
	}
	if cs.Wqcache != nil {
		fc.RefillSize = max(*cs.Wqcache, 1)
		fc.HeadSize = min(fc.RefillSize, 8)
	}
	fc.MaxBackoffCounter = eff.MaxBackoffCounter()
	fc.MaxBackoffDelay = time.Duration(eff.MaxBackoffDelay()) * time.Second
	fc.RequireIP = true
	fc.RequireGrant = true
	return fc, nil
}
