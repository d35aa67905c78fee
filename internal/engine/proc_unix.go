//go:build unix

package engine

import (
	"os/exec"
	"syscall"
)

// sysProcAttr puts the engine in its own process group, so stopping it
// reaches every process it started and nothing else.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

func signalGroup(cmd *exec.Cmd, sig syscall.Signal) error {
	return syscall.Kill(-cmd.Process.Pid, sig)
}
