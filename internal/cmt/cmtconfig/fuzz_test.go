package cmtconfig

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/config"
	"github.com/trawl/trawl/internal/marshal"
)

// FuzzFromCrawlConfig: a crawl configuration received over MS-FSCMT
// (CMD_ADM_CONF_ADD, marshal bytes) rebuilds a collection or fails with an
// error, never a panic, whatever names and values it carries. Seeded with
// the spec's example configurations as a node scheduler receives them.
func FuzzFromCrawlConfig(f *testing.F) {
	files, _ := filepath.Glob("../../config/testdata/examples/*.xml")
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		cfg, err := config.Parse(file, data, &config.Options{SkipFileChecks: true})
		if err != nil {
			continue
		}
		cc := cmt.CrawlConfig{}
		for _, c := range cfg.Collections {
			cc.Collections = append(cc.Collections, CrawlConfig(c))
		}
		d, err := cc.Value()
		if err != nil {
			continue
		}
		if b, err := marshal.Encode(d); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := marshal.Decode(b)
		if err != nil {
			return
		}
		cc, err := cmt.CrawlConfigFromValue(v)
		if err != nil {
			return
		}
		for _, c := range cc.Collections {
			col, err := FromCrawlConfig("fuzz", c, &config.Options{SkipFileChecks: true})
			if err != nil {
				continue
			}
			if col.Name != c.Name {
				t.Fatalf("collection %q rebuilt as %q", c.Name, col.Name)
			}
		}
	})
}
