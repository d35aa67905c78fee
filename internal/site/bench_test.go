package site_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/manifest"
	"github.com/strata-bench/strata/internal/resulttest"
	"github.com/strata-bench/strata/internal/site"
)

// BenchmarkBuild1000 builds the site from 1,000 approved runs (copies of a
// real result with distinct IDs, GPUs and quantizations). Target: < 10 s.
func BenchmarkBuild1000(b *testing.B) {
	dir := resulttest.Folder(b, b.TempDir(), resulttest.Options{Optional: true})
	files := map[string][]byte{}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		files[e.Name()], _ = os.ReadFile(filepath.Join(dir, e.Name()))
	}
	var base contract.Results
	if err := json.Unmarshal(files["results.json"], &base); err != nil {
		b.Fatal(err)
	}
	gpus := []string{"NVIDIA GeForce RTX 3060", "NVIDIA RTX A4000", "NVIDIA GeForce RTX 4090", "AMD Radeon RX 7900 XTX", "Apple M2 Max"}
	quants := []string{"IQ3_XXS", "Q4_K_M", "Q8_0", "NVFP4"}
	s := &site.Site{Branch: "main", Head: "0123456789abcdef0123456789abcdef01234567"}
	for i := range 1000 {
		r := base
		r.Run.ID = fmt.Sprintf("run-%04d", i)
		hw := r.Hardware
		hw.GPUs = []contract.GPU{base.Hardware.GPUs[0]}
		hw.GPUs[0].Name = gpus[i%len(gpus)]
		r.Hardware = hw
		q := quants[i%len(quants)]
		r.Model.Quantization = &q
		s.Approved = append(s.Approved, &site.Run{Folder: fmt.Sprintf("2026-11-30-standard-x-%04d", i), Label: site.LabelApproved,
			Results: &r, Files: files, Entry: &manifest.Entry{RunID: r.Run.ID, Verification: manifest.EvidenceReviewed}})
	}
	site.AssignSlugs(s)
	b.ResetTimer()
	for range b.N {
		out := filepath.Join(b.TempDir(), "site")
		if err := site.Build(s, out); err != nil {
			b.Fatal(err)
		}
	}
}
