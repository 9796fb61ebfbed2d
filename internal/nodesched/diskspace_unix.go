//go:build unix

package nodesched

import "syscall"

// diskSpace is the default DiskSpaceFunc: statfs(2) of dir, the space an
// unprivileged process may use counted as free.
func diskSpace(dir string) (free, total uint64, err error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, 0, err
	}
	bs := uint64(st.Bsize)
	return uint64(st.Bavail) * bs, uint64(st.Blocks) * bs, nil
}
