package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/exitcode"
	"github.com/strata-bench/strata/internal/protocol"
	"github.com/strata-bench/strata/internal/resulttest/submissions"
)

// TestDisguisedSimulatorEndToEnd: a simulator in disguise, through the
// commands: `engine simulate --scenario` with {"props":{"strata_simulator":
// null}} (and its stand-in model) gives a nonconforming run that names its
// traces; the folder edited to claim a complete run is rejected by report,
// refused by manifest add, fails manifest verify, and the site lists no
// approved run.
func TestDisguisedSimulatorEndToEnd(t *testing.T) {
	t.Parallel()
	scenario := filepath.Join(t.TempDir(), "disguise.json")
	mustWrite(t, scenario, `{"props":{"strata_simulator":null}}`)
	work := simProfile(t, freeTestPort(t), "--scenario", scenario)
	// The test's strata has its commit (testEnv): only the simulator can
	// make the run nonconforming.
	r := runIn(t, work, "", "bench", "run", "--profile", "fake")
	if r.code != 0 {
		t.Fatalf("run: exit %d\n%s", r.code, r.stderr)
	}
	res, dir := readResults(t, work)
	non := res.Extensions.StatusReasons.Nonconforming
	reasons := strings.Join(contract.Texts(non), "\n")
	if res.Run.Status != contract.StatusNonconforming || len(non) != 1 || res.Software.StrataCommit == nil {
		t.Errorf("status %s, commit %v: %s", res.Run.Status, res.Software.StrataCommit, reasons)
	}
	for _, trace := range []string{"the X-Strata-Simulator response header", "/props strata_simulator;", "/props strata_simulator_version",
		`owned_by "strata-simulator"`, "the stand-in model file name", "the stand-in model's SHA-256", "general.name"} {
		if !strings.Contains(reasons, trace) {
			t.Errorf("the reasons do not name %q:\n%s", trace, reasons)
		}
	}
	if !strings.Contains(r.stderr, "warning: the run will be nonconforming: the server is strata's simulated engine") {
		t.Errorf("no warning before the warm-up:\n%s", r.stderr)
	}
	if rep := runIn(t, work, "", "bench", "report", "-q", dir); rep.code != 0 {
		t.Fatalf("report of the folder as written: exit %d\n%s", rep.code, rep.stdout)
	}

	submissions.ClaimComplete(t, dir)
	rep := runIn(t, work, "", "bench", "report", "-q", dir)
	if rep.code != exitcode.Failed || !strings.Contains(rep.stdout, "/run/status: is complete, but the reasons give nonconforming") {
		t.Errorf("report of the folder claiming complete: exit %d\n%s", rep.code, rep.stdout)
	}

	repo := submissions.NewRepo(t)
	folder := "bench/results/" + filepath.Base(dir)
	repo.CopyFolder(t, dir, folder)
	intro := repo.Commit(t, "benchmark: a real run, says the submitter")
	add := runIn(t, t.TempDir(), "", "bench", "manifest", "add", "--repo", repo.Dir, "--results", folder, "--review-pr", "https://example.invalid/pr/3",
		"--reviewed-by", "maint", "--activate", protocol.StandInID)
	if add.code != exitcode.Failed || !strings.Contains(add.stderr, "cannot be approved") || !strings.Contains(add.stderr, "/run/status") {
		t.Errorf("manifest add: exit %d\n%s", add.code, add.stderr)
	}
	data, err := os.ReadFile(filepath.Join(dir, contract.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	entry, _ := json.Marshal(map[string]any{"format": "strata-approved-benchmarks", "schema_version": 1, "entries": []any{map[string]any{
		"run_id": res.Run.ID, "protocol_id": protocol.StandInID, "results_path": folder + "/results.json", "results_sha256": hex.EncodeToString(sum[:]),
		"evidence_commit": intro, "review_pr": "https://example.invalid/pr/3", "reviewed_by": "maint", "reviewed_at": "2026-11-02T10:00:00Z",
		"verification": "evidence-reviewed", "reproduction_run_ids": []string{}}}})
	repo.Write(t, "bench/approved.json", entry)
	repo.Commit(t, "approve by hand")
	ver := runIn(t, t.TempDir(), "", "bench", "manifest", "verify", "--repo", repo.Dir, "--activate", protocol.StandInID)
	if ver.code != exitcode.Failed || !strings.Contains(ver.stdout, "FAILED  "+res.Run.ID) || !strings.Contains(ver.stdout, "simulated engine") {
		t.Errorf("manifest verify: exit %d\n%s", ver.code, ver.stdout)
	}
	site := runIn(t, t.TempDir(), "", "bench", "site", "--repo", repo.Dir, "--out", filepath.Join(t.TempDir(), "site"), "--activate", protocol.StandInID)
	if site.code != 0 || !strings.Contains(site.stdout, "(0 approved, 1 other)") {
		t.Errorf("site: exit %d\n%s\n%s", site.code, site.stdout, site.stderr)
	}
}
