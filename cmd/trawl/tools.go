package main

import (
	"github.com/trawl/trawl/internal/cmt/cmtdump"
	"github.com/trawl/trawl/internal/config/configcli"
	"github.com/trawl/trawl/internal/marshal/marshalcli"
)

// The tools' commands live beside the packages they drive.
func init() {
	registerCLI(cmtdump.Command())
	registerCLI(configcli.Command())
	registerCLI(marshalcli.Command())
}
