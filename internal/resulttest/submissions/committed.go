package submissions

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-git/go-git/v5"
	"github.com/strata-bench/strata/internal/resulttest"
)

// The committed scenario: BuildScenario's repository, cloned bare into the
// checkout's testdata/site-repo.git, and what a test needs to know of it in
// testdata/site-repo.json. Tests that only read a scenario clone it
// (milliseconds) instead of building it (nine simulated runs).

// metadata is the Scenario without its repository.
type metadata struct {
	RunIDs        map[string]string   `json:"run_ids"`
	Folders       map[string]string   `json:"folders"`
	Commits       map[string]string   `json:"commits"`
	Unpublishable map[string][]string `json:"unpublishable"`
	ListedAsText  map[string][]string `json:"listed_as_text"`
}

// CommittedRepo is the path of the committed bare test repository.
func CommittedRepo(tb testing.TB) string {
	return filepath.Join(resulttest.Testdata(tb), "site-repo.git")
}

// Committed is the committed scenario in a working clone of its own (a
// test may write to it).
func Committed(tb testing.TB) *Scenario {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join(resulttest.Testdata(tb), "site-repo.json"))
	if err != nil {
		tb.Fatalf("the committed scenario (regenerate it: go test ./internal/site -run TestUpdateTestRepository -update): %v", err)
	}
	var m metadata
	if err := json.Unmarshal(data, &m); err != nil {
		tb.Fatal(err)
	}
	dir := tb.TempDir()
	r, err := git.PlainClone(dir, false, &git.CloneOptions{URL: CommittedRepo(tb), ReferenceName: "refs/heads/main"})
	if err != nil {
		tb.Fatal(err)
	}
	head, err := r.Head()
	if err != nil {
		tb.Fatal(err)
	}
	last, err := r.CommitObject(head.Hash())
	if err != nil {
		tb.Fatal(err)
	}
	return &Scenario{Repo: &Repo{Dir: dir, r: r, when: last.Author.When}, RunIDs: m.RunIDs, Folders: m.Folders, Commits: m.Commits,
		Unpublishable: m.Unpublishable, ListedAsText: m.ListedAsText}
}

// WriteMetadata writes what Committed needs to know of s beside the bare
// repository.
func (s *Scenario) WriteMetadata(tb testing.TB) {
	tb.Helper()
	data, err := json.MarshalIndent(metadata{RunIDs: s.RunIDs, Folders: s.Folders, Commits: s.Commits,
		Unpublishable: s.Unpublishable, ListedAsText: s.ListedAsText}, "", "  ")
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(resulttest.Testdata(tb), "site-repo.json"), append(data, '\n'), 0o644); err != nil {
		tb.Fatal(err)
	}
}
