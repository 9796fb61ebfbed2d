package crawlpipe

import (
	"net/url"
	"strings"

	"github.com/trawl/trawl/internal/extract"
)

// uriDirValue is the uri_dir a collection sets ("" when none: unset, empty
// or the table's default "none").
func uriDirValue(v *string) string {
	if v == nil {
		return ""
	}
	d := strings.TrimSpace(*v)
	if d == "none" {
		return ""
	}
	return d
}

// extractedURIs are the links of an HTML document for its URI file: every
// link res holds, resolved against base and normalized, in document order
// without repeats (those that do not resolve or normalize are left out).
func extractedURIs(s *Settings, base *url.URL, res *extract.Result) []string {
	out := make([]string, 0, len(res.Links))
	seen := make(map[string]bool, len(res.Links))
	for _, l := range res.Links {
		t, err := res.Resolve(base, l.URL)
		if err != nil {
			continue
		}
		nu, err := s.Normalizer.Normalize(t.String(), nil)
		if err != nil {
			continue
		}
		if k := nu.String(); !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

// uriFilesOn reports whether the collection of s keeps URI files (the
// pipeline then lists a document's extracted URIs in Outcome.Extracted).
func (s *Settings) uriFilesOn() bool {
	if s.root != nil {
		s = s.root
	}
	return s.StorageOrDefault().URIDir != ""
}
