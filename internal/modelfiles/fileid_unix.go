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

// changeTime is the inode's change time in nanoseconds (0: unknown). A
// write, a chmod or setting the mtime moves it, and nothing sets it back,
// so a file changed in place with its size and mtime put back still shows.
func changeTime(st os.FileInfo) int64 {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return statChangeTime(s)
	}
	return 0
}
