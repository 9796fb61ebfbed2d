package extract

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestLinkType: a LINK tag's type attribute is kept (lower case), the
// way rss auto_discover recognises a feed; other tags have none.
func TestLinkType(t *testing.T) {
	page := `<html><head>
<link rel="Alternate" type=" Application/RSS+XML " href="/feed.rss">
<link rel="stylesheet" href="/s.css">
</head><body><a href="/a" type="text/html">a</a></body></html>`
	var got []Link
	for _, l := range Extract([]byte(page), Options{Kinds: AllKinds}).Links {
		got = append(got, Link{URL: l.URL, Kind: l.Kind, Rel: l.Rel, Type: l.Type})
	}
	want := []Link{
		{URL: "/feed.rss", Kind: KindLink, Rel: "alternate", Type: "application/rss+xml"},
		{URL: "/s.css", Kind: KindLink, Rel: "stylesheet"},
		{URL: "/a", Kind: KindA},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("links (-want +got):\n%s", d)
	}
}
