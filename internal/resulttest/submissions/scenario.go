package submissions

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-bench/strata/internal/resulttest"
)

// Scenario is a repository with every kind of submission the site and the
// manifest verifier must tell apart.
type Scenario struct {
	Repo *Repo
	// RunIDs by role: approved3060, approvedA4000, approvedMarkup (all
	// approved), partial, nonconforming, unreviewed, tampered, hostile.
	RunIDs map[string]string
	// Folders by role (those roles and legacy), relative to the repository.
	Folders map[string]string
	Commits map[string]string
	// Unpublishable lists, by role, files in the folder that a site must
	// never publish: listed nowhere, listed under a name that is not a plain
	// file name, with a wrong hash or an unknown kind, or in a legacy folder.
	Unpublishable map[string][]string
	// ListedAsText lists, by role, planted files that a browser would render
	// but that results.json lists with their true hashes: a site publishes
	// them as text only.
	ListedAsText map[string][]string
}

// Markup is planted in a submitted run's command: the site must show it as
// text and never run it.
const Markup = `strata bench run <script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">`

// BuildScenario makes the repository:
//
//	c1 adds approved3060; c2 adds approvedA4000, partial, nonconforming and a
//	legacy report; c3 adds unreviewed, approvedMarkup, tampered and hostile;
//	c4 adds bench/approved.json (approved3060@c1, approvedA4000@c2,
//	approvedMarkup@c3, tampered with a wrong hash, nonconforming@c2); c5
//	alters an approved artifact of approved3060 and a markup-named artifact
//	of approvedMarkup.
//
// Submitted strings carry markup wherever a submitter controls them and
// the folder stays what its role says: approvedMarkup still validates,
// hostile (never approved) has markup in every field but the protocol ID
// (a foreign one would make it a draft), partial in its status reasons,
// legacy in its README. approvedMarkup (listed as provenance, so it still
// validates), hostile and legacy also carry files a browser would render or
// run.
func BuildScenario(tb testing.TB, protocolID string) *Scenario {
	tb.Helper()
	s := &Scenario{Repo: NewRepo(tb), RunIDs: map[string]string{}, Folders: map[string]string{}, Commits: map[string]string{},
		Unpublishable: map[string][]string{}, ListedAsText: map[string][]string{}}
	out := tb.TempDir()
	add := func(role string, o resulttest.Options) {
		dir := resulttest.Folder(tb, filepath.Join(out, role), o)
		name := filepath.Base(dir)
		s.Folders[role] = "bench/results/" + name
		s.Repo.CopyFolder(tb, dir, s.Folders[role])
		var r struct {
			Run struct {
				ID string `json:"id"`
			} `json:"run"`
		}
		data, err := os.ReadFile(filepath.Join(dir, "results.json"))
		if err == nil {
			err = json.Unmarshal(data, &r)
		}
		if err != nil {
			tb.Fatal(err)
		}
		s.RunIDs[role] = r.Run.ID
	}
	add("approved3060", resulttest.Options{GPU: "NVIDIA GeForce RTX 3060", Quant: "IQ3_XXS", DecodeTPS: 150000})
	s.Commits["c1"] = s.Repo.Commit(tb, "benchmark: RTX 3060 / Qwen3.8-Flash-Next / IQ3_XXS")
	add("approvedA4000", resulttest.Options{GPU: "NVIDIA RTX A4000", Quant: "Q4_K_M", Track: "default", DecodeTPS: 250000, Optional: true})
	add("partial", resulttest.Options{Kind: resulttest.Partial, GPU: "NVIDIA RTX A4000", Quant: "Q4_K_M"})
	add("nonconforming", resulttest.Options{Kind: resulttest.Nonconforming, GPU: "AMD Radeon RX 7900 XTX", Quant: "Q4_K_M"})
	s.plantStatusReason(tb, "partial")
	s.addLegacy(tb)
	s.Commits["c2"] = s.Repo.Commit(tb, "benchmark: A4000 and others")
	add("unreviewed", resulttest.Options{GPU: "NVIDIA GeForce RTX 4090", Quant: "IQ3_XXS"})
	// Markup wherever a valid result can carry it (the track is an enum).
	add("approvedMarkup", resulttest.Options{GPU: "NVIDIA GeForce RTX 3060 " + Payload("gpu"), Quant: "Q8_0 " + Payload("quantization"),
		TrackNotes: Payload("track-notes"), Model: NamePayload("model-id"), Command: Markup})
	s.ListedAsText["approvedMarkup"] = s.plantRendered(tb, "approvedMarkup")
	add("tampered", resulttest.Options{GPU: "NVIDIA GeForce RTX 3090", Quant: "IQ3_XXS"})
	s.addHostile(tb, out)
	s.Commits["c3"] = s.Repo.Commit(tb, "benchmark: four more")
	entry := func(role, commit string) map[string]any {
		data, _ := os.ReadFile(filepath.Join(s.Repo.Dir, s.Folders[role], "results.json"))
		return map[string]any{
			"run_id": s.RunIDs[role], "protocol_id": protocolID, "results_path": s.Folders[role] + "/results.json",
			"results_sha256": sha256Hex(data), "evidence_commit": commit, "review_pr": "https://example.invalid/pr/" + role,
			"reviewed_by": "maintainer", "reviewed_at": "2026-11-02T10:00:00Z", "verification": "evidence-reviewed",
			"reproduction_run_ids": []string{},
		}
	}
	markup := entry("approvedMarkup", s.Commits["c3"])
	// An https link (anything else fails verification) that carries markup.
	markup["review_pr"] = `https://example.invalid/pr/x?q="'><img/src=x/onerror=window.__pwned='review-pr'>`
	markup["reviewed_by"] = Payload("reviewed-by")
	tampered := entry("tampered", s.Commits["c3"])
	tampered["results_sha256"] = strings.Repeat("0", 64)
	m := map[string]any{"format": "strata-approved-benchmarks", "schema_version": 1, "entries": []any{
		entry("approved3060", s.Commits["c1"]), entry("approvedA4000", s.Commits["c2"]),
		markup, tampered, entry("nonconforming", s.Commits["c2"]),
	}}
	data, _ := json.MarshalIndent(m, "", "  ")
	s.Repo.Write(tb, "bench/approved.json", data)
	s.Commits["c4"] = s.Repo.Commit(tb, "approve")
	p := filepath.Join(s.Repo.Dir, s.Folders["approved3060"], "outputs.jsonl")
	b, _ := os.ReadFile(p)
	s.Repo.Write(tb, filepath.Join(s.Folders["approved3060"], "outputs.jsonl"), append(b, []byte("{}\n")...))
	// The name of a changed file is shown too.
	s.Repo.Write(tb, filepath.Join(s.Folders["approvedMarkup"], NamePayload("approvedMarkup-unlisted")), script("changed"))
	s.Commits["c5"] = s.Repo.Commit(tb, "edit evidence after review")
	return s
}

// addLegacy writes a report in another format: no results.json, a README
// with markup and a page a browser renders.
func (s *Scenario) addLegacy(tb testing.TB) {
	tb.Helper()
	s.Folders["legacy"] = "bench/results/2025-06-01-legacy-3060"
	files := map[string][]byte{
		"README.md":  []byte("# Old community report\n\n40 tok/s on my 3060 " + Payload("legacy-readme") + "\n"),
		"bench.json": []byte(`{"schema": 1, "tok_s": 40}`),
		"page.html":  script("legacy page.html"),
	}
	for name, data := range files {
		s.Repo.Write(tb, s.Folders["legacy"]+"/"+name, data)
	}
	s.Unpublishable["legacy"] = []string{"bench.json", "page.html"}
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
