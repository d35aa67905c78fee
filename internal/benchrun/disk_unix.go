//go:build linux || darwin || freebsd

package benchrun

import "syscall"

// freeBytes is the space an unprivileged user may still write under dir.
func freeBytes(dir string) (uint64, bool) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, false
	}
	return uint64(st.Bavail) * uint64(st.Bsize), true // the field types differ between systems
}
