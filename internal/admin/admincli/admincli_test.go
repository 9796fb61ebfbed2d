package admincli

import (
	"strings"
	"testing"
)

func TestLogLevel(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int
	}{{"0x28", 0x28}, {"40", 40}, {"debug,error", 0x28}, {"Info, critical", 0x44}} {
		got, err := parseLogLevel(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("parseLogLevel(%q) = %#x, %v; want %#x", tt.in, got, err, tt.want)
		}
	}
	if _, err := parseLogLevel("loud"); err == nil {
		t.Errorf("parseLogLevel(loud) accepted")
	}
	if got := logLevelNames(0x28); got != "(debug,error)" {
		t.Errorf("logLevelNames(0x28) = %q", got)
	}
}

// TestUsageListsCommands checks that every subcommand is in the usage
// text and every subcommand there exists.
func TestUsageListsCommands(t *testing.T) {
	cmds := Commands()
	for name, c := range cmds {
		if !strings.Contains(Usage, "\n  "+name+" ") && !strings.Contains(Usage, "| "+name+" ") {
			t.Errorf("subcommand %q is not in Usage", name)
		}
		if c.Help == "" || c.Flags == nil {
			t.Errorf("subcommand %q has no help or no flags function", name)
		}
	}
	if len(cmds) < 29 {
		t.Errorf("%d subcommands, want at least 29", len(cmds))
	}
}
