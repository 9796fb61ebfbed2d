package main

import (
	"github.com/trawl/trawl/internal/admin/admincli"
	"github.com/trawl/trawl/internal/cli"
	"github.com/trawl/trawl/internal/clicks"
	"github.com/trawl/trawl/internal/cmt/cmtdump"
	"github.com/trawl/trawl/internal/config/configcli"
	"github.com/trawl/trawl/internal/datadir"
	"github.com/trawl/trawl/internal/marshal/marshalcli"
	"github.com/trawl/trawl/internal/table"
	"github.com/trawl/trawl/internal/webanalyzer"
	"github.com/trawl/trawl/internal/webfarm/farmcli"
)

// version is set at link time (-ldflags "-X main.version=...").
var version = "dev"

// The tools' commands live beside the packages they drive.
func init() {
	registerCLI(admincli.Root())
	registerCLI(cmtdump.Command())
	registerCLI(configcli.Command())
	registerCLI(datadir.ExportCommand(version))
	registerCLI(marshalcli.Command())
	registerCLI(datadir.StoreCommand())
	registerCLI(farmcli.Command())
	registerCLI(table.Command(func(reg *table.Registry) {
		webanalyzer.Register(reg)
		clicks.Register(reg)
	}))
	registerCLI(cli.VersionCommand(version))
}

// crawlIndexDir returns the full-text index directory of --data
// (datadir.IndexDir).
func crawlIndexDir(data string) (string, error) { return datadir.IndexDir(data) }
