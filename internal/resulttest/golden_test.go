package resulttest

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "regenerate testdata/results, the committed result folders")

// TestUpdateResultFolders regenerates the checkout's testdata/results (with
// -update): fixed inputs for the golden tests of submit and compare.
func TestUpdateResultFolders(t *testing.T) {
	if !*update {
		t.Skip("run with -update to regenerate testdata/results")
	}
	root, _ := filepath.Abs(filepath.Join("..", "..", "testdata", "results"))
	os.RemoveAll(root)
	for name, o := range map[string]Options{
		"baseline":      {GPU: "NVIDIA GeForce RTX 3060", Quant: "IQ3_XXS", DecodeTPS: 120000, Optional: true, PowerW: 120},
		"candidate":     {GPU: "NVIDIA GeForce RTX 3060", Quant: "IQ3_XXS", DecodeTPS: 180000, Optional: true, PowerW: 150},
		"partial":       {Kind: Partial, GPU: "NVIDIA RTX A4000", Quant: "Q4_K_M"},
		"nonconforming": {Kind: Nonconforming, GPU: "AMD Radeon RX 7900 XTX", Quant: "Q4_K_M"},
		"aborted":       {Kind: Aborted, GPU: "NVIDIA GeForce RTX 3060", Quant: "IQ3_XXS"},
	} {
		dir := Folder(t, t.TempDir(), o)
		if err := os.MkdirAll(root, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(dir, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
}
