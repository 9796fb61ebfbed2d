package multinode

import (
	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/cmt/cmtconfig"
	"github.com/trawl/trawl/internal/config"
)

// CrawlConfigDict maps a parsed crawl collection to its entry in the crawl
// configuration structure of MS-FSCMT 2.2.2.3, the PKT_DSPEC of
// CMD_ADM_CONF_ADD and CMD_ADM_CONF_UPDATE. The mapping itself is
// cmtconfig.CrawlConfig: every attrib the file sets (boolean as the
// integer 1 or 0), sections as nested dictionaries, SubDomain, Login and Node
// elements under "subdomains", "logins" and "nodes". Encrypted passwords
// travel encrypted.
func CrawlConfigDict(c *config.Collection) (cmt.Collection, error) {
	if c.Root == nil {
		return cmt.Collection{Name: c.Name}, nil
	}
	return cmtconfig.CrawlConfig(c), nil
}

// CrawlConfigOf returns the crawl configuration structure holding the single
// collection c ({name: {...}}, the shape of example 4.5).
func CrawlConfigOf(c *config.Collection) (cmt.CrawlConfig, error) {
	col, err := CrawlConfigDict(c)
	if err != nil {
		return cmt.CrawlConfig{}, err
	}
	return cmt.CrawlConfig{Collections: []cmt.Collection{col}}, nil
}
