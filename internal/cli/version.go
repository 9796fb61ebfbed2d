package cli

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
)

// VersionCommand is trawl version; version is the one the binary was
// linked with.
func VersionCommand(version string) Command {
	return Command{Name: "version", Summary: "print trawl's version", Run: func(_ context.Context, env *Env, args []string) error {
		fs := NewFlagSet(env, "version", "version", "Print trawl's version, the Go version and the VCS revision it was built from.")
		if err := ParseFlags(fs, args); err != nil {
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
		fmt.Fprintf(env.Stdout, "trawl %s%s (%s %s/%s)\n", version, rev, runtime.Version(), runtime.GOOS, runtime.GOARCH)
		return nil
	}}
}
