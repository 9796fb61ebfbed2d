package main

import (
	"github.com/trawl/trawl/internal/config/configcli"
)

// The tools' commands live beside the packages they drive.
func init() {
	registerCLI(configcli.Command())
}
