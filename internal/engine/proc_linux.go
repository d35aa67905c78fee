//go:build linux

package engine

import "syscall"

// sysProcAttr puts the engine in its own process group, so stopping it
// reaches every process it started and nothing else, and asks the kernel
// to kill it should the runner die first (SIGKILL included): an engine the
// runner started never keeps the GPU and the port after it.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
