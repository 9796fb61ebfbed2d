package main

import (
	"github.com/trawl/trawl/internal/cli"
	"github.com/trawl/trawl/internal/dmake"
	"github.com/trawl/trawl/internal/dmake/dmakecli"
)

func init() { registerCLI(dmakecli.Command(dmakeDeps())) }

// dmakeDeps gives trawl dmake (and trawl webanalyzer) the registries of
// dmake workers: the name server or etcd.
func dmakeDeps() dmakecli.Deps {
	return dmakecli.Deps{Version: version, OpenRegistry: func(env *cli.Env, cmd, ns, registry string) (dmake.Registry, func(), error) {
		return openRegistry(&cmdEnv{stdin: env.Stdin, stdout: env.Stdout, stderr: env.Stderr}, cmd, ns, registry)
	}}
}
