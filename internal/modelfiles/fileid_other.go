//go:build !unix

package modelfiles

import "os"

// fileID has no device or inode to offer here; size and mtime still key the
// cache.
func fileID(st os.FileInfo) (uint64, uint64) { return 0, 0 }

// changeTime has no inode change time to offer here.
func changeTime(st os.FileInfo) int64 { return 0 }
