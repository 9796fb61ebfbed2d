package config

import (
	"fmt"
	"net/netip"
	"sync"

	"github.com/trawl/trawl/internal/filter"
)

// FilterConfig turns the scope's four rule sets into the filter package's
// configuration. File rules carry their path resolved against the
// configuration file's directory.
func (s Scope) FilterConfig() (filter.Config, error) {
	var fc filter.Config
	var err error
	conv := func(rs RuleSet) []filter.Rule {
		out := make([]filter.Rule, 0, len(rs.Rules))
		for _, r := range rs.Rules {
			t, e := filter.ParseRuleType(string(r.Kind))
			if e != nil && err == nil {
				err = fmt.Errorf("config: rule %s:%s: %w", r.Kind, r.Pattern, e)
			}
			p := r.Pattern
			if r.Kind == File && r.Path != "" {
				p = r.Path
			}
			out = append(out, filter.Rule{Type: t, Pattern: p})
		}
		return out
	}
	fc.IncludeDomains = conv(s.IncludeDomains)
	fc.ExcludeDomains = conv(s.ExcludeDomains)
	fc.IncludeURIs = conv(s.IncludeURIs)
	fc.ExcludeURIs = conv(s.ExcludeURIs)
	return fc, err
}

// Filter compiles the scope into a matcher.
func (s Scope) Filter() (*filter.Filter, error) {
	fc, err := s.FilterConfig()
	if err != nil {
		return nil, err
	}
	return filter.New(fc)
}

// Membership returns a MembershipFunc for For that matches subcollection
// scopes with the filter package, compiling each distinct scope once. A
// scope that does not compile (the validator reports it) matches nothing.
// The returned function is safe for concurrent use.
func (c *Collection) Membership() MembershipFunc {
	var mu sync.Mutex
	compiled := map[*Section]*filter.Filter{}
	return func(s Scope, uri string) bool {
		var sub *Section
		for _, sc := range c.SubCollections {
			if sameScope(c.SubScope(sc), s) {
				sub = sc
				break
			}
		}
		mu.Lock()
		f, ok := compiled[sub]
		if !ok {
			f, _ = s.Filter()
			compiled[sub] = f
		}
		mu.Unlock()
		if f == nil {
			return false
		}
		okURI, _ := f.Allowed(uri, netip.Addr{})
		return okURI
	}
}

func sameScope(a, b Scope) bool {
	eq := func(x, y RuleSet) bool {
		if x.Present != y.Present || len(x.Rules) != len(y.Rules) {
			return false
		}
		for i := range x.Rules {
			if x.Rules[i] != y.Rules[i] {
				return false
			}
		}
		return true
	}
	return eq(a.IncludeDomains, b.IncludeDomains) && eq(a.ExcludeDomains, b.ExcludeDomains) &&
		eq(a.IncludeURIs, b.IncludeURIs) && eq(a.ExcludeURIs, b.ExcludeURIs)
}
