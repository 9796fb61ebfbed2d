package gctune

import (
	"math"
	"runtime/debug"
	"testing"
)

// restore puts the collector back as it was before a test.
func restore(t *testing.T) {
	pct := debug.SetGCPercent(100)
	lim := debug.SetMemoryLimit(-1)
	t.Cleanup(func() {
		debug.SetGCPercent(pct)
		debug.SetMemoryLimit(lim)
	})
}

func TestApplySetsPercentAndLimit(t *testing.T) {
	restore(t)
	mi := []byte("MemTotal:       24684312 kB\nMemFree:        17358848 kB\n")
	s := Apply(DefaultPercent, mi, func(string) string { return "" })
	if s.Percent != 200 || s.Limit != 24684312<<10/2 {
		t.Fatalf("settings %+v", s)
	}
	if got := debug.SetGCPercent(100); got != 200 {
		t.Fatalf("GC percent %d, want 200", got)
	}
	if got := debug.SetMemoryLimit(-1); got != 24684312<<10/2 {
		t.Fatalf("memory limit %d", got)
	}
}

func TestApplyLeavesEnvironmentSettings(t *testing.T) {
	restore(t)
	env := map[string]string{"GOGC": "50", "GOMEMLIMIT": "1GiB"}
	s := Apply(DefaultPercent, []byte("MemTotal: 1000 kB\n"), func(k string) string { return env[k] })
	if s != (Settings{}) {
		t.Fatalf("settings %+v, want none", s)
	}
	if got := debug.SetGCPercent(100); got != 100 {
		t.Fatalf("GC percent %d changed", got)
	}
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Fatalf("memory limit %d changed", got)
	}
}

func TestMemTotalMalformed(t *testing.T) {
	for _, in := range []string{"", "MemTotal:\n", "MemTotal: x kB\n", "MemTotal: -5 kB\n", "MemFree: 5 kB\n"} {
		if got := memTotal([]byte(in)); got != 0 {
			t.Errorf("memTotal(%q) = %d, want 0", in, got)
		}
	}
	if got := memTotal([]byte("MemFree: 1 kB\nMemTotal: 2048 kB\n")); got != 2<<20 {
		t.Errorf("memTotal = %d", got)
	}
}
