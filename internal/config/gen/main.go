// Command gen regenerates docs/configuration.md and
// internal/config/accessors_gen.go from the definition table of
// internal/config. Run it from the repository root:
//
//	go run ./internal/config/gen
package main

import (
	"fmt"
	"os"

	"github.com/trawl/trawl/internal/config"
)

func main() {
	src, err := config.GenerateAccessors()
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	if err := os.WriteFile("internal/config/accessors_gen.go", src, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	if err := os.WriteFile("docs/configuration.md", config.Reference(), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}
