package frontier

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestPutLevel: under put_scheme include (Config.PutLevel) an entry queued
// without a level takes the level PutLevel chooses, or the default level
// when it chooses none; start URIs keep start_uri_pri.
func TestPutLevel(t *testing.T) {
	cfg := testConfig()
	cfg.Levels, cfg.PopScheme, cfg.MaxPending, cfg.DefaultLevel, cfg.StartURILevel = 3, PopPri, 1, 2, 3
	cfg.HeadSize = 1
	cfg.PutLevel = func(uri string) int {
		switch {
		case strings.Contains(uri, "/news/"):
			return 1
		case strings.Contains(uri, "/archive/"):
			return 3
		}
		return 0
	}
	f, _ := newFrontier(t, cfg)
	mustAdd(t, f, t0,
		Entry{URI: "http://a/start", Site: "a", URIFlags: URIFStartURI},
		Entry{URI: "http://a/archive/1", Site: "a"},
		Entry{URI: "http://a/plain", Site: "a"},
		Entry{URI: "http://a/news/1", Site: "a"},
		Entry{URI: "http://a/news/2", Site: "a", Level: 3}, // an explicit level wins
		Entry{URI: "http://a/news/3", Site: "a"},
	)
	want := []string{"1", "3", "plain", "start", "1", "2"}
	if d := cmp.Diff(want, short(serveAll(t, f, t0))); d != "" {
		t.Errorf("order (-want +got):\n%s", d)
	}
}
