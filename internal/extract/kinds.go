package extract

import (
	"fmt"
	"strings"
)

// Kind is where in a document a link was found. The kinds are the
// attributes of the MS-FSCCFG link_extraction section (section 2.2.4.17).
type Kind uint8

// The link kinds, named as in link_extraction.
const (
	KindA           Kind = iota // <a href>
	KindAction                  // action attributes (<form action>, formaction)
	KindArea                    // <area href>
	KindCard                    // WML <card onenterforward|onenterbackward|ontimer>
	KindComment                 // URLs inside <!-- comments -->
	KindEmbed                   // <embed src>
	KindFrame                   // <frame src>, <iframe src>
	KindGo                      // WML <go href>
	KindImg                     // <img src>
	KindLayer                   // <layer src>, <ilayer src>
	KindLink                    // <link href>
	KindMeta                    // <meta content> holding an absolute URL (og:url, ...)
	KindMetaRefresh             // <meta http-equiv="refresh" content="n; url=...">
	KindObject                  // <object data>, <param> of objects, <applet code>
	KindScript                  // <script src>
	KindScriptJava              // URLs in inline JavaScript
	KindStyle                   // url(...) and @import in <style> and style attributes
	numKinds
)

var kindNames = [numKinds]string{"a", "action", "area", "card", "comment", "embed", "frame", "go", "img",
	"layer", "link", "meta", "meta_refresh", "object", "script", "script_java", "style"}

// String is the kind's link_extraction attribute name.
func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// ParseKind maps a link_extraction attribute name to its Kind.
func ParseKind(name string) (Kind, error) {
	for i, n := range kindNames {
		if strings.EqualFold(n, strings.TrimSpace(name)) {
			return Kind(i), nil
		}
	}
	return 0, fmt.Errorf("extract: unknown link kind %q", name)
}

// KindSet is a set of kinds.
type KindSet uint32

// Has reports whether k is in the set.
func (s KindSet) Has(k Kind) bool { return s&(1<<k) != 0 }

// With returns the set with k added.
func (s KindSet) With(k Kind) KindSet { return s | 1<<k }

// Without returns the set without k.
func (s KindSet) Without(k Kind) KindSet { return s &^ (1 << k) }

// AllKinds has every kind.
const AllKinds KindSet = 1<<numKinds - 1

// DefaultKinds is the link_extraction default: every kind but img.
const DefaultKinds = AllKinds &^ (1 << KindImg)

// KindsFromConfig builds a set from link_extraction values (name to
// yes/no), starting from DefaultKinds for names not given.
func KindsFromConfig(values map[string]bool) (KindSet, error) {
	s := DefaultKinds
	for name, on := range values {
		k, err := ParseKind(name)
		if err != nil {
			return 0, err
		}
		if on {
			s = s.With(k)
		} else {
			s = s.Without(k)
		}
	}
	return s, nil
}
