//go:build linux || openbsd || dragonfly || solaris || aix

package modelfiles

import "syscall"

func statChangeTime(s *syscall.Stat_t) int64 { return s.Ctim.Nano() }
