//go:build unix

package journal

import (
	"os"
	"syscall"
)

// lockFile takes the journal's exclusive lock for as long as the run
// writes it; the kernel drops it when the process dies, however it dies.
func lockFile(f *os.File) (func(), error) {
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return nil, err
	}
	return func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }, nil
}

// tryLock takes the lock without waiting: it fails while a live run holds
// it.
func tryLock(f *os.File) (func(), error) { return lockFile(f) }
