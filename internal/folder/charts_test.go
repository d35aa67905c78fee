package folder_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-bench/strata/bench/prompts"
	"github.com/strata-bench/strata/internal/charts"
	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/resulttest"
	"github.com/strata-bench/strata/internal/validate"
)

// TestFolderHoldsItsCharts: a new run's folder holds its charts, the bytes
// its results.json gives (charts.Files), each listed in artifacts as
// provenance with the SHA-256 of those bytes and shown in its README by a
// relative link; and the folder validates.
func TestFolderHoldsItsCharts(t *testing.T) {
	t.Parallel()
	dir := resulttest.Folder(t, t.TempDir(), resulttest.Options{Optional: true, EngineLog: true})
	data, err := os.ReadFile(filepath.Join(dir, contract.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	var r contract.Results
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	want, err := charts.Files(&r)
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(dir, contract.ReadmeFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range want {
		got, err := os.ReadFile(filepath.Join(dir, f.Name))
		if err != nil {
			t.Errorf("the folder has no %s: %v", f.Name, err)
			continue
		}
		if string(got) != string(f.Data) {
			t.Errorf("%s is not the chart results.json gives", f.Name)
		}
		sum := sha256.Sum256(got)
		listed := false
		for _, a := range r.Artifacts {
			listed = listed || a == contract.Artifact{Kind: contract.ArtifactProvenance, Path: f.Name, SHA256: hex.EncodeToString(sum[:])}
		}
		if !listed {
			t.Errorf("%s is not listed as provenance with its SHA-256 in %v", f.Name, r.Artifacts)
		}
		if !strings.Contains(string(readme), "]("+f.Name+")\n") {
			t.Errorf("the README does not show %s", f.Name)
		}
	}
	b, err := prompts.Bundle()
	if err != nil {
		t.Fatal(err)
	}
	v, err := validate.Dir(dir, b)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range v.Violations {
		t.Errorf("the folder breaks a rule: %s", x)
	}
}
