package resulttest

import (
	"runtime"
	"testing"
)

// RunWithEveryCPU runs a package's tests with every CPU, whatever
// GOMAXPROCS the suite runs under (scripts/test.sh sets 1 to save the
// scheduler's spinning), and returns m.Run's exit code. It is for the
// real-engine package, which asserts on the client's clock across streams
// llama-server serves at once, as a user's strata reads them with all its
// CPUs: on one P a stream's last event can wait behind other tests'
// goroutines and its end be stamped late. (The e2e package's one such
// assertion, the spread of a one-slot queue's TTFTs, holds on one P beside
// a loaded machine, and its tests cost a sixth more CPU time on two.)
func RunWithEveryCPU(m *testing.M) int {
	runtime.GOMAXPROCS(runtime.NumCPU())
	return m.Run()
}
