package clicks

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/trawl/trawl/internal/table"
)

// TestMain lets the test binary play "trawl table ...": the dmake workers
// the tests start run the table programs with it.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "table" {
		reg := table.NewRegistry()
		Register(reg)
		if err := table.Main(context.Background(), os.Args[2:], reg); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	// Under the race detector every process sleeps 1 s at exit by default
	// (GORACE atexit_sleep_ms): the table programs are short processes.
	os.Setenv("GORACE", "atexit_sleep_ms=0")
	os.Exit(m.Run())
}
