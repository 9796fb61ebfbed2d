//go:build unix

package diskspace

import (
	"errors"
	"syscall"
)

// IsFull reports whether err (through any wrapping) says the file system
// or the user's quota is full: ENOSPC or EDQUOT.
func IsFull(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}
