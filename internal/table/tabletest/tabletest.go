// Package tabletest lets a test binary play "trawl table ...", so that the
// dmake workers a test starts can run the table programs with it. Only
// tests import this package.
package tabletest

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/trawl/trawl/internal/table"
)

// Main is a package's TestMain: with the arguments "table ..." the binary
// runs the table program of a registry filled by register and exits;
// otherwise it runs the tests. Under the race detector every process
// sleeps 1 s at exit by default (GORACE atexit_sleep_ms): the table
// programs are short processes, so the sleep is turned off.
func Main(m *testing.M, register func(*table.Registry)) {
	if len(os.Args) > 1 && os.Args[1] == "table" {
		reg := table.NewRegistry()
		register(reg)
		if err := table.Main(context.Background(), os.Args[2:], reg); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Setenv("GORACE", "atexit_sleep_ms=0")
	os.Exit(m.Run())
}
