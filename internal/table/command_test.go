package table

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trawl/trawl/internal/cli"
	"github.com/trawl/trawl/internal/cli/clitest"
)

// TestCommand: trawl table runs a program with the registered functions
// and prints its usage without one.
func TestCommand(t *testing.T) {
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	if err := os.WriteFile(in, []byte("b\t2\na\t1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	registered := false
	cmd := Command(func(*Registry) { registered = true })
	code, _, errOut := clitest.Run(context.Background(), []cli.Command{cmd}, "", "table", "sort", "-S", "1M", "-T", ".", "-k1,1", in, "-o", out)
	if b, _ := os.ReadFile(out); code != 0 || !registered || string(b) != "a\t1\nb\t2\n" {
		t.Errorf("sort: exit %d, registered %v, output %q, stderr %q", code, registered, b, errOut)
	}
	if code, _, errOut := clitest.Run(context.Background(), []cli.Command{cmd}, "", "table"); code != 2 || !strings.Contains(errOut, "usage: trawl table") {
		t.Errorf("no program: exit %d, stderr %q", code, errOut)
	}
	if code, _, _ := clitest.Run(context.Background(), []cli.Command{cmd}, "", "table", "--help"); code != 0 {
		t.Errorf("--help: exit %d", code)
	}
}
