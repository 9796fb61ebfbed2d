package crawlpipe

import (
	"fmt"
	"net/netip"

	"github.com/trawl/trawl/internal/config"
	"github.com/trawl/trawl/internal/filter"
	"github.com/trawl/trawl/internal/frontier"
)

// This file compiles the priority level sections of workqueue_priority
// (MS-FSCCFG 2.2.4.15-16): each level's share for the wrr pop scheme, and,
// under put_scheme include, the include_domains / include_uris rules that
// choose the level a URI is queued at.

// compileLevels sets fc.Shares and fc.PutLevel from the effective
// configuration.
func compileLevels(eff *config.Effective, fc *frontier.Config) error {
	levels := eff.PriorityLevels()
	wq := eff.WorkqueuePriority()
	for _, l := range levels {
		if l.Level < 1 || l.Level > wq.Levels || !l.ShareSet {
			continue
		}
		for len(fc.Shares) < l.Level {
			fc.Shares = append(fc.Shares, 0) // 0: the frontier's default share (1)
		}
		fc.Shares[l.Level-1] = l.Share
	}
	if wq.PutScheme != "include" {
		return nil
	}
	type levelRule struct {
		level int
		f     *filter.Filter
	}
	var rules []levelRule
	for _, l := range levels {
		if l.Level < 1 || l.Level > wq.Levels {
			continue
		}
		// A level section without include rules places nothing: an absent
		// include section would otherwise match every URI.
		if !l.Scope.IncludeDomains.Present && !l.Scope.IncludeURIs.Present {
			continue
		}
		sc := config.Scope{IncludeDomains: l.Scope.IncludeDomains, IncludeURIs: l.Scope.IncludeURIs}
		f, err := sc.Filter()
		if err != nil {
			return fmt.Errorf("workqueue_priority level %d: %w", l.Level, err)
		}
		rules = append(rules, levelRule{l.Level, f})
	}
	if len(rules) == 0 {
		return nil
	}
	// The levels are sorted by number: the first match, the highest
	// priority, wins (docs/decisions/frontier.md).
	fc.PutLevel = func(uri string) int {
		for _, r := range rules {
			if ok, _ := r.f.Allowed(uri, netip.Addr{}); ok {
				return r.level
			}
		}
		return 0
	}
	return nil
}
