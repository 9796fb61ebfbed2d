//go:build !unix

package diskspace

import (
	"errors"
	"syscall"
)

// IsFull reports whether err (through any wrapping) says the file system
// is full: ENOSPC.
func IsFull(err error) bool { return errors.Is(err, syscall.ENOSPC) }
