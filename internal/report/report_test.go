package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-bench/strata/internal/contract"
)

func read(t *testing.T, dir string) *contract.Results {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, contract.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	var r contract.Results
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	return &r
}

// TestCommittedReadmesAreTheirResults: each committed folder's README.md is
// exactly what its results.json gives.
func TestCommittedReadmesAreTheirResults(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"baseline", "candidate", "partial", "nonconforming", "aborted"} {
		dir := filepath.Join("..", "..", "testdata", "results", name)
		if d := Diff(dir, read(t, dir)); len(d) != 0 {
			t.Errorf("%s: %v", name, d)
		}
	}
}

// TestReadmeFollowsTheNumbers: a README that no longer matches results.json
// (a number changed in one of them) is named line by line, and what the
// report says comes from results.json.
func TestReadmeFollowsTheNumbers(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("..", "..", "testdata", "results", "partial")
	r := read(t, dir)
	var b strings.Builder
	README(&b, r)
	for _, want := range []string{"partial", "required work was skipped: 7 of the 22 required requests"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	r.Quality.Passed++
	d := Diff(dir, r)
	if len(d) == 0 || !strings.Contains(d[0], "differs from the numbers in results.json") {
		t.Errorf("a changed pass count is not named: %v", d)
	}
}

// TestNullsHaveNoUnit: a null duration or summary is "not measured", never
// "not measured s".
func TestNullsHaveNoUnit(t *testing.T) {
	t.Parallel()
	r := read(t, filepath.Join("..", "..", "testdata", "results", "baseline"))
	r.Run.RequiredDurationS, r.Run.OptionalDurationS = nil, nil
	r.Run.OptionalConcurrency = true
	r.Summaries = nil
	var b strings.Builder
	README(&b, r)
	for _, bad := range []string{"not measured s", "not measured tok/s", "(n=0) s", "(n=0) tok/s"} {
		if strings.Contains(b.String(), bad) {
			t.Errorf("the report writes %q", bad)
		}
	}
	if !strings.Contains(b.String(), "| Required stages | not measured |") {
		t.Errorf("the required stages' null duration is not written as not measured")
	}
}
