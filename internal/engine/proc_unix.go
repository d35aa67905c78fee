//go:build unix

package engine

import (
	"os/exec"
	"syscall"
)

func signalGroup(cmd *exec.Cmd, sig syscall.Signal) error {
	return syscall.Kill(-cmd.Process.Pid, sig)
}
