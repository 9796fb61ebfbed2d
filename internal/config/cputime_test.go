package config

import (
	"syscall"
	"time"
)

// processCPU returns the user+system CPU time of this process, so that a
// test on a shared machine can bound work rather than wall time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
