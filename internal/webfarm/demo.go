package webfarm

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
)

// Demo is the synthetic web of trawl run --demo, running, with its files.
type Demo struct {
	Farm *Farm
	// Expect are the URLs a correct crawl of the default crawl fetches.
	Expect []string
	// HostsFile and ConfigFile are the farm's /etc/hosts-format file and
	// an MS-FSCCFG configuration of its default crawl (collection "demo").
	HostsFile, ConfigFile string
}

// StartDemo starts the farm of fc (its Port is ignored) and writes its
// files under dir. The farm keeps its port for a directory (recorded in
// dir/port), so that a second run (after a stop or a crash) continues the
// same crawl.
func StartDemo(ctx context.Context, dir string, fc Config) (*Demo, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	// The synthetic web keeps its port for a data directory, so that a
	// second run (after a stop or a crash) continues the same crawl.
	portFile := filepath.Join(dir, "port")
	fc.Port = 0 // a port free on every address, unless one is recorded
	if b, err := os.ReadFile(portFile); err == nil {
		fmt.Sscan(string(b), &fc.Port)
	}
	farm, err := New(fc)
	if err != nil {
		return nil, err
	}
	if err := farm.Start(ctx); err != nil {
		return nil, fmt.Errorf("starting the synthetic web on port %d (recorded in %s; delete it to pick another): %w", fc.Port, portFile, err)
	}
	if err := os.WriteFile(portFile, []byte(fmt.Sprintln(farm.Port())), 0o644); err != nil {
		farm.Close()
		return nil, err
	}
	crawl := farm.DefaultCrawl()
	expect, err := farm.Expect(crawl)
	if err != nil {
		farm.Close()
		return nil, err
	}
	hostsFile := filepath.Join(dir, "hosts")
	if err := os.WriteFile(hostsFile, farm.HostsFile(), 0o644); err != nil {
		farm.Close()
		return nil, err
	}
	var x bytes.Buffer
	if err := WriteCrawlXML(&x, crawl, XMLOptions{Collection: "demo", FetchTimeout: 10}); err != nil {
		farm.Close()
		return nil, err
	}
	cfgPath := filepath.Join(dir, "crawl.xml")
	if err := os.WriteFile(cfgPath, x.Bytes(), 0o644); err != nil {
		farm.Close()
		return nil, err
	}
	return &Demo{Farm: farm, Expect: expect, HostsFile: hostsFile, ConfigFile: cfgPath}, nil
}
