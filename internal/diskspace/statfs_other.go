//go:build !unix

package diskspace

import "errors"

// Read is where statfs(2) does not exist: the free space is unknown, and
// a Guard never pauses.
func Read(dir string) (free, total uint64, err error) {
	return 0, 0, errors.New("diskspace: free disk space unknown on this system")
}
