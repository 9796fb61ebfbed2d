package webfarm

import (
	"fmt"
	"strings"
)

// LinkKind is the kind of construct a link was found in, named after the
// MS-FSCCFG link_extraction parameters (section 2.2.4.17).
type LinkKind uint8

// The link kinds the farm emits. KindFrame covers both FRAME and IFRAME.
// KindSitemap marks URLs listed in a sitemap; KindRedirect the Location of
// an HTTP redirect.
const (
	KindA LinkKind = iota
	KindArea
	KindComment
	KindEmbed
	KindFrame
	KindImg
	KindLink
	KindMetaRefresh
	KindObject
	KindScript
	KindStyle
	KindSitemap
	KindRedirect
	numKinds
)

var kindNames = [numKinds]string{"a", "area", "comment", "embed", "frame", "img", "link",
	"meta_refresh", "object", "script", "style", "sitemap", "redirect"}

func (k LinkKind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// LinkKinds is a set of link kinds, the crawl's link_extraction settings.
type LinkKinds uint32

// Has reports whether k is in the set.
func (s LinkKinds) Has(k LinkKind) bool { return s&(1<<k) != 0 }

// With returns the set with k added (on) or removed.
func (s LinkKinds) With(k LinkKind, on bool) LinkKinds {
	if on {
		return s | 1<<k
	}
	return s &^ (1 << k)
}

// HTMLKinds lists the link_extraction kinds that appear in the farm's
// HTML, in link_extraction parameter order.
var HTMLKinds = []LinkKind{KindA, KindArea, KindComment, KindEmbed, KindFrame, KindImg, KindLink,
	KindMetaRefresh, KindObject, KindScript, KindStyle}

// DefaultLinkKinds is MS-FSCCFG's default link_extraction: every kind but img.
var DefaultLinkKinds = func() LinkKinds {
	var s LinkKinds
	for _, k := range HTMLKinds {
		if k != KindImg {
			s = s.With(k, true)
		}
	}
	return s
}()

// String lists the kinds in the set.
func (s LinkKinds) String() string {
	var parts []string
	for _, k := range HTMLKinds {
		if s.Has(k) {
			parts = append(parts, k.String())
		}
	}
	return strings.Join(parts, ",")
}

// Link is one link found in a document of the farm.
type Link struct {
	Kind LinkKind
	// URL is the link's target, resolved and normalized: lower-case
	// scheme and host, no default port, no fragment, no dot segments.
	URL string
	// End is the offset, in the decoded body, just past the construct
	// holding the link (the ">" of its start tag, or the "-->" of a
	// comment). A document truncated at n bytes keeps the links with
	// End <= n.
	End int64
	// Delay is the delay of a meta refresh, in seconds.
	Delay int
}
