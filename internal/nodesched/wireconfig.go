package nodesched

import (
	"fmt"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/cmt/cmtconfig"
	"github.com/trawl/trawl/internal/config"
)

// CollectionFromWire turns one collection of a PKT_DSPEC (MS-FSCMT 2.2.2.3)
// back into a parsed MS-FSCCFG collection with cmtconfig.FromCrawlConfig, so the
// collection a node scheduler crawls with is validated by exactly the rules
// `trawl config check` applies.
func CollectionFromWire(c *cmt.Collection) (*config.Collection, error) {
	name := "collection " + c.Name + " (CMD_ADM_CONF_ADD)"
	col, err := cmtconfig.FromCrawlConfig(name, *c, nil)
	if err != nil {
		// Rule and start URI files live on the machine that wrote the
		// configuration; accept the collection without them.
		col2, err2 := cmtconfig.FromCrawlConfig(name, *c, &config.Options{SkipFileChecks: true})
		if err2 != nil {
			return nil, fmt.Errorf("nodesched: %w", err)
		}
		col = col2
	}
	return col, nil
}
