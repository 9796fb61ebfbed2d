package main

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
)

// version is set at link time (-ldflags "-X main.version=...").
var version = "dev"

func init() {
	register(&command{name: "version", summary: "print trawl's version", run: runVersion})
}

func runVersion(ctx context.Context, env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "version", "version", "Print trawl's version, the Go version and the VCS revision it was built from.")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	rev := ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				rev = " " + s.Value
			}
		}
	}
	fmt.Fprintf(env.stdout, "trawl %s%s (%s %s/%s)\n", version, rev, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return nil
}
