//go:build !unix

package filter

import "time"

func processCPU() time.Duration { return 0 }
