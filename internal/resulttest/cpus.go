package resulttest

import (
	"runtime"
	"testing"
)

// RunWithEveryCPU runs a package's tests with every CPU, whatever
// GOMAXPROCS the suite runs under (scripts/test.sh sets 1 to save the
// scheduler's spinning), and returns m.Run's exit code. It is for the
// packages that assert on the client's clock across concurrent streams,
// which a user's strata reads with all its CPUs: on one P a stream's last
// event waits behind other tests' goroutines and its end is stamped late.
func RunWithEveryCPU(m *testing.M) int {
	runtime.GOMAXPROCS(runtime.NumCPU())
	return m.Run()
}
