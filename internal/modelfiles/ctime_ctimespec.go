//go:build darwin || freebsd || netbsd

package modelfiles

import "syscall"

func statChangeTime(s *syscall.Stat_t) int64 { return s.Ctimespec.Nano() }
