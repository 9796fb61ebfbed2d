//go:build unix

package diskspace

import "syscall"

// Read returns the free and total bytes of the file system that holds dir,
// the space an unprivileged process may use counted as free (statfs(2)
// f_bavail).
func Read(dir string) (free, total uint64, err error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, 0, err
	}
	bs := uint64(st.Bsize)
	return uint64(st.Bavail) * bs, uint64(st.Blocks) * bs, nil
}
