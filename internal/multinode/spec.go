package multinode

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/config"
	"github.com/trawl/trawl/internal/filter"
)

// maxStartURIFile caps one start_uri_files file.
const maxStartURIFile = 64 << 20

// CollectionSpec is a crawl collection prepared for the multinode
// scheduler: the parsed configuration, its PKT_DSPEC dictionary, the start
// URIs (start_uris and the contents of start_uri_files) and the routing
// settings. NewCollectionSpec does the file reading, so that the state
// machine never touches a file. A CollectionSpec is immutable once built.
type CollectionSpec struct {
	Name string
	// Config is the parsed collection.
	Config *config.Collection
	// Dict is the collection's crawl configuration structure (2.2.2.3).
	Dict cmt.Collection
	// StartURIs are queued when the collection is added.
	StartURIs []string
	// DomainClustering routes hosts of one registered domain together.
	DomainClustering bool
	// Clusters are the site_clusters groups, in document order.
	Clusters []SiteCluster
	// Proxy is true when the collection crawls through a proxy: sites are
	// not resolved and routes carry no addresses (2.2.3.8).
	Proxy bool
	// MuFilter is the size in bits of the Bloom filter that drops URIs a
	// node scheduler sends again (mufilter; 0 disables it).
	MuFilter int
	// NodeScopes restrict the sites a node scheduler may be routed to: a
	// Node element with include_domains or exclude_domains rules admits only
	// the hosts those rules accept.
	NodeScopes map[string]*filter.Filter
}

// SiteCluster is one site_clusters group: sites that must be routed to
// one node scheduler.
type SiteCluster struct {
	Name  string
	Sites []string // lower case host names or domains
}

// NewCollectionSpec prepares c. readFile reads start URI files (nil means
// os.ReadFile); relative paths resolve against the configuration's
// directory.
func NewCollectionSpec(c *config.Collection, readFile func(string) ([]byte, error)) (*CollectionSpec, error) {
	if c == nil || c.Name == "" {
		return nil, fmt.Errorf("multinode: collection without a name")
	}
	if readFile == nil {
		readFile = os.ReadFile
	}
	dict, err := CrawlConfigDict(c)
	if err != nil {
		return nil, err
	}
	if _, err := (&cmt.CrawlConfig{Collections: []cmt.Collection{dict}}).Value(); err != nil {
		return nil, fmt.Errorf("multinode: collection %s: %w", c.Name, err)
	}
	top := c.Top()
	s := &CollectionSpec{
		Name:             c.Name,
		Config:           c,
		Dict:             dict,
		DomainClustering: top.DomainClustering(),
		Proxy:            len(top.Proxy()) > 0,
		MuFilter:         top.Mufilter(),
	}
	seen := map[string]bool{}
	add := func(u string) {
		u = strings.TrimSpace(u)
		if u == "" || strings.HasPrefix(u, "#") || seen[u] {
			return
		}
		seen[u] = true
		s.StartURIs = append(s.StartURIs, u)
	}
	for _, u := range top.StartURIs() {
		add(u)
	}
	for _, f := range top.StartURIFiles() {
		path := f
		if !filepath.IsAbs(path) && c.Dir != "" {
			path = filepath.Join(c.Dir, path)
		}
		data, err := readFile(path)
		if err != nil {
			return nil, fmt.Errorf("multinode: collection %s: start_uri_files: %w", c.Name, err)
		}
		if len(data) > maxStartURIFile {
			return nil, fmt.Errorf("multinode: collection %s: start_uri_files: %s larger than %d bytes", c.Name, path, maxStartURIFile)
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		for sc.Scan() {
			add(sc.Text())
		}
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("multinode: collection %s: start_uri_files: %s: %w", c.Name, path, err)
		}
	}
	if sc := c.Root.Child("site_clusters"); sc != nil {
		for _, p := range sc.Params {
			cl := SiteCluster{Name: p.Name}
			for _, m := range p.Value.List {
				if h := normHost(m); h != "" {
					cl.Sites = append(cl.Sites, h)
				}
			}
			if len(cl.Sites) > 0 {
				s.Clusters = append(s.Clusters, cl)
			}
		}
	}
	for _, n := range c.Nodes {
		if n.Child("include_domains") == nil && n.Child("exclude_domains") == nil {
			continue
		}
		scope := c.Effective("", n.Name).Scope()
		inc, err := filterRules(scope.IncludeDomains)
		if err != nil {
			return nil, fmt.Errorf("multinode: collection %s: node %s: %w", c.Name, n.Name, err)
		}
		exc, err := filterRules(scope.ExcludeDomains)
		if err != nil {
			return nil, fmt.Errorf("multinode: collection %s: node %s: %w", c.Name, n.Name, err)
		}
		f, err := filter.New(filter.Config{IncludeDomains: inc, ExcludeDomains: exc, BaseDir: c.Dir})
		if err != nil {
			return nil, fmt.Errorf("multinode: collection %s: node %s: %w", c.Name, n.Name, err)
		}
		if s.NodeScopes == nil {
			s.NodeScopes = map[string]*filter.Filter{}
		}
		s.NodeScopes[n.Name] = f
	}
	return s, nil
}

func filterRules(rs config.RuleSet) ([]filter.Rule, error) {
	var out []filter.Rule
	for _, r := range rs.Rules {
		t, err := filter.ParseRuleType(string(r.Kind))
		if err != nil {
			return nil, err
		}
		pat := r.Pattern
		if r.Kind == config.File && r.Path != "" {
			pat = r.Path
		}
		out = append(out, filter.Rule{Type: t, Pattern: pat})
	}
	return out, nil
}

// SpecsFromFiles parses configuration files and prepares every collection
// in them. A collection name may appear in only one file.
func SpecsFromFiles(paths []string) ([]*CollectionSpec, error) {
	var out []*CollectionSpec
	where := map[string]string{}
	for _, p := range paths {
		cfg, err := config.ParseFile(p, nil)
		if err != nil {
			return nil, err
		}
		for _, c := range cfg.Collections {
			if prev, dup := where[c.Name]; dup {
				return nil, fmt.Errorf("multinode: collection %s defined in %s and %s", c.Name, prev, p)
			}
			where[c.Name] = p
			s, err := NewCollectionSpec(c, nil)
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		}
	}
	return out, nil
}
