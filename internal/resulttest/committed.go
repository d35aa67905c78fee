package resulttest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/strata-bench/strata/internal/contract"
)

// Testdata is the checkout's testdata folder.
func Testdata(tb testing.TB) string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		tb.Fatal("no caller")
	}
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata")
}

// Results reads the results.json of a committed folder of testdata/results
// (baseline, candidate, partial, nonconforming, aborted).
func Results(tb testing.TB, name string) *contract.Results {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join(Testdata(tb), "results", name, contract.ResultsFile))
	if err != nil {
		tb.Fatal(err)
	}
	var r contract.Results
	if err := json.Unmarshal(data, &r); err != nil {
		tb.Fatalf("%s: %v", name, err)
	}
	return &r
}
