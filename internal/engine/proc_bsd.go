//go:build unix && !linux

package engine

import "syscall"

// sysProcAttr puts the engine in its own process group, so stopping it
// reaches every process it started and nothing else. These systems have no
// parent-death signal: an engine outlives a runner killed with SIGKILL
// (SIGINT, SIGTERM and SIGHUP still stop it), as the README says.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
