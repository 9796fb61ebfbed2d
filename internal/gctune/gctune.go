// Package gctune sets the garbage collector's pace for long-running trawl
// processes: a higher GOGC than Go's default of 100, so that the heap of a
// crawl (pages, bleve batches, store batches, mostly short-lived) is
// marked less often, with a soft memory limit as the guard against the
// larger heap growing without bound. Environment variables win: GOGC set
// leaves the percent alone, GOMEMLIMIT set leaves the limit alone.
package gctune

import (
	"bufio"
	"bytes"
	"os"
	"runtime/debug"
	"strconv"
)

// DefaultPercent is the GOGC percent Apply sets: the heap may grow to three
// times the live heap between collections instead of twice.
const DefaultPercent = 200

// Settings is what Apply set (zero: left as it was).
type Settings struct {
	Percent int
	Limit   int64
}

// Apply sets the GC percent to percent unless GOGC is set, and a soft
// memory limit of half the machine's memory (from meminfo, a
// /proc/meminfo-format text; nil or unreadable: no limit) unless
// GOMEMLIMIT is set. getenv is os.Getenv in production.
func Apply(percent int, meminfo []byte, getenv func(string) string) Settings {
	var s Settings
	if getenv("GOGC") == "" && percent > 0 {
		debug.SetGCPercent(percent)
		s.Percent = percent
	}
	if getenv("GOMEMLIMIT") == "" {
		if total := memTotal(meminfo); total > 0 {
			s.Limit = total / 2
			debug.SetMemoryLimit(s.Limit)
		}
	}
	return s
}

// ApplyDefault is Apply with DefaultPercent, /proc/meminfo and the
// process environment.
func ApplyDefault() Settings {
	mi, _ := os.ReadFile("/proc/meminfo")
	return Apply(DefaultPercent, mi, os.Getenv)
}

// memTotal returns MemTotal from a /proc/meminfo text in bytes (0 when
// absent or malformed).
func memTotal(meminfo []byte) int64 {
	sc := bufio.NewScanner(bytes.NewReader(meminfo))
	for sc.Scan() {
		f := bytes.Fields(sc.Bytes())
		if len(f) >= 2 && string(f[0]) == "MemTotal:" {
			kb, err := strconv.ParseInt(string(f[1]), 10, 64)
			if err != nil || kb <= 0 || kb > 1<<40 {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}
