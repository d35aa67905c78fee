package submissions

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/strata-bench/strata/internal/resulttest"
)

// ClaimComplete edits the results.json of a result folder to claim a
// complete, conforming run of the engine it spoke as (its status, no
// nonconforming reason, that engine's version and a dialect not marked
// simulated), leaving every other file as the run wrote it: the hand edit
// that would pass the simulator's folder for a real run.
func ClaimComplete(tb testing.TB, dir string) {
	tb.Helper()
	editJSON(tb, filepath.Join(dir, "results.json"), func(doc map[string]any) {
		obj(doc, "run")["status"] = "complete"
		ext := obj(doc, "extensions")
		obj(ext, "status_reasons")["nonconforming"] = []any{}
		d := obj(obj(ext, "engine_dialect"), "dialect")
		d["simulated"] = false
		obj(doc, "software")["engine_version"] = d["version"]
	})
}

// Forged is a repository whose only report is the simulator's folder
// claiming to be complete (ClaimComplete), and a manifest that approves it.
type Forged struct {
	Repo *Repo
	// Folder is the report's folder in the repository, RunID its run.
	Folder, RunID string
	// Introduced is the commit that added the report, Approved the one
	// that added bench/approved.json.
	Introduced, Approved string
}

// ForgedRepo builds a Forged repository for protocolID; the approval is
// dated reviewedAt.
func ForgedRepo(tb testing.TB, protocolID, reviewedAt string) *Forged {
	tb.Helper()
	dir := resulttest.Folder(tb, tb.TempDir(), resulttest.Options{Kind: resulttest.Nonconforming, GPU: "NVIDIA GeForce RTX 3060", Quant: "IQ3_XXS"})
	ClaimComplete(tb, dir)
	f := &Forged{Repo: NewRepo(tb), Folder: "bench/results/" + filepath.Base(dir)}
	f.Repo.CopyFolder(tb, dir, f.Folder)
	f.Introduced = f.Repo.Commit(tb, "benchmark: RTX 3060")
	data, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		tb.Fatal(err)
	}
	var r struct {
		Run struct {
			ID string `json:"id"`
		} `json:"run"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		tb.Fatal(err)
	}
	f.RunID = r.Run.ID
	m := map[string]any{"format": "strata-approved-benchmarks", "schema_version": 1, "entries": []any{map[string]any{
		"run_id": f.RunID, "protocol_id": protocolID, "results_path": f.Folder + "/results.json", "results_sha256": sha256Hex(data),
		"evidence_commit": f.Introduced, "review_pr": "https://example.invalid/pr/1", "reviewed_by": "maintainer",
		"reviewed_at": reviewedAt, "verification": "evidence-reviewed", "reproduction_run_ids": []string{},
	}}}
	manifest, _ := json.MarshalIndent(m, "", "  ")
	f.Repo.Write(tb, "bench/approved.json", manifest)
	f.Approved = f.Repo.Commit(tb, "approve")
	return f
}
