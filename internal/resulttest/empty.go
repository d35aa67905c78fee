package resulttest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/strata-bench/strata/internal/contract"
)

// EmptyStrings are the JSON Pointers of the empty strings in the
// results.json of folder dir that are not a value another party gave
// (contract.EmptyStrings): each an unknown value written as "", where the
// contract wants null with a reason.
func EmptyStrings(tb testing.TB, dir string) []string {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join(dir, contract.ResultsFile))
	if err != nil {
		tb.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(data, &doc); err != nil {
		tb.Fatal(err)
	}
	return contract.EmptyStrings(doc)
}
