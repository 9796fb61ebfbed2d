package crawlpipe

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/dlclark/regexp2"

	"github.com/trawl/trawl/internal/config"
)

// Reporting holds the compiled pp/ds_meta_info, ds_max_ecl, max_dupes and
// ecl_override of a collection.
type Reporting struct {
	Duplicates, Redirects, Mirrors, Metadata bool
	// MaxECL caps the duplicates and the redirects reported (ecl_override
	// matches aside); MaxDupes the ones recorded per document.
	MaxECL, MaxDupes int
	// Override is ecl_override (nil when unset).
	Override *regexp2.Regexp
}

// Bounds of the reported lists.
const (
	// MaxOverride caps the URIs matching ecl_override kept per list.
	MaxOverride = 1000
	// maxMirrors caps the mirror URIs reported with one document.
	maxMirrors = 1000
	// MaxListURIBytes caps one URI in a list.
	MaxListURIBytes = 64 << 10
	// overrideTimeout bounds one ecl_override match.
	overrideTimeout = 100 * time.Millisecond
)

// CompileReporting compiles the pp section's reporting rows.
func CompileReporting(pp config.PPSection) (Reporting, error) {
	r := Reporting{MaxECL: max(pp.DSMaxECL, 0), MaxDupes: max(pp.MaxDupes, 0)}
	for _, v := range pp.DSMetaInfo {
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "duplicates":
			r.Duplicates = true
		case "redirects":
			r.Redirects = true
		case "mirrors":
			r.Mirrors = true
		case "metadata":
			r.Metadata = true
		}
	}
	if pp.ECLOverride != nil && *pp.ECLOverride != "" {
		re, err := config.CompileRegexp(*pp.ECLOverride)
		if err != nil {
			return r, fmt.Errorf("pp/ecl_override: %w", err)
		}
		re.MatchTimeout = overrideTimeout
		r.Override = re
	}
	return r, nil
}

// Overrides reports whether ecl_override matches uri.
func (r *Reporting) Overrides(uri string) bool {
	if r.Override == nil {
		return false
	}
	ok, err := r.Override.MatchString(uri)
	return err == nil && ok
}

// Report returns what an operation reports of a list.
func (r *Reporting) Report(list []string) []string {
	var out []string
	n := 0
	for _, u := range list {
		switch {
		case r.Overrides(u):
			out = append(out, u)
		case n < r.MaxECL:
			out = append(out, u)
			n++
		}
	}
	return out
}

// MirrorURIs returns uri on every mirror site of its site
// (mirror_site_files), sorted, at most maxMirrors.
func (s *Settings) MirrorURIs(uri string) []string {
	if s.Opt == nil || len(s.Opt.Mirrors) == 0 {
		return nil
	}
	u, err := url.Parse(uri)
	if err != nil || u.Host == "" {
		return nil
	}
	site, host, port := strings.ToLower(u.Host), strings.ToLower(u.Hostname()), u.Port()
	var out []string
	for mirror, pref := range s.Opt.Mirrors {
		mu := *u
		switch {
		case pref == site && strings.Contains(mirror, ":") == strings.Contains(pref, ":"):
			mu.Host = mirror
		case pref == host && !strings.Contains(mirror, ":"):
			mu.Host = mirror
			if port != "" {
				mu.Host += ":" + port
			}
		default:
			continue
		}
		out = append(out, mu.String())
	}
	slices.Sort(out)
	out = slices.Compact(out)
	if len(out) > maxMirrors {
		out = out[:maxMirrors]
	}
	return out
}
