package clicks

import (
	"testing"

	"github.com/trawl/trawl/internal/table/tabletest"
)

// TestMain lets the test binary play "trawl table ...": the dmake workers
// the tests start run the table programs with it.
func TestMain(m *testing.M) { tabletest.Main(m, Register) }
