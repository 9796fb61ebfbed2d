//go:build !unix

package nodesched

import "errors"

// diskSpace is the default DiskSpaceFunc where statfs(2) does not exist:
// limits/disk_free needs Config.DiskSpace there.
func diskSpace(dir string) (free, total uint64, err error) {
	return 0, 0, errors.New("nodesched: free disk space unknown on this system (set Config.DiskSpace)")
}
