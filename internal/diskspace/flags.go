package diskspace

import (
	"flag"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
)

// Flags are the full-disk flags every role that writes under --data
// shares (Register).
type Flags struct {
	low, high *string
}

// Register adds --disk-low-water and --disk-high-water to fs.
func Register(fs *flag.FlagSet) *Flags {
	return &Flags{
		low: fs.String("disk-low-water", "", "free space of --data's file system below which the role pauses its writes\n"+
			"(bytes, or with KiB, MiB, GiB; default 64MiB or 1% of the file system, whichever is smaller; off: never pause)"),
		high: fs.String("disk-high-water", "", "free space at which a role paused by --disk-low-water resumes (default twice the low-water mark)"),
	}
}

// Guard returns the guard of dir the flags describe, nil with
// --disk-low-water off, or an error naming a bad flag value.
func (f *Flags) Guard(dir, role string, log *slog.Logger) (*Guard, error) {
	if strings.EqualFold(strings.TrimSpace(*f.low), "off") {
		return nil, nil
	}
	low, err := ParseSize(*f.low)
	if err != nil {
		return nil, fmt.Errorf("diskspace: --disk-low-water: %w", err)
	}
	high, err := ParseSize(*f.high)
	if err != nil {
		return nil, fmt.Errorf("diskspace: --disk-high-water: %w", err)
	}
	if high != 0 && high < low {
		return nil, fmt.Errorf("diskspace: --disk-high-water %d is below --disk-low-water %d", high, low)
	}
	return NewGuard(Config{Dir: dir, Low: low, High: high, Logger: log, Role: role}), nil
}

// ParseSize parses a byte count: digits with an optional unit (B, K, KB,
// KiB, M, MB, MiB, G, GB, GiB; the units are binary, case does not
// matter). "" is 0.
func ParseSize(s string) (uint64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	n, err := strconv.ParseUint(s[:i], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("size %q: want digits with an optional unit (KiB, MiB, GiB)", s)
	}
	var mul uint64
	switch strings.ToLower(strings.TrimSpace(s[i:])) {
	case "", "b":
		mul = 1
	case "k", "kb", "kib":
		mul = 1 << 10
	case "m", "mb", "mib":
		mul = 1 << 20
	case "g", "gb", "gib":
		mul = 1 << 30
	default:
		return 0, fmt.Errorf("size %q: unknown unit %q", s, s[i:])
	}
	if n > (1<<63)/mul {
		return 0, fmt.Errorf("size %q: too large", s)
	}
	return n * mul, nil
}
