//go:build unix

package modelfiles

import (
	"os"
	"syscall"
)

// fileID returns the device and inode of a file.
func fileID(st os.FileInfo) (uint64, uint64) {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return uint64(s.Dev), uint64(s.Ino)
	}
	return 0, 0
}
