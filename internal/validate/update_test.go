package validate_test

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/strata-bench/strata/internal/resulttest"
)

var update = flag.Bool("update", false, "regenerate testdata/results, the committed result folders")

// TestUpdateResultFolders regenerates the checkout's testdata/results (with
// -update): fixed inputs for the golden tests of submit, compare, report
// and pilot, and for this package's tests. It lives with a consumer of
// those folders that links resulttest anyway: a package of its own was a
// test binary linked only to skip.
func TestUpdateResultFolders(t *testing.T) {
	if !*update {
		t.Skip("run with -update to regenerate testdata/results")
	}
	root, err := filepath.Abs(filepath.Join("..", "..", "testdata", "results"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(root); err != nil {
		t.Fatal(err)
	}
	for name, o := range map[string]resulttest.Options{
		"baseline":      {GPU: "NVIDIA GeForce RTX 3060", Quant: "IQ3_XXS", DecodeTPS: 120000, Optional: true, PowerW: 120, EngineLog: true},
		"candidate":     {GPU: "NVIDIA GeForce RTX 3060", Quant: "IQ3_XXS", DecodeTPS: 180000, Optional: true, PowerW: 150, EngineLog: true},
		"partial":       {Kind: resulttest.Partial, GPU: "NVIDIA RTX A4000", Quant: "Q4_K_M", EngineLog: true},
		"nonconforming": {Kind: resulttest.Nonconforming, GPU: "AMD Radeon RX 7900 XTX", Quant: "Q4_K_M", EngineLog: true},
		"aborted":       {Kind: resulttest.Aborted, GPU: "NVIDIA GeForce RTX 3060", Quant: "IQ3_XXS", EngineLog: true},
	} {
		dir := resulttest.Folder(t, t.TempDir(), o)
		if err := os.MkdirAll(root, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(dir, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
}
